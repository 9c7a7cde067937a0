package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/lake"
)

// retain sets the retention table properties of spec's table, as a user would with any Iceberg
// client, and returns a function that reports how many snapshots the table holds.
func (l *lakeDir) retain(t *testing.T, spec string, props map[string]string) func() int {
	t.Helper()
	ctx := context.Background()
	p, err := controllers.LoadPipeline(filepath.Join(l.dir, spec))
	if err != nil {
		t.Fatal(err)
	}
	ref := lake.RefOf(p.Metadata.Target)
	open := func() *lake.Catalog {
		cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	cat := open()
	defer cat.Close()
	if err := cat.SetTableProperties(ctx, ref, props); err != nil {
		t.Fatal(err)
	}
	return func() int {
		t.Helper()
		cat := open()
		defer cat.Close()
		tbl, err := cat.Load(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		return len(tbl.Metadata().Snapshots())
	}
}

// metadataFiles counts the files under the metadata folder of a table of the lake.
func metadataFiles(t *testing.T, dir, table string) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "warehouse", "shop.db", table, "metadata"))
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestPublishingExpiresAndWindowsStayDone: a table with a retention of three snapshots (set by
// table property) publishes eight windows one run at a time, so its publishes expire the
// older windows' snapshots as they go. Then, in every write mode, a re-run of each window and a
// backfill over all of them are skipped, the rows are there once, ldp commits lists every
// publish; a new key and --replace still redo a window; the metadata folder stays small.
func TestPublishingExpiresAndWindowsStayDone(t *testing.T) {
	const days = 8
	l := newLake(t, days)
	for _, mode := range []string{"append", "overwrite", "upsert"} {
		spec := mode + ".json"
		if code, out, errs := l.run(t, nil, "run", spec, "--window", dayWindow(1)); code != 0 {
			t.Fatalf("%s: run: exit %d\n%s%s", mode, code, out, errs)
		}
		snapshots := l.retain(t, spec, map[string]string{lake.MaxSnapshotsProp: "3", lake.ExpireSlabProp: "2"})
		most := 0
		for d := 2; d <= days; d++ {
			if code, out, errs := l.run(t, nil, "run", spec, "--window", dayWindow(d)); code != 0 || !strings.Contains(out, ": published") {
				t.Fatalf("%s: run of day %d: exit %d\n%s%s", mode, d, code, out, errs)
			}
			most = max(most, snapshots())
		}
		// The three kept, ldp.init (the fence's tags point at it), and a slab's slack.
		if most > 6 {
			t.Errorf("%s: the table held up to %d snapshots, want the retention of 3 and ldp.init", mode, most)
		}
		for d := 1; d <= days; d++ {
			code, out, errs := l.run(t, nil, "run", spec, "--window", dayWindow(d))
			if code != 0 || !strings.Contains(out, ": skipped_duplicate") {
				t.Fatalf("%s: re-run of day %d: exit %d\n%s%s", mode, d, code, out, errs)
			}
		}
		code, out, errs := l.run(t, nil, "backfill", spec, "--from", "2026-08-01", "--to", fmt.Sprintf("2026-08-%02d", days+1))
		if code != 0 || !strings.Contains(out, fmt.Sprintf("%d windows: %d done", days, days)) {
			t.Fatalf("%s: backfill over expired windows: exit %d\n%s%s", mode, code, out, errs)
		}
		all := []int{1, 2, 3, 4, 5, 6, 7, 8}
		l.check(t, spec, all)
		if n := metadataFiles(t, l.dir, "orders_"+mode); n > 60 {
			t.Errorf("%s: %d files under metadata/ after %d windows with a retention of 3", mode, n, days)
		}
		// A new key redoes the window: an append adds its rows again, the others replace them.
		code, out, errs = l.run(t, nil, "run", spec, "--window", dayWindow(1), "--idempotency-key", "redo-1")
		if code != 0 || !strings.Contains(out, ": published") {
			t.Fatalf("%s: a new key for day 1: exit %d\n%s%s", mode, code, out, errs)
		}
		code, out, errs = l.run(t, nil, "backfill", spec, "--from", "2026-08-02", "--to", "2026-08-03", "--replace")
		if code != 0 || !strings.Contains(out, "published") {
			t.Fatalf("%s: --replace of the expired day 2: exit %d\n%s%s", mode, code, out, errs)
		}
		want := "n,ids\n40,40\n"
		if mode == "append" {
			want = "n,ids\n45,40\n" // day 1 appended twice, by the new key: that is what a new key does
		}
		code, out, errs = l.run(t, nil, "query", spec, "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM orders_"+mode, "-o", "csv")
		if code != 0 || out != want {
			t.Errorf("%s: rows after the redos %q (exit %d %s), want %q", mode, out, code, errs, want)
		}
	}
}

// TestExpiryOffForPythonWarehouses: ldp.history.expire.enabled=false keeps every snapshot
// (and so every key in a summary, where the Python ldp looks) whatever the retention says.
func TestExpiryOffForPythonWarehouses(t *testing.T) {
	l := newLake(t, 5)
	if code, out, errs := l.run(t, nil, "run", "append.json", "--window", dayWindow(1)); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errs)
	}
	snapshots := l.retain(t, "append.json", map[string]string{lake.MaxSnapshotsProp: "2", lake.ExpireSlabProp: "2", lake.ExpireEnabledProp: "false"})
	if code, out, errs := l.run(t, nil, "backfill", "append.json", "--from", "2026-08-02", "--to", "2026-08-06"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s%s", code, out, errs)
	}
	if n := snapshots(); n != 6 {
		t.Errorf("%d snapshots, want ldp.init and all 5 publishes", n)
	}
}

