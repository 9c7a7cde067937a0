package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/maintain"
)

// expireAll runs maintenance on spec's table as if thirty days had passed: every snapshot but
// main's head expires.
func (l *lakeDir) expireAll(t *testing.T, spec string) {
	t.Helper()
	ctx := context.Background()
	p, err := controllers.LoadPipeline(filepath.Join(l.dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	week := 7
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	ref := lake.RefOf(p.Metadata.Target)
	rep, err := maintain.Run(ctx, cat, ref, maintain.Options{ExpireDays: &week, Now: later, Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Expire) == 0 || len(lake.Ancestry(tbl)) != 1 {
		t.Fatalf("%s: expired %d snapshots, main keeps %d, want only its head", spec, len(rep.Expire), len(lake.Ancestry(tbl)))
	}
}

// TestExpiredWindowsStayDone: windows published, then their snapshots expired by maintenance:
// a re-run of one and a backfill over all are skipped in every write mode, the rows stay once,
// and ldp commits still lists each publish. --replace still redoes a window.
func TestExpiredWindowsStayDone(t *testing.T) {
	l := newLake(t, 3)
	for _, mode := range []string{"append", "overwrite", "upsert"} {
		spec := mode + ".json"
		if code, out, errs := l.run(t, nil, "backfill", spec, "--from", "2026-08-01", "--to", "2026-08-04"); code != 0 {
			t.Fatalf("%s: backfill exited %d\n%s%s", mode, code, out, errs)
		}
		l.expireAll(t, spec)
		code, out, errs := l.run(t, nil, "run", spec, "--window", dayWindow(1))
		if code != 0 || !strings.Contains(out, ": skipped_duplicate") {
			t.Fatalf("%s: re-run of an expired window: exit %d\n%s%s", mode, code, out, errs)
		}
		code, out, errs = l.run(t, nil, "backfill", spec, "--from", "2026-08-01", "--to", "2026-08-04")
		if code != 0 || !strings.Contains(out, "3 windows: 3 done") {
			t.Fatalf("%s: backfill over expired windows: exit %d\n%s%s", mode, code, out, errs)
		}
		l.check(t, spec, []int{1, 2, 3})
		code, out, errs = l.run(t, nil, "backfill", spec, "--from", "2026-08-01", "--to", "2026-08-02", "--replace")
		if code != 0 || !strings.Contains(out, "published") {
			t.Fatalf("%s: --replace of an expired window: exit %d\n%s%s", mode, code, out, errs)
		}
		code, out, errs = l.run(t, nil, "query", spec, "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM orders_"+mode, "-o", "csv")
		if code != 0 || out != "n,ids\n15,15\n" {
			t.Errorf("%s: after the replace: rows %q (exit %d %s), want 15 once each", mode, out, code, errs)
		}
	}
}

// TestKillBetweenIndexAndCommit: a process killed (SIGKILL) after it wrote the key index file
// and before the commit that attaches it: nothing reached main, the next attempt publishes
// once, and maintenance removes the stray file.
func TestKillBetweenIndexAndCommit(t *testing.T) {
	l := newLake(t, 1)
	code, _, errs := l.run(t, []string{"LDP_FAULT=indexed:kill"}, "run", "append.json", "--window", dayWindow(1), "--run-id", "k")
	if code != -1 {
		t.Fatalf("the process killed after indexing exited %d: %s", code, errs)
	}
	meta := filepath.Join(l.dir, "warehouse", "orders_append")
	stray := indexFiles(t, l.dir)
	if len(stray) != 2 {
		t.Fatalf("index files after the kill: %v, want the stray delta and base", stray)
	}
	code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1), "--run-id", "k", "--attempt", "2")
	if code != 0 || !strings.Contains(out, ": published") {
		t.Fatalf("the next attempt: exit %d\n%s%s", code, out, errs)
	}
	l.check(t, "append.json", []int{1})
	if code, out, errs := l.run(t, nil, "maintain", "append.json", "--orphans", "--orphan-age-hours", "0", "--force", "--apply"); code != 0 {
		t.Fatalf("maintain: exit %d\n%s%s", code, out, errs)
	}
	left := indexFiles(t, l.dir)
	if len(left) != 2 || slices.Contains(left, stray[0]) || slices.Contains(left, stray[1]) {
		t.Errorf("index files after maintenance: %v, want only the published delta and base (not %v under %s)", left, stray, meta)
	}
	if code, out, _ := l.run(t, nil, "run", "append.json", "--window", dayWindow(1)); code != 0 || !strings.Contains(out, ": skipped_duplicate") {
		t.Errorf("a re-run after maintenance: exit %d\n%s", code, out)
	}
	l.check(t, "append.json", []int{1})
}

// indexFiles lists the key index files under dir's warehouse.
func indexFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(dir, "warehouse"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), "ldp-keys-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestReindexRebuildsABrokenIndex: a corrupt index stops a run, naming the file and the
// command; ldp catalog reindex rebuilds it and the window is still done.
func TestReindexRebuildsABrokenIndex(t *testing.T) {
	l := newLake(t, 2)
	if code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1)); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	files := slices.DeleteFunc(indexFiles(t, l.dir), func(p string) bool { return strings.HasPrefix(filepath.Base(p), "ldp-keys-base-") })
	if len(files) != 1 {
		t.Fatalf("index deltas %v, want one", files)
	}
	if err := os.WriteFile(files[0], []byte("not a puffin file"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(2))
	if code != 1 || !strings.Contains(errs, filepath.Base(files[0])) || !strings.Contains(errs, "ldp catalog reindex SPEC") {
		t.Fatalf("a run over a corrupt index: exit %d, want 1 naming the file and the command\n%s%s", code, out, errs)
	}
	code, out, errs = l.run(t, nil, "catalog", "reindex", "append.json")
	if code != 0 || !strings.Contains(out, "indexed 1 key of") {
		t.Fatalf("reindex: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := l.run(t, nil, "run", "append.json", "--window", dayWindow(1)); code != 0 || !strings.Contains(out, ": skipped_duplicate") {
		t.Errorf("day 1 after the rebuild: exit %d\n%s", code, out)
	}
	if code, out, _ := l.run(t, nil, "run", "append.json", "--window", dayWindow(2)); code != 0 || !strings.Contains(out, ": published") {
		t.Errorf("day 2 after the rebuild: exit %d\n%s", code, out)
	}
	l.check(t, "append.json", []int{1, 2})
}

// TestEightProcessesKeepEveryKeyInTheIndex: eight processes backfill the same eight days at
// once; then every snapshot but the head expires, so only the index can say what was
// published. Every key is there, each once, and the rows are there once.
func TestEightProcessesKeepEveryKeyInTheIndex(t *testing.T) {
	l := newLake(t, 8)
	l.together(t, make([][]string, 8), "backfill", "append.json", "--from", "2026-08-01", "--to", "2026-08-09")
	l.expireAll(t, "append.json")
	l.check(t, "append.json", []int{1, 2, 3, 4, 5, 6, 7, 8})
	code, out, errs := l.run(t, nil, "backfill", "append.json", "--from", "2026-08-01", "--to", "2026-08-09")
	if code != 0 || !strings.Contains(out, "8 windows: 8 done") {
		t.Fatalf("a backfill after expiry: exit %d\n%s%s", code, out, errs)
	}
	l.check(t, "append.json", []int{1, 2, 3, 4, 5, 6, 7, 8})
}

// TestCatchUpAfterExpiry: a catch-up workflow publishes four days, maintenance expires their
// snapshots, and the ledger that remembered the runs is gone (another machine ticks the
// folder): the next tick finds every window done in the key index and publishes nothing again.
func TestCatchUpAfterExpiry(t *testing.T) {
	l := catchUpShop(t, 4)
	tick := func() string {
		t.Helper()
		code, out, errs := l.run(t, nil, "schedule", "tick", "shop", "--now", "2026-08-05T02:05:00Z")
		if code != 0 {
			t.Fatalf("tick: exit %d\n%s%s", code, out, errs)
		}
		return out
	}
	if out := tick(); strings.Count(out, ": succeeded") != 4 {
		t.Fatalf("the first tick:\n%s", out)
	}
	l.expireAll(t, "shop/orders.json")
	if err := os.Remove(filepath.Join(l.dir, "shop", ".ldp", "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	out := tick()
	code, rows, errs := l.run(t, nil, "query", "shop/orders.json", "SELECT count(*) AS n FROM orders", "-o", "csv")
	if code != 0 || rows != "n\n4\n" {
		t.Errorf("rows after the second tick: %q (exit %d %s), want 4\n%s", rows, code, errs, out)
	}
	if strings.Contains(out, "daily 2026-08") {
		t.Errorf("the tick after expiry ran windows again:\n%s", out)
	}
}

// catchUpShop is a folder with a daily catch-up workflow from 1 August 2026 over an append
// pipeline, and the drop files of its first days.
func catchUpShop(t *testing.T, days int) *lakeDir {
	t.Helper()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	os.MkdirAll(filepath.Join(l.dir, "shop", "drops"), 0o755)
	l.write(t, "shop/daily.json", `{"kind": "Workflow", "identifier": "daily",
 "metadata": {"schedule": "5 2 * * *", "window": {"size": "day"}, "catchup": true, "start": "2026-08-01"},
 "tasks": [{"id": "orders", "pipeline": "orders.json"}]}`)
	l.write(t, "shop/orders.json", `{"identifier": "orders", "metadata": {"window": {"size": "day"},
  "source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
  "target": {"name": "orders", "format": "ICEBERG", "write_mode": "append", "catalog": {"identifier": "shop"}}}}`)
	for d := 1; d <= days; d++ {
		l.write(t, fmt.Sprintf("shop/drops/orders_2026-08-%02d.csv", d), fmt.Sprintf("order_id,amount\n%d,%d\n", d, 10*d))
	}
	return l
}
