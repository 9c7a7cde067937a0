package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/testpg"
)

// startPostgres starts a private PostgreSQL cluster on 127.0.0.1 for the test and returns its
// URI; it is stopped when the test ends (internal/testpg).
func startPostgres(t *testing.T) string {
	t.Helper()
	return testpg.Start(t).URI
}

// TestStalledPostgresCatalog: the catalog's server is stopped (SIGSTOP): it accepts the
// connection and never answers. ldp run ends with an error naming the catalog and what to
// check within its connect timeout (10 s unless the uri sets one), and, with a long connect
// timeout set in the uri, stops promptly on SIGTERM. It waited in pgconn's TLS start for as
// long as the server was stopped (11 minutes in one try), deaf to SIGTERM.
func TestStalledPostgresCatalog(t *testing.T) {
	pg := testpg.Start(t)
	uri, pid := pg.URI, pg.PID(t)
	// As users write it: TLS tried first (sslmode prefer), where it hung.
	uri = strings.TrimSuffix(uri, "?sslmode=disable")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // before the cluster's stop
	l := newLakeOn(t, 1, fmt.Sprintf(`{"type": "sql", "uri": %q, "identifier": "shop", "warehouse_path": "wh"}`, uri))

	start := func(env []string, spec string) (*exec.Cmd, *syncBuffer, chan error) {
		c := l.cmd(env, "run", spec, "--window", dayWindow(1))
		var out syncBuffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		return c, &out, done
	}
	_, out, done := start(nil, "append.json")
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), "open catalog shop at postgres://postgres@127.0.0.1:") ||
			!strings.Contains(out.String(), "the server did not answer in time") || !strings.Contains(out.String(), "check that it is running and reachable") {
			t.Fatalf("ldp run against a stopped server: %v, want a failure naming the catalog and what to check\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("ldp run against a stopped server still waits after 2 minutes: %s", out.String())
	}

	l.write(t, "long.json", fmt.Sprintf(`{"identifier": "long", "metadata": {"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "long", "format": "ICEBERG", "catalog": {"type": "sql", "uri": %q, "identifier": "shop", "warehouse_path": "wh"}}}}`, uri+"?connect_timeout=600"))
	c, out, done := start(nil, "long.json")
	time.Sleep(3 * time.Second) // well into its wait for the server
	c.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 || !strings.Contains(out.String(), "open catalog shop at") {
			t.Fatalf("ldp run after SIGTERM: %v, want a failure naming the catalog\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("ldp run ignored SIGTERM while the catalog's server was stopped: %s", out.String())
	}
}

// TestSharedCatalogOnPostgres: a scheduled pipeline, the same spec as a local one but for the
// catalog block, loads, skips a done window and reads back through a PostgreSQL catalog.
func TestSharedCatalogOnPostgres(t *testing.T) {
	t.Parallel()
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
	// A catalog that cannot be reached fails in words, and its password (from PGPASSWORD) never
	// prints.
	l.write(t, "down.json", `{"identifier": "down", "metadata": {"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "down", "format": "ICEBERG",
		           "catalog": {"type": "sql", "uri": "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable", "identifier": "shop"}}}}`)
	code, out, errs = l.run(t, []string{"PGPASSWORD=s3cr3t-pass"}, "catalog", "test", "down.json")
	if code != 1 || !strings.Contains(out, "FAIL  connect to catalog shop") {
		t.Errorf("catalog test of an unreachable catalog: %d %s %s", code, out, errs)
	}
	if strings.Contains(out+errs, "s3cr3t-pass") {
		t.Errorf("the password printed: %s %s", out, errs)
	}
	// A password written in the URI is refused before anything connects, and not echoed.
	l.write(t, "pw.json", `{"identifier": "pw", "metadata": {"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "pw", "format": "ICEBERG",
		           "catalog": {"type": "sql", "uri": "postgres://postgres:s3cr3t-pass@127.0.0.1:1/postgres?sslmode=disable", "identifier": "shop"}}}}`)
	code, out, errs = l.run(t, nil, "catalog", "test", "pw.json")
	if code != 1 || !strings.Contains(errs, "a password never goes in a catalog uri") || strings.Contains(out+errs, "s3cr3t-pass") {
		t.Errorf("catalog test of a spec with a password in its uri: %d %s %s", code, out, errs)
	}
}

// leasedFolder is a folder of n daily scheduled dataset configs whose tables are in the
// PostgreSQL catalog at uri, each due for 2026-08-01 at leaseNow.
func leasedFolder(t *testing.T, uri string, n int) *lakeDir {
	t.Helper()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	os.MkdirAll(filepath.Join(l.dir, "specs", "drops"), 0o755)
	l.write(t, "specs/drops/orders_2026-08-01.csv", "order_id,ordered_at,amount\n1,2026-08-01 09:00:00,10\n2,2026-08-01 10:00:00,20\n")
	wh := filepath.Join(l.dir, "warehouse")
	for i := 0; i < n; i++ {
		l.write(t, fmt.Sprintf("specs/feed_%d.json", i), fmt.Sprintf(`{"identifier": "feed_%d", "metadata": {"schedule": "0 1 * * *",
			"window": {"size": "day", "column": "ordered_at"},
			"source": {"format": "CSV", "path": "drops/orders_{window_start:%%Y-%%m-%%d}.csv"},
			"target": {"name": "feed_%d", "format": "ICEBERG", "catalog": {"type": "sql", "uri": %q, "identifier": "shop", "warehouse_path": %q}}}}`, i, i, uri, wh))
	}
	return l
}

const leaseNow = "2026-08-02T12:00:00Z"

// startedRuns counts the workflow runs in the folder's ledger by workflow, and returns the
// run id of each workflow's first run.
func startedRuns(t *testing.T, l *lakeDir) (map[string]int, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.dir, "specs", ".ldp", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	counts, first := map[string]int{}, map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Type    string `json:"type"`
			RunID   string `json:"run_id"`
			Payload struct {
				Workflow string `json:"workflow"`
			} `json:"payload"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "workflow.started" {
			counts[e.Payload.Workflow]++
			if first[e.Payload.Workflow] == "" {
				first[e.Payload.Workflow] = e.RunID
			}
		}
	}
	return counts, first
}

// TestTwoTickersDivideWindowsByLease: two ldp processes tick one folder at once with
// --leases: every due window is published once, each run by one process only.
func TestTwoTickersDivideWindowsByLease(t *testing.T) {
	t.Parallel()
	uri := startPostgres(t)
	l := leasedFolder(t, uri, 6)
	l.together(t, [][]string{nil, nil}, "schedule", "tick", "specs", "--leases", "--now", leaseNow, "--json")
	counts, _ := startedRuns(t, l)
	for i := 0; i < 6; i++ {
		if n := counts[fmt.Sprintf("feed_%d", i)]; n != 1 {
			t.Errorf("feed_%d's window was run %d times, want once", i, n)
		}
	}
	code, out, errs := l.run(t, nil, "diff", "-f", "specs", "--now", leaseNow)
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("after both ticks: %d %s %s", code, out, errs)
	}
}

// TestLeaseOutlivesADeadHolder: a ticker stops mid-window holding the window's lease; another
// ticker leaves the window alone while the lease lasts, then takes it over as the next attempt
// of the same run, and the window's key is on main once.
func TestLeaseOutlivesADeadHolder(t *testing.T) {
	t.Parallel()
	uri := startPostgres(t)
	l := leasedFolder(t, uri, 1)
	// The holder's lease lasts long enough for another ldp process to start and look while it
	// lasts: with 2 s, a loaded machine took longer than that to start the second ticker, which
	// then found the lease expired and took the window over.
	const ttl = 20 * time.Second
	a := l.cmd([]string{"LDP_FAULT=staged:stop"}, "schedule", "tick", "specs", "--leases", "--lease-ttl", ttl.String(), "--now", leaseNow)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for procState(a.Process.Pid) != 'T' {
		if time.Now().After(deadline) {
			t.Fatal("the first ticker never reached the staged point")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The lease was taken or last renewed before the holder stopped.
	expired := time.Now().Add(ttl + 500*time.Millisecond)
	code, out, errs := l.run(t, nil, "schedule", "tick", "specs", "--leases", "--lease-ttl", "2s", "--now", leaseNow, "--json")
	if code != 0 || !strings.Contains(out, `"leased": 1`) || strings.Contains(out, `"attempt"`) {
		t.Fatalf("while the lease lasts, the window must be left alone: %d %s %s", code, out, errs)
	}
	time.Sleep(time.Until(expired))
	code, out, errs = l.run(t, nil, "schedule", "tick", "specs", "--leases", "--lease-ttl", "2s", "--now", leaseNow, "--json")
	if code != 0 {
		t.Fatalf("take-over tick: %d %s %s", code, out, errs)
	}
	_, first := startedRuns(t, l)
	if !strings.Contains(out, `"run_id": "`+first["feed_0"]+`"`) || !strings.Contains(out, `"attempt": 2`) {
		t.Errorf("the take-over is not attempt 2 of run %s: %s", first["feed_0"], out)
	}
	a.Process.Kill()
	a.Wait()
	code, out, errs = l.run(t, nil, "commits", "specs/feed_0.json", "--json")
	if code != 0 || strings.Count(out, `"idempotency_key"`) != 1 {
		t.Errorf("keys on main after the take-over: %d %s %s", code, out, errs)
	}
}

// writeRecentDrops gives a leased folder's specs the drops ldp watch finds due by the real
// clock: yesterday's (UTC), and the day before's, due between midnight and the 01:00 fire.
func writeRecentDrops(t *testing.T, l *lakeDir) {
	t.Helper()
	for back := 1; back <= 2; back++ {
		day := time.Now().UTC().AddDate(0, 0, -back).Format("2006-01-02")
		l.write(t, "specs/drops/orders_"+day+".csv", "order_id,ordered_at,amount\n1,"+day+" 09:00:00,10\n")
	}
}

// TestTwoWatchersDivideWindowsByLease: two ldp watch processes with --leases on one folder
// publish every due window once, each window run by one of them.
func TestTwoWatchersDivideWindowsByLease(t *testing.T) {
	t.Parallel()
	uri := startPostgres(t)
	l := leasedFolder(t, uri, 4)
	writeRecentDrops(t, l)
	var logs [2]*syncBuffer
	var watchers []*exec.Cmd
	for i := range logs {
		logs[i] = &syncBuffer{}
		w := l.cmd(nil, "watch", "specs", "--leases", "--resync", "1h")
		w.Stdout, w.Stderr = logs[i], logs[i]
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		watchers = append(watchers, w)
	}
	defer func() {
		for _, w := range watchers {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
		}
	}()
	both := &syncBuffer{}
	waitFor(t, "every due window published", 90*time.Second, func() bool {
		code, out, _ := l.run(t, nil, "diff", "-f", "specs")
		both = &syncBuffer{}
		both.Write([]byte(logs[0].String() + logs[1].String()))
		return code == 0 && strings.Contains(out, "nothing to do")
	}, both)
	counts, _ := startedRuns(t, l)
	for i := 0; i < 4; i++ {
		if n := counts[fmt.Sprintf("feed_%d", i)]; n != 1 {
			t.Errorf("feed_%d's window was run %d times, want once", i, n)
		}
	}
}

// TestWatcherTakesOverAKilledWatcher: an ldp watch process is killed (SIGKILL) mid-window,
// after staging, holding the window's lease; another watcher leaves the window alone until the
// lease expires, then finishes it as attempt 2 of the same run, and the key is on main once.
func TestWatcherTakesOverAKilledWatcher(t *testing.T) {
	t.Parallel()
	uri := startPostgres(t)
	l := leasedFolder(t, uri, 1)
	writeRecentDrops(t, l)
	first := &syncBuffer{}
	a := l.cmd([]string{"LDP_FAULT=staged:kill"}, "watch", "specs", "--leases", "--lease-ttl", "3s")
	a.Stdout, a.Stderr = first, first
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	a.Wait() // killed by its own fault hook, right after staging
	second := &syncBuffer{}
	b := l.cmd(nil, "watch", "specs", "--leases", "--lease-ttl", "3s", "--resync", "1s")
	b.Stdout, b.Stderr = second, second
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { b.Process.Signal(syscall.SIGTERM); b.Wait() }()
	waitFor(t, "the killed watcher's window finished by the other", 90*time.Second, func() bool {
		code, out, _ := l.run(t, nil, "diff", "-f", "specs")
		return code == 0 && strings.Contains(out, "nothing to do")
	}, second)
	b.Process.Signal(syscall.SIGTERM)
	b.Wait()

	ledger, err := os.ReadFile(filepath.Join(l.dir, "specs", ".ldp", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	attempts := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(ledger)), "\n") {
		var e struct {
			Type    string `json:"type"`
			RunID   string `json:"run_id"`
			Attempt int    `json:"attempt"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "workflow.started" {
			attempts[e.RunID] = append(attempts[e.RunID], e.Attempt)
		}
	}
	if len(attempts) != 1 {
		t.Fatalf("want one run of the window, taken over; got %v\nfirst watcher:\n%s\nsecond:\n%s", attempts, first, second)
	}
	for run, as := range attempts {
		if fmt.Sprint(as) != "[1 2]" {
			t.Errorf("run %s: attempts %v, want [1 2] (the take-over is the next attempt of the same run)", run, as)
		}
	}
	code, out, errs := l.run(t, nil, "commits", "specs/feed_0.json", "--json")
	if code != 0 || strings.Count(out, `"idempotency_key"`) != 1 {
		t.Errorf("keys on main after the take-over: %d %s %s", code, out, errs)
	}
}