// TestCatchUpOverAutomaticallyExpiredWindows: a catch-up workflow ticks every other day on a
// table that keeps two snapshots, so its publishes expire the windows before; with the ledger
// gone (another machine ticks the folder), ldp status and ldp diff find every window done and
// the next tick runs none.
func TestCatchUpOverAutomaticallyExpiredWindows(t *testing.T) {
	l := catchUpShop(t, 8)
	tick := func(now string) string {
		t.Helper()
		code, out, errs := l.run(t, nil, "schedule", "tick", "shop", "--now", now)
		if code != 0 {
			t.Fatalf("tick at %s: exit %d\n%s%s", now, code, out, errs)
		}
		return out
	}
	if out := tick("2026-08-03T02:05:00Z"); strings.Count(out, ": succeeded") != 2 {
		t.Fatalf("the first tick:\n%s", out)
	}
	lk := &lakeDir{dir: filepath.Join(l.dir, "shop"), ldp: l.ldp}
	snapshots := lk.retain(t, "orders.json", map[string]string{lake.MaxSnapshotsProp: "2", lake.ExpireSlabProp: "2"})
	for _, now := range []string{"2026-08-05T02:05:00Z", "2026-08-07T02:05:00Z", "2026-08-09T02:05:00Z"} {
		if out := tick(now); strings.Count(out, ": succeeded") != 2 {
			t.Fatalf("the tick at %s:\n%s", now, out)
		}
	}
	if n := snapshots(); n > 5 {
		t.Errorf("%d snapshots after 8 windows with a retention of 2", n)
	}
	if err := os.Remove(filepath.Join(l.dir, "shop", ".ldp", "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	code, out, errs := l.run(t, nil, "status", "shop", "--now", "2026-08-09T03:00:00Z", "-o", "json")
	var rep struct {
		Objects []struct{ Summary map[string]int }
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Objects) != 1 || rep.Objects[0].Summary["published"] != 8 {
		t.Errorf("status after expiry: exit %d %v %+v\n%s%s", code, err, rep, out, errs)
	}
	code, out, errs = l.run(t, nil, "diff", "-f", "shop", "--now", "2026-08-09T03:00:00Z")
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("diff after expiry: exit %d, want 0 and nothing to do\n%s%s", code, out, errs)
	}
	if out := tick("2026-08-09T02:05:00Z"); strings.Contains(out, "daily 2026-08") {
		t.Errorf("the tick after expiry ran windows again:\n%s", out)
	}
	code, rows, errs := l.run(t, nil, "query", "shop/orders.json", "SELECT count(*) AS n FROM orders", "-o", "csv")
	if code != 0 || rows != "n\n8\n" {
		t.Errorf("rows: %q (exit %d %s), want 8", rows, code, errs)
	}
}
