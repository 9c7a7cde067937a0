package lake

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// startPostgres starts a private PostgreSQL cluster on 127.0.0.1 (trust authentication, no
// fsync), as cmd/ldp's tests do, and returns its uri and the server's process id; it is
// stopped when the test ends. Where PostgreSQL is missing the test is skipped with the reason.
func startPostgres(t *testing.T) (string, int) {
	t.Helper()
	find := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
		if len(m) > 0 {
			return m[len(m)-1]
		}
		return ""
	}
	initdb, pgctl := find("initdb"), find("pg_ctl")
	if initdb == "" || pgctl == "" {
		t.Skip("PostgreSQL's server is not installed (apt-get install postgresql)")
	}
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
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off", port, dir)
	if out, err := as(pgctl, "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "start").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl start: %v\n%s", err, out)
	}
	t.Cleanup(func() { as(pgctl, "-D", data, "-m", "immediate", "stop").Run() })
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), pid
}

// signalCluster sends sig to the server process pid and to every process it started (the
// backends that serve the connections already open).
func signalCluster(pid int, sig syscall.Signal) {
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

// TestStalledPostgresConnection: the catalog's server, and the backend of a connection the
// catalog holds open, are stopped (SIGSTOP), as a server that hangs or a half-open connection
// is. A load ends within the bound the uri's statement_timeout sets (plus a little) with an
// error saying what to check, and a load whose context ends (a SIGTERM) returns at once. It
// waited for as long as the server was stopped.
func TestStalledPostgresConnection(t *testing.T) {
	uri, pid := startPostgres(t)
	ctx := context.Background()
	cat, err := Open(ctx, &v1.Catalog{Type: "sql", URI: uri + "&statement_timeout=2s&connect_timeout=3", Identifier: "lake", WarehousePath: "warehouse"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ref := Ref{Namespace: "lake", Name: "rides"}
	if _, err := cat.Load(ctx, ref); err == nil || !strings.Contains(err.Error(), "does not exist yet") {
		t.Fatalf("load of a table not made yet: %v", err)
	}
	signalCluster(pid, syscall.SIGSTOP)
	t.Cleanup(func() { signalCluster(pid, syscall.SIGCONT) }) // before the cluster's stop

	load := func(ctx context.Context) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := cat.Load(ctx, ref)
			done <- err
		}()
		return done
	}
	select {
	case err := <-load(ctx):
		if err == nil || !strings.Contains(err.Error(), "the server did not answer in time") || !strings.Contains(err.Error(), "check that it is running and reachable") {
			t.Fatalf("load from a stopped server: %v, want an error saying what to check", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("a load from a stopped server still waits after 90 s")
	}

	cctx, cancel := context.WithCancel(ctx)
	done := load(cctx)
	time.Sleep(500 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a load from a stopped server whose context ended succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a load from a stopped server did not end with its context")
	}
}

func TestPostgresDurations(t *testing.T) {
	for v, want := range map[string]time.Duration{"60s": time.Minute, "1500": 1500 * time.Millisecond, "1.5": 1500 * time.Microsecond, "2 min": 2 * time.Minute, "250ms": 250 * time.Millisecond, "1h": time.Hour, "0": 0} {
		if got, ok := pgDuration(v); !ok || got != want {
			t.Errorf("pgDuration(%q) = %s %v, want %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "5 fortnights"} {
		if got, ok := pgDuration(v); ok {
			t.Errorf("pgDuration(%q) = %s, want not a duration", v, got)
		}
	}
}
