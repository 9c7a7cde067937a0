package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
)

// ldpCommand returns the path of an "ldp" command for child processes: a link to this test
// binary, which TestMain runs as ldp when it is called by that name.
func ldpCommand(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	link := filepath.Join(dir, "ldp")
	if err := os.Symlink(os.Args[0], link); err != nil {
		t.Fatal(err)
	}
	return link
}

// lake is a folder with daily order drops in one file (ordered_at picks each day's rows) and
// a spec per write mode, each with a table of its own.
type lakeDir struct {
	dir, ldp string
}

func newLake(t *testing.T, days int) *lakeDir {
	t.Helper()
	return newLakeOn(t, days, `{"identifier": "shop"}`)
}

// newLakeOn is newLake with the tables in the catalog the JSON block describes.
func newLakeOn(t *testing.T, days int, catalog string) *lakeDir {
	t.Helper()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	var b strings.Builder
	b.WriteString("order_id,ordered_at,amount\n")
	id := 1
	for d := 0; d < days; d++ {
		for i := 0; i < 5; i++ {
			fmt.Fprintf(&b, "%d,2026-08-%02d %02d:00:00,%d\n", id, d+1, 2*i+1, id*10)
			id++
		}
	}
	l.write(t, "orders.csv", b.String())
	for _, mode := range []string{"append", "overwrite", "upsert"} {
		l.write(t, mode+".json", fmt.Sprintf(`{"identifier": "orders_%s", "metadata": {
			"window": {"size": "day", "column": "ordered_at", "timezone": "Europe/Paris"},
			"source": {"name": "orders", "format": "CSV", "path": "orders.csv"},
			"target": {"name": "orders_%s", "format": "ICEBERG", "write_mode": %q, "join_cols": ["order_id"],
			           "catalog": %s},
			"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["order_id"]}]}}`, mode, mode, mode, catalog))
	}
	return l
}

