package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// findPG finds a PostgreSQL server program on the PATH or in Debian's versioned folders.
func findPG(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}

// startPostgres starts a private PostgreSQL cluster on 127.0.0.1 for the test (trust
// authentication, no fsync) and returns its URI; it is stopped when the test ends. .ci/run
// installs PostgreSQL; where it is missing outside CI the test is skipped with the reason.
func startPostgres(t *testing.T) string {
	t.Helper()
	initdb, pgctl := findPG("initdb"), findPG("pg_ctl")
	if initdb == "" || pgctl == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL's initdb and pg_ctl are not installed: .ci/run installs the postgresql package")
		}
		t.Skip("PostgreSQL is not installed (apt-get install postgresql); CI runs this test")
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
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
}

// TestSharedCatalogOnPostgres: a scheduled pipeline, the same spec as a local one but for the
// catalog block, loads, skips a done window and reads back through a PostgreSQL catalog.
func TestSharedCatalogOnPostgres(t *testing.T) {
	uri := startPostgres(t)
	l := newLakeOn(t, 2, fmt.Sprintf(`{"type": "sql", "uri": %q, "identifier": "shop", "warehouse_path": "wh"}`, uri))
	for i := 0; i < 2; i++ {
		code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1))
		if code != 0 {
			t.Fatalf("run %d: %d %s %s", i, code, out, errs)
		}
		if i == 1 && !strings.Contains(out+errs, "skipped") {
			t.Errorf("the second run of a published window did not skip: %s %s", out, errs)
		}
	}
	l.check(t, "append.json", []int{1})

	// ldp catalog test walks what ldp needs of the catalog.
	code, out, errs := l.run(t, nil, "catalog", "test", "append.json")
	if code != 0 || !strings.Contains(out, "ok    drop scratch table shop.ldp_catalog_check_") {
		t.Errorf("catalog test: %d %s %s", code, out, errs)
	}
	// A catalog that cannot be reached fails in words, and a password in its URI never prints.
	l.write(t, "down.json", `{"identifier": "down", "metadata": {"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "down", "format": "ICEBERG",
		           "catalog": {"type": "sql", "uri": "postgres://postgres:s3cr3t-pass@127.0.0.1:1/postgres?sslmode=disable", "identifier": "shop"}}}}`)
	code, out, errs = l.run(t, nil, "catalog", "test", "down.json")
	if code != 1 || !strings.Contains(out, "FAIL  connect to catalog shop") {
		t.Errorf("catalog test of an unreachable catalog: %d %s %s", code, out, errs)
	}
	if strings.Contains(out+errs, "s3cr3t-pass") {
		t.Errorf("the password printed: %s %s", out, errs)
	}
}
