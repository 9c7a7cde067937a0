package lake

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// busyTimeout is how long a writer of a local catalog waits for SQLite's lock before it says
// who holds it; LDP_CATALOG_BUSY_TIMEOUT (a Go duration) changes it.
func busyTimeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("LDP_CATALOG_BUSY_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}

// BusyError is a local catalog whose database stayed locked by another process past the busy
// timeout: typically a process stopped (SIGSTOP, a debugger) inside a catalog commit. It is
// retriable: once the holder goes on or ends, a new attempt gets through.
type BusyError struct {
	Path   string
	Holder string
	Err    error
}

func (e *BusyError) Error() string {
	holder := "another process"
	if e.Holder != "" {
		holder = e.Holder
	}
	return fmt.Sprintf("the catalog database %s stayed locked by %s past the busy timeout (%s): if that process is stopped or hung, end it or resume it (kill -CONT), then run again", e.Path, holder, busyTimeout())
}

func (e *BusyError) Unwrap() error   { return e.Err }
func (e *BusyError) Retriable() bool { return true }

// busyCatalog is a local catalog whose errors name the process that holds SQLite's lock
// when a write could not get it.
type busyCatalog struct {
	catalog.Catalog
	path string
}

func (b busyCatalog) hint(err error) error {
	if err == nil || !isBusy(err) {
		return err
	}
	return &BusyError{Path: b.path, Holder: lockHolder(b.path), Err: err}
}

func (b busyCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	m, loc, err := b.Catalog.CommitTable(ctx, id, reqs, updates)
	return m, loc, b.hint(err)
}

func (b busyCatalog) CreateTable(ctx context.Context, id table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	t, err := b.Catalog.CreateTable(ctx, id, sc, opts...)
	return t, b.hint(err)
}

func (b busyCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	t, err := b.Catalog.LoadTable(ctx, id)
	return t, b.hint(err)
}

func (b busyCatalog) CreateNamespace(ctx context.Context, ns table.Identifier, props iceberg.Properties) error {
	return b.hint(b.Catalog.CreateNamespace(ctx, ns, props))
}

// lockHolder names the process that holds a POSIX lock on the SQLite database at path (or
// its -wal or -shm file), from the kernel's table of locks: "pid 123 (ldp run orders.json)".
// "" where that table cannot be read (not Linux) or no lock is held.
func lockHolder(path string) string {
	inodes := map[uint64]bool{}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			inodes[st.Ino] = true
		}
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	self := os.Getpid()
	for _, line := range strings.Split(string(b), "\n") {
		// 1: POSIX  ADVISORY  WRITE 3568 08:01:1234567 0 EOF
		f := strings.Fields(line)
		if len(f) < 6 || (f[1] != "POSIX" && f[1] != "OFDLCK") {
			continue
		}
		dev := strings.Split(f[5], ":")
		pid, err1 := strconv.Atoi(f[4])
		ino, err2 := strconv.ParseUint(dev[len(dev)-1], 10, 64)
		if err1 != nil || err2 != nil || !inodes[ino] || pid == self || pid <= 0 {
			continue
		}
		host, _ := os.Hostname()
		desc := fmt.Sprintf("pid %d on %s", pid, host)
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && len(cmd) > 0 {
			desc += " (" + strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")) + ")"
		}
		return desc
	}
	return ""
}