func (l *lakeDir) write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(l.dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (l *lakeDir) cmd(env []string, args ...string) *exec.Cmd {
	c := exec.Command(l.ldp, args...)
	c.Dir = l.dir
	c.Env = append(os.Environ(), env...)
	return c
}

// together starts one ldp process per entry of envs (each with that extra environment), all
// released at once by a barrier file, and waits for them. A process that fails fails the test.
func (l *lakeDir) together(t *testing.T, envs [][]string, args ...string) {
	t.Helper()
	barrier := filepath.Join(l.dir, fmt.Sprintf(".go-%d", time.Now().UnixNano()))
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for _, env := range envs {
		c := exec.Command("sh", "-c", fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.005; done; exec "$@"`, barrier), "sh", l.ldp)
		c.Args = append(c.Args, args...)
		c.Dir, c.Env = l.dir, append(os.Environ(), env...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, c), append(outs, &out)
	}
	os.WriteFile(barrier, nil, 0o644)
	defer os.Remove(barrier)
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: ldp %s: %v\n%s", i, strings.Join(args, " "), err, outs[i])
		}
	}
}

// run runs ldp to completion and returns its exit code and output.
func (l *lakeDir) run(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	c := l.cmd(env, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// commits is what ldp commits --json says of spec's table (run with env): the publishes on
// main in its order, and how many of them carry each key, which exactly-once holds at one.
func (l *lakeDir) commits(t *testing.T, env []string, spec string) ([]commitRow, map[string]int) {
	t.Helper()
	code, out, errs := l.run(t, env, "commits", spec, "--json")
	if code != 0 {
		t.Fatalf("ldp commits: %d %s", code, errs)
	}
	var commits []commitRow
	if err := json.Unmarshal([]byte(out), &commits); err != nil {
		t.Fatalf("ldp commits --json: %v\n%s", err, out)
	}
	keys := map[string]int{}
	for _, c := range commits {
		keys[c.Key]++
	}
	return commits, keys
}

// check verifies the exactly-once state of a table: each key on main once, and exactly the
// rows of the published days, once each.
func (l *lakeDir) check(t *testing.T, spec string, days []int) {
	t.Helper()
	commits, seen := l.commits(t, nil, spec)
	if len(commits) != len(days) || len(seen) != len(days) {
		t.Errorf("%s: %d publishes of %d keys on main, want %d of %d: %v", spec, len(commits), len(seen), len(days), len(days), seen)
	}
	code, out, errs := l.run(t, nil, "query", spec, "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM "+strings.TrimSuffix("orders_"+spec, ".json"), "-o", "csv")
	if code != 0 {
		t.Fatalf("ldp query: %s", errs)
	}
	want := fmt.Sprintf("n,ids\n%d,%d\n", 5*len(days), 5*len(days))
	if out != want {
		t.Errorf("%s: rows %q, want %q (no lost and no repeated rows)", spec, out, want)
	}
}

func dayWindow(day int) string { return fmt.Sprintf("2026-08-%02d/2026-08-%02d", day, day+1) }

// TestRaceOfProcesses: N processes (LDP_RACE_PROCS, default 4) publish the same windows at
// once, in each write mode, over several rounds. Each key reaches main once and no row is lost
// or repeated.
func TestRaceOfProcesses(t *testing.T) {
	t.Parallel()
	procs := 4
	if v, err := strconv.Atoi(os.Getenv("LDP_RACE_PROCS")); err == nil && v > 0 {
		procs = v
	}
	race(t, newLake(t, 4), procs)
}

// TestRaceOfProcessesOnPostgresAndS3: the same race with 8 processes, the tables in a shared
// catalog on a real PostgreSQL server and their files in an S3 bucket, where no file lock keeps
// writers apart: the protocol alone does. Each process has its own local cache, as a process
// on another machine would.
func TestRaceOfProcessesOnPostgresAndS3(t *testing.T) {
	uri := startPostgres(t)
	endpoint, _ := startS3(t)
	race(t, newLakeOn(t, 4, sharedCatalogJSON(uri, endpoint, "shop")), 8)
}

// race has procs processes publish the same windows at once, in each write mode, over two
// rounds of two days, and checks each table.
func race(t *testing.T, l *lakeDir, procs int) {
	t.Helper()
	const rounds, perRound = 2, 2
	for _, mode := range []string{"append", "overwrite", "upsert"} {
		var published []int
		for round := 0; round < rounds; round++ {
			days := []int{}
			for d := 1; d <= perRound; d++ {
				days = append(days, round*perRound+d)
			}
			barrier := filepath.Join(l.dir, fmt.Sprintf("go-%s-%d", mode, round))
			var wg sync.WaitGroup
			errs := make(chan string, procs)
			for p := 0; p < procs; p++ {
				var script strings.Builder
				// Every process waits for the barrier file, then publishes the round's days.
				fmt.Fprintf(&script, "while [ ! -e %s ]; do sleep 0.005; done", barrier)
				for _, d := range days {
					fmt.Fprintf(&script, " && %s run %s.json --window %s", l.ldp, mode, dayWindow(d))
				}
				c := exec.Command("sh", "-c", script.String())
				c.Dir, c.Env = l.dir, append(os.Environ(), fmt.Sprintf("LDP_CACHE_DIR=%s/cache-%d", l.dir, p))
				var out bytes.Buffer
				c.Stdout, c.Stderr = &out, &out
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := c.Wait(); err != nil {
						errs <- fmt.Sprintf("%v: %s", err, out.String())
					}
				}()
			}
			time.Sleep(50 * time.Millisecond)
			os.WriteFile(barrier, nil, 0o644)
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Errorf("%s round %d: a process failed: %s", mode, round, e)
			}
			published = append(published, days...)
		}
		l.check(t, mode+".json", published)
	}
}

func procState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2]
	}
	return 0
}

// TestZombieAttemptCannotPublish: attempt 1 stops (SIGSTOP) right after staging; attempt 2 of
// the same run fences it and publishes; attempt 1, resumed, ends with the non-retriable fenced
// error and the window is on main once.
func TestZombieAttemptCannotPublish(t *testing.T) {
	t.Parallel()
	l := newLake(t, 1)
	zombie := l.cmd([]string{"LDP_FAULT=staged:stop"}, "run", "append.json", "--window", dayWindow(1), "--run-id", "run-z", "--attempt", "1")
	var zout bytes.Buffer
	zombie.Stdout, zombie.Stderr = &zout, &zout
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for procState(zombie.Process.Pid) != 'T' {
		if time.Now().After(deadline) {
			zombie.Process.Kill()
			t.Fatalf("attempt 1 never stopped after staging: %s", zout.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1), "--run-id", "run-z", "--attempt", "2")
	if code != 0 || !strings.Contains(out, ": published") {
		refs := ""
		if cat, err := lake.Open(context.Background(), &v1.Catalog{Identifier: "shop"}, l.dir); err == nil {
			if tbl, err := cat.Load(context.Background(), lake.Ref{Namespace: "shop", Name: "orders_append"}); err == nil {
				for name, r := range tbl.Metadata().Refs() {
					refs += fmt.Sprintf("%s=%d ", name, r.SnapshotID)
				}
				refs += fmt.Sprintf("current=%d", tbl.CurrentSnapshot().SnapshotID)
			}
			cat.Close()
		}
		t.Fatalf("attempt 2: exit %d\n%s%s\nzombie state %c\nrefs: %s", code, out, errs, procState(zombie.Process.Pid), refs)
	}
	zombie.Process.Signal(syscall.SIGCONT)
	err := zombie.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(zout.String(), "attempt 1 of run run-z was fenced by a later attempt") {
		t.Fatalf("resumed attempt 1: %v\n%s", err, zout.String())
	}
	l.check(t, "append.json", []int{1})
}

// TestCrashesConverge: a process killed (SIGKILL) after staging, or after publishing but before
// it returns, leaves a state that running again turns into exactly one effect per key.
func TestCrashesConverge(t *testing.T) {
	t.Parallel()
	l := newLake(t, 2)
	for _, mode := range []string{"append", "overwrite", "upsert"} {
		for day, point := range map[int]string{1: "staged", 2: "published"} {
			code, _, errs := l.run(t, []string{"LDP_FAULT=" + point + ":kill"}, "run", mode+".json", "--window", dayWindow(day), "--run-id", fmt.Sprintf("crash-%d", day))
			if code != -1 {
				t.Fatalf("%s: the process killed at %s exited %d: %s", mode, point, code, errs)
			}
			// The retry of the same run is its next attempt.
			code, out, errs := l.run(t, nil, "run", mode+".json", "--window", dayWindow(day), "--run-id", fmt.Sprintf("crash-%d", day), "--attempt", "2")
			want := ": published"
			if point == "published" {
				want = ": skipped_duplicate"
			}
			if code != 0 || !strings.Contains(out, want) {
				t.Fatalf("%s after a kill at %s: exit %d, want %q\n%s%s", mode, point, code, want, out, errs)
			}
		}
		l.check(t, mode+".json", []int{1, 2})
	}
}

// TestFenceHoldsAcrossKeys: the fence is state in the table, not the absence of a branch.
// Attempt 3 of a run publishes the window under a key of its own; attempt 1 of the same run,
// run afterwards under another key, is fenced and writes nothing (it used to publish the window
// a second time and exit 0).
func TestFenceHoldsAcrossKeys(t *testing.T) {
	t.Parallel()
	l := newLake(t, 1)
	code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1), "--run-id", "r1", "--attempt", "3", "--idempotency-key", "k3")
	if code != 0 || !strings.Contains(out, ": published") {
		t.Fatalf("attempt 3: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = l.run(t, nil, "run", "append.json", "--window", dayWindow(1), "--run-id", "r1", "--attempt", "1", "--idempotency-key", "k1")
	if code != 1 || !strings.Contains(errs, "attempt 1 of run r1 was fenced by a later attempt") {
		t.Fatalf("attempt 1 after attempt 3: exit %d, want 1 and fenced\n%s%s", code, out, errs)
	}
	l.check(t, "append.json", []int{1})
}

// TestStalledAttemptCannotPublishUnderANewKey: attempt 1 is stopped (SIGSTOP) right after its
// extract; the drop is corrected and attempt 2 of the same run redoes the window under a new
// key and publishes; attempt 1, resumed, is fenced. In append mode the window's rows are on
// main once (they were there twice); in overwrite mode they are the corrected drop's (the
// stalled attempt's stale rows replaced them).
func TestStalledAttemptCannotPublishUnderANewKey(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"append", "overwrite"} {
		t.Run(mode, func(t *testing.T) {
			l := newLake(t, 1)
			zombie, zout := l.startStopped(t, "extracted", "run", mode+".json", "--window", dayWindow(1), "--run-id", "r-stall", "--attempt", "1")
			// The corrected drop: the same orders, amounts times 100.
			l.write(t, "orders.csv", "order_id,ordered_at,amount\n1,2026-08-01 01:00:00,1000\n2,2026-08-01 03:00:00,2000\n3,2026-08-01 05:00:00,3000\n4,2026-08-01 07:00:00,4000\n5,2026-08-01 09:00:00,5000\n")
			code, out, errs := l.run(t, nil, "run", mode+".json", "--window", dayWindow(1), "--run-id", "r-stall", "--attempt", "2", "--idempotency-key", "orders-2026-08-01-v2")
			if code != 0 || !strings.Contains(out, ": published") {
				t.Fatalf("attempt 2: exit %d\n%s%s", code, out, errs)
			}
			zombie.Process.Signal(syscall.SIGCONT)
			err := zombie.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(zout.String(), "attempt 1 of run r-stall was fenced by a later attempt") {
				t.Fatalf("resumed attempt 1: %v, want exit 1 and fenced\n%s", err, zout.String())
			}
			l.check(t, mode+".json", []int{1})
			code, out, errs = l.run(t, nil, "query", mode+".json", "SELECT sum(amount) AS total FROM orders_"+mode, "-o", "csv")
			if code != 0 || out != "total\n15000\n" {
				t.Fatalf("the window's rows: exit %d %q, want the corrected drop's total 15000\n%s", code, out, errs)
			}
		})
	}
}

// startStopped starts ldp with args and waits until it stops itself (SIGSTOP) at the fault
// point; the process is killed when the test ends.
func (l *lakeDir) startStopped(t *testing.T, point string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	c := l.cmd([]string{"LDP_FAULT=" + point + ":stop"}, args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	waitStopped(t, c, &out)
	return c, &out
}

// waitStopped waits until the process c has stopped itself at its fault point.
func waitStopped(t *testing.T, c *exec.Cmd, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for procState(c.Process.Pid) != 'T' {
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("the process never reached its fault point: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLockWaitsEnd: an overwrite stopped (SIGSTOP) while it holds its table's lock does not
// block the others forever. A second overwrite says every few seconds who holds the lock (the
// pid, host, run and attempt the holder wrote into it) and gives up after --lock-timeout with a
// retriable error; a third, waiting, ends at once on SIGTERM (it ignored SIGTERM and SIGINT and
// waited 876 s). Neither writes anything; once the holder resumes, it publishes.
func TestLockWaitsEnd(t *testing.T) {
	t.Parallel()
	l := newLake(t, 2)
	holder, hout := l.startStopped(t, "staged", "run", "overwrite.json", "--window", dayWindow(1), "--run-id", "holder", "--attempt", "1")

	code, out, errs := l.run(t, nil, "run", "overwrite.json", "--window", dayWindow(2), "--lock-timeout", "6s")
	wantHolder := fmt.Sprintf("held by pid %d on ", holder.Process.Pid)
	if code != 1 || !strings.Contains(errs, "waiting 5s for the lock on shop.orders_overwrite") || !strings.Contains(errs, wantHolder) ||
		!strings.Contains(errs, "run holder attempt 1") || !strings.Contains(errs, "ldp: waited 6s for the lock") {
		t.Fatalf("the second overwrite: exit %d, want 1 after --lock-timeout naming the holder\n%s%s", code, out, errs)
	}

	waiter := l.cmd(nil, "run", "overwrite.json", "--window", dayWindow(2))
	var wout syncBuffer
	waiter.Stdout, waiter.Stderr = &wout, &wout
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	waitFor(t, "the third overwrite to say it waits", 30*time.Second, func() bool { return strings.Contains(wout.String(), "waiting 5s for the lock") }, &wout)
	waiter.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- waiter.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(wout.String(), "stopped waiting for the lock") {
			t.Fatalf("the third overwrite after SIGTERM: %v, want exit 1\n%s", err, wout.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the third overwrite ignored SIGTERM: %s", wout.String())
	}

	holder.Process.Signal(syscall.SIGCONT)
	if err := holder.Wait(); err != nil {
		t.Fatalf("the holder, resumed: %v\n%s", err, hout.String())
	}
	l.check(t, "overwrite.json", []int{1})
}

// TestANewerAttemptDoesNotWaitForAnOlder: attempt 1 of an overwrite is stopped (SIGSTOP)
// after staging, holding its table's lock. Attempt 2 of the same run fences it and publishes
// without waiting for the lock (it waited out --lock-timeout, 5 minutes by default); another
// run still waits for the lock. Attempt 1, resumed, is fenced and writes nothing: the
// window's rows are attempt 2's corrected drop.
func TestANewerAttemptDoesNotWaitForAnOlder(t *testing.T) {
	l := newLake(t, 1)
	zombie, zout := l.startStopped(t, "staged", "run", "overwrite.json", "--window", dayWindow(1), "--run-id", "r-held", "--attempt", "1")
	l.write(t, "orders.csv", "order_id,ordered_at,amount\n1,2026-08-01 01:00:00,1000\n2,2026-08-01 03:00:00,2000\n3,2026-08-01 05:00:00,3000\n4,2026-08-01 07:00:00,4000\n5,2026-08-01 09:00:00,5000\n")

	code, out, errs := l.run(t, nil, "run", "overwrite.json", "--window", dayWindow(1), "--run-id", "other", "--lock-timeout", "3s")
	if code != 1 || !strings.Contains(errs, "ldp: waited 3s for the lock") {
		t.Fatalf("another run while attempt 1 holds the lock: exit %d, want 1 after --lock-timeout\n%s%s", code, out, errs)
	}
	code, out, errs = l.run(t, nil, "run", "overwrite.json", "--window", dayWindow(1), "--run-id", "r-held", "--attempt", "2", "--lock-timeout", "20s")
	if code != 0 || !strings.Contains(out, ": published") || !strings.Contains(errs, "held by an older attempt of run r-held") {
		t.Fatalf("attempt 2 while attempt 1 holds the lock: exit %d, want it published without waiting\n%s%s", code, out, errs)
	}

	zombie.Process.Signal(syscall.SIGCONT)
	err := zombie.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(zout.String(), "attempt 1 of run r-held was fenced by a later attempt") {
		t.Fatalf("resumed attempt 1: %v, want exit 1 and fenced\n%s", err, zout.String())
	}
	l.check(t, "overwrite.json", []int{1})
	code, out, errs = l.run(t, nil, "query", "overwrite.json", "SELECT sum(amount) AS total FROM orders_overwrite", "-o", "csv")
	if code != 0 || out != "total\n15000\n" {
		t.Fatalf("the window's rows: exit %d %q, want attempt 2's total 15000\n%s", code, out, errs)
	}
}

// sqliteHold is a process that holds the write lock of the SQLite database named by its
// argument, as a process stopped inside a catalog commit does, until it is killed.
func sqliteHold() int {
	db, err := sql.Open("sqlite", "file:"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	time.Sleep(time.Hour)
	return 0
}

// TestCatalogBusyNamesTheHolder: a process that holds the local catalog database's write lock
// (one stopped inside a commit) makes a writer fail after the busy timeout with a retriable
// error naming that process (it said only "database is locked (5) (SQLITE_BUSY)"); once the
// holder is gone, the same run publishes.
func TestCatalogBusyNamesTheHolder(t *testing.T) {
	t.Parallel()
	l := newLake(t, 2)
	if code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1)); code != 0 {
		t.Fatalf("first window: %d\n%s%s", code, out, errs)
	}
	hold := exec.Command("sqlite-hold", filepath.Join(l.dir, "warehouse", "shop_catalog.db"))
	var hout syncBuffer
	hold.Stdout, hold.Stderr = &hout, &hout
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	defer hold.Process.Kill()
	waitFor(t, "the holder to take the lock", 30*time.Second, func() bool { return strings.Contains(hout.String(), "held") }, &hout)
	env := []string{"LDP_CATALOG_BUSY_TIMEOUT=1s"}
	code, out, errs := l.run(t, env, "run", "append.json", "--window", dayWindow(2))
	want := fmt.Sprintf("stayed locked by pid %d on ", hold.Process.Pid)
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "sqlite-hold") {
		t.Fatalf("a write while another process holds the catalog: exit %d, want 1 naming pid %d\n%s%s", code, hold.Process.Pid, out, errs)
	}
	hold.Process.Kill()
	hold.Wait()
	if code, out, errs := l.run(t, env, "run", "append.json", "--window", dayWindow(2)); code != 0 || !strings.Contains(out, ": published") {
		t.Fatalf("the same run once the holder is gone: %d\n%s%s", code, out, errs)
	}
	l.check(t, "append.json", []int{1, 2})
}

// TestOrphanCleanupDuringABackfill: maintenance deleting orphans with no age at all, in a
// loop, while a backfill appends: the files of the runs in flight are never taken (it left the
// table unreadable, "No files found that match the pattern .../part-0.parquet", in 2 of 3
// tries), so every window's rows are readable once at the end.
func TestOrphanCleanupDuringABackfill(t *testing.T) {
	t.Parallel()
	const days = 20
	l := newLake(t, days)
	backfill := l.cmd(nil, "backfill", "append.json", "--from", "2026-08-01", "--to", fmt.Sprintf("2026-08-%02d", days+1), "--parallel", "2", "--batch", "2")
	var bout syncBuffer
	backfill.Stdout, backfill.Stderr = &bout, &bout
	if err := backfill.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- backfill.Wait() }()
	sweeps := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("backfill: %v\n%s", err, bout.String())
			}
			finished = true
		default:
			code, out, errs := l.run(t, nil, "maintain", "append.json", "--orphans", "--orphan-age-hours", "0", "--force", "--apply")
			if code != 0 && !strings.Contains(errs, "does not exist yet") {
				t.Fatalf("maintenance during the backfill: exit %d\n%s%s", code, out, errs)
			}
			sweeps++
		}
	}
	if sweeps < 2 {
		t.Logf("only %d sweeps ran during the backfill", sweeps)
	}
	all := make([]int, days)
	for i := range all {
		all[i] = i + 1
	}
	l.check(t, "append.json", all)
}

// TestKilledRunsScratchIsCleared: a run killed with SIGKILL leaves its scratch folder in the
// warehouse (tens of MB for a large extract); the next run removes it, since its process is
// gone, and leaves none of its own.
func TestKilledRunsScratchIsCleared(t *testing.T) {
	t.Parallel()
	l := newLake(t, 2)
	code, _, errs := l.run(t, []string{"LDP_FAULT=staged:kill"}, "run", "append.json", "--window", dayWindow(1), "--run-id", "killed")
	if code != -1 {
		t.Fatalf("the killed run exited %d: %s", code, errs)
	}
	scratch := filepath.Join(l.dir, "warehouse", ".ldp", "tmp")
	if ents, _ := os.ReadDir(scratch); len(ents) == 0 {
		t.Fatal("the killed run left no scratch folder: the test shows nothing")
	}
	if code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(2)); code != 0 {
		t.Fatalf("the next run: %d\n%s%s", code, out, errs)
	}
	if ents, _ := os.ReadDir(scratch); len(ents) != 0 {
		t.Errorf("scratch folders left after the next run: %v", ents)
	}
}
