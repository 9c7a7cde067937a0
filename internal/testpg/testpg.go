// Package testpg starts a private PostgreSQL cluster on 127.0.0.1 for a test (trust
// authentication, no fsync), for the tests of the shared catalog: cmd/ldp's processes and
// internal/lake's stall tests use the same server. Only tests import it.
package testpg

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Cluster is a running server: its uri (sslmode=disable) and its data folder.
type Cluster struct {
	URI  string
	Data string
}

// program finds a PostgreSQL server program on the PATH or in Debian's versioned folders.
func program(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}

// Start starts a cluster, stopped when the test ends. Where PostgreSQL is missing the test is
// skipped with the reason, except in CI (CI set), where .ci/run installs it and it fails.
func Start(t testing.TB) Cluster {
	t.Helper()
	initdb, pgctl := program("initdb"), program("pg_ctl")
	if initdb == "" || pgctl == "" {
		if os.Getenv("CI") == "" {
			t.Skip("PostgreSQL's server is not installed (apt-get install postgresql); CI installs it and runs this test")
		}
		t.Fatal("PostgreSQL's server is not installed: .ci/run installs it (apt-get install postgresql)")
	}
	// Not t.TempDir: the server runs as the postgres user, which must reach the folder, and
	// the socket path must stay short.
	dir, err := os.MkdirTemp("", "ldp-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	as := func(args ...string) *exec.Cmd {
		if os.Geteuid() == 0 {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		}
		return exec.Command(args[0], args[1:]...)
	}
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := as(initdb, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=200", port, dir)
	if out, err := as(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() { as(pgctl, "-D", data, "-m", "immediate", "stop").Run() })
	return Cluster{URI: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), Data: data}
}

// PID is the server's process id, from its postmaster.pid.
func (c Cluster) PID(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// Signal sends sig to the server and to every process it started (the backends that serve
// the connections already open): SIGSTOP stalls it as a hung server or a half-open connection.
func (c Cluster) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	pid := c.PID(t)
	syscall.Kill(pid, sig)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(e.Name()); err == nil {
				syscall.Kill(child, sig)
			}
		}
	}
}
