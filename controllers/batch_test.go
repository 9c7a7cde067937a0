package controllers

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
)

// batchTable is the table lake.x that batchDrops' pipeline writes in dir.
func batchTable(t *testing.T, ctx context.Context, dir string) *table.Table {
	t.Helper()
	cat, err := lake.Open(ctx, &v1.Catalog{Identifier: "lake"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	tbl, err := cat.Load(ctx, lake.Ref{Namespace: "lake", Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// batchDrops writes a daily pipeline "x" with a row_count and a unique check, and days drop
// files of rows rows each (id, ts, amount), the day's file made by edit when it returns one.
func batchDrops(t *testing.T, dir string, days, rows int, edit func(day int, body string) string) *Object {
	t.Helper()
	put(t, dir, "x.json", `{"identifier": "x", "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/x_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "x", "format": "ICEBERG", "catalog": {"identifier": "lake"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["id"]}]}}`)
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for d := 0; d < days; d++ {
		day := start.AddDate(0, 0, d)
		var b strings.Builder
		b.WriteString("id,ts,amount\n")
		for r := 0; r < rows; r++ {
			fmt.Fprintf(&b, "%d,%s,%d\n", d*rows+r, day.Add(time.Duration(r)*time.Hour).Format("2006-01-02 15:04:05"), r)
		}
		body := b.String()
		if edit != nil {
			body = edit(d, body)
		}
		put(t, dir, "drops/x_"+day.Format("2006-01-02")+".csv", body)
	}
	wf, err := LoadWorkflow(filepath.Join(dir, "x.json"))
	if err != nil {
		t.Fatal(err)
	}
	return wf
}

func backfillDays(t *testing.T, wf *Object, days int) *BackfillResult {
	t.Helper()
	r := &Runner{Sleep: func(time.Duration) {}}
	res, err := r.Backfill(context.Background(), wf, BackfillOptions{From: "2026-08-01", To: time.Date(2026, 8, 1+days, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// alone runs window day of the pipeline x in dir by itself, as `ldp run --window` does, with
// no backfill: the error it ends with is the one a window of a backfill must end with too.
func alone(t *testing.T, dir string, day int) error {
	t.Helper()
	p, err := LoadPipeline(filepath.Join(dir, "x.json"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 8, 1+day, 0, 0, 0, 0, time.UTC)
	_, err = pipeline.Run(context.Background(), p, pipeline.Options{Window: v1.LogicalWindow{Start: start, End: start.AddDate(0, 0, 1)}})
	return err
}

func taskError(w BackfillWindow) string {
	if w.Result == nil || len(w.Result.Tasks) == 0 {
		return ""
	}
	return w.Result.Tasks[0].Error
}

// TestBackfillWindowsSniffOnce: the windows of a backfill whose drops share a layout take a
// bounded number of DuckDB statements each. Each used to sniff its file twice (a DESCRIBE,
// then the COPY's own bind) and describe its views four times: 18-19 statements a window.
// A group of windows is now read, staged and checked in a few statements (one sniff, one
// read_csv of the group's files into Parquet split by window, one GROUP BY of the checks):
// 0.5 a window measured, bounded at 1 so a statement a window that creeps back is noticed.
func TestBackfillWindowsSniffOnce(t *testing.T) {
	dir := t.TempDir()
	const days = 30
	wf := batchDrops(t, dir, days, 10, nil)
	before := engine.Statements()
	res := backfillDays(t, wf, days)
	per := float64(engine.Statements()-before) / days
	if res.Counts[OutcomePublished] != days {
		t.Fatalf("counts %v, want %d published", res.Counts, days)
	}
	t.Logf("%.1f DuckDB statements a window", per)
	if per > 1 {
		t.Errorf("%.1f DuckDB statements a window, want at most 1", per)
	}
	_, keys, _ := mainHistory(t, dir, "x")
	if len(keys) != days {
		t.Errorf("%d keys on main, want %d", len(keys), days)
	}
}

// TestBackfillBadValueNamesItsFileAndLine: a drop whose amount on line 4 is not a number,
// among drops that share one layout, fails its window with the error the window gets alone
// (its file and line); the others publish.
func TestBackfillBadValueNamesItsFileAndLine(t *testing.T) {
	dir := t.TempDir()
	const days, bad = 20, 12
	wf := batchDrops(t, dir, days, 10, func(d int, body string) string {
		if d != bad {
			return body
		}
		lines := strings.Split(body, "\n")
		lines[3] = strings.TrimSuffix(lines[3], ",2") + ",x2"
		return strings.Join(lines, "\n")
	})
	res := backfillDays(t, wf, days)
	if res.Counts[OutcomePublished] != days-1 || res.Windows[bad].Outcome != OutcomeFailed {
		t.Fatalf("counts %v, window %d %s; want %d published and it failed", res.Counts, bad, res.Windows[bad].Outcome, days-1)
	}
	got := taskError(res.Windows[bad])
	if !strings.Contains(got, "x_2026-08-13.csv:4") {
		t.Errorf("error %q does not name x_2026-08-13.csv:4", got)
	}
	if want := alone(t, dir, bad); want == nil || got != want.Error() {
		t.Errorf("error in the backfill:\n%s\nalone:\n%v", got, want)
	}
	if _, keys, _ := mainHistory(t, dir, "x"); len(keys) != days-1 {
		t.Errorf("%d keys on main, want %d", len(keys), days-1)
	}
}

// TestBackfillDifferentHeaderReadAsItsOwn: a drop whose columns come in another order, and one
// with a column of another name, are each read as their own file, as a window alone reads them:
// the first publishes its rows in the right columns, the second fails as it does alone.
func TestBackfillDifferentHeaderReadAsItsOwn(t *testing.T) {
	dir := t.TempDir()
	const days, swapped, renamed = 20, 11, 14
	wf := batchDrops(t, dir, days, 10, func(d int, body string) string {
		switch d {
		case swapped: // amount,ts,id
			var out []string
			for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
				f := strings.Split(l, ",")
				out = append(out, f[2]+","+f[1]+","+f[0])
			}
			return strings.Join(out, "\n") + "\n"
		case renamed:
			return strings.Replace(body, "id,ts,amount", "id,ts,total", 1)
		}
		return body
	})
	res := backfillDays(t, wf, days)
	if res.Windows[swapped].Outcome != OutcomePublished {
		t.Errorf("window %d %s: %s", swapped, res.Windows[swapped].Outcome, taskError(res.Windows[swapped]))
	}
	want := alone(t, dir, renamed)
	got := taskError(res.Windows[renamed])
	if (want == nil) != (got == "") || (want != nil && got != want.Error()) {
		t.Errorf("renamed column: error in the backfill %q, alone %v", got, want)
	}
	ctx := context.Background()
	tbl := batchTable(t, ctx, dir)
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := lake.RegisterView(ctx, db, "t", tbl, 0); err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	if err := db.QueryRow(ctx, "SELECT count(*), sum(amount) FROM t WHERE CAST(id AS BIGINT) BETWEEN 110 AND 119", &n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 10 || sum != 45 {
		t.Errorf("the swapped window's rows: %d rows, sum(amount) %d; want 10 and 45", n, sum)
	}
}

// TestBackfillFailedCheckLeavesTheOthers: one window of a batch of ten whose ids repeat fails
// its unique check and is blocked; the other nine publish, each under its own key, and main
// holds their rows only.
func TestBackfillFailedCheckLeavesTheOthers(t *testing.T) {
	dir := t.TempDir()
	const days, dup = 10, 6
	wf := batchDrops(t, dir, days, 10, func(d int, body string) string {
		if d != dup {
			return body
		}
		return strings.Replace(body, "\n61,", "\n60,", 1)
	})
	res := backfillDays(t, wf, days)
	if res.Counts[OutcomePublished] != days-1 || res.Windows[dup].Outcome != OutcomeBlocked {
		t.Fatalf("counts %v, window %d %s; want %d published and it blocked", res.Counts, dup, res.Windows[dup].Outcome, days-1)
	}
	windows, keys, _ := mainHistory(t, dir, "x")
	if len(keys) != days-1 {
		t.Fatalf("%d keys on main, want %d", len(keys), days-1)
	}
	for _, w := range windows {
		if strings.HasPrefix(w, "2026-08-07") {
			t.Errorf("the blocked window %s is on main", w)
		}
	}
	for i, bw := range res.Windows {
		if i == dup {
			continue
		}
		if len(bw.Keys) != 1 || !slices.Contains(keys, bw.Keys[0]) {
			t.Errorf("window %d key %v not on main", i, bw.Keys)
		}
	}
	var rows int
	ctx := context.Background()
	tbl := batchTable(t, ctx, dir)
	if s := tbl.CurrentSnapshot(); s != nil {
		fmt.Sscan(s.Summary.Properties["total-records"], &rows)
	}
	if rows != (days-1)*10 {
		t.Errorf("main holds %d rows, want %d", rows, (days-1)*10)
	}
}

// TestBackfillGroupStatementsAreAGroups: the windows of a group are read, staged and checked by
// one group's statements (a sniff, one read_csv into Parquet split by file, one aggregate
// grouped by file, emptying the database that ran them), and a window's write links its file
// with no statement of its own, so a backfill takes a few statements a group of ten, not
// several a window (read alone, a window took 9: its COPY, two views, the checks, the write's
// describe, and three to empty its database).
func TestBackfillGroupStatementsAreAGroups(t *testing.T) {
	const days, groups = 40, 4
	// A first backfill fills the process's pool of databases, so starting them is not counted.
	backfillDays(t, batchDrops(t, t.TempDir(), days, 10, nil), days)
	dir := t.TempDir()
	wf := batchDrops(t, dir, days, 10, nil)
	before := engine.Statements()
	res := backfillDays(t, wf, days)
	n := engine.Statements() - before
	if res.Counts[OutcomePublished] != days {
		t.Fatalf("counts %v, want %d published", res.Counts, days)
	}
	t.Logf("%d DuckDB statements for %d windows in %d groups", n, days, groups)
	if perGroup := float64(n) / groups; perGroup > 5 {
		t.Errorf("%d statements for %d windows: %.1f a group of ten, want at most 5", n, days, perGroup)
	}
	if _, keys, _ := mainHistory(t, dir, "x"); len(keys) != days {
		t.Errorf("%d keys on main, want %d", len(keys), days)
	}
}

// TestBackfillGroupCheckBlocksOneWindow: in a group read and checked together, the window whose
// amount is null on one line fails its not_null check and is blocked with the error it gets
// alone; the other nine publish their rows under their own keys.
func TestBackfillGroupCheckBlocksOneWindow(t *testing.T) {
	dir := t.TempDir()
	const days, bad = 10, 4
	batchDrops(t, dir, days, 10, func(d int, body string) string {
		if d != bad {
			return body
		}
		return strings.Replace(body, ",3\n", ",\n", 1)
	})
	put(t, dir, "x.json", `{"identifier": "x", "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/x_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "x", "format": "ICEBERG", "catalog": {"identifier": "lake"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["id"]}, {"check": "not_null", "columns": ["amount"]}]}}`)
	wf, err := LoadWorkflow(filepath.Join(dir, "x.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := backfillDays(t, wf, days)
	if res.Counts[OutcomePublished] != days-1 || res.Windows[bad].Outcome != OutcomeBlocked {
		t.Fatalf("counts %v, window %d %s; want %d published and it blocked", res.Counts, bad, res.Windows[bad].Outcome, days-1)
	}
	got := taskError(res.Windows[bad])
	if want := alone(t, dir, bad); want == nil || got != want.Error() {
		t.Errorf("error in the backfill:\n%s\nalone:\n%v", got, want)
	}
	if !strings.Contains(got, "not_null(amount)") {
		t.Errorf("error %q does not name not_null(amount)", got)
	}
	_, keys, _ := mainHistory(t, dir, "x")
	for i, bw := range res.Windows {
		if on := len(bw.Keys) == 1 && slices.Contains(keys, bw.Keys[0]); on != (i != bad) {
			t.Errorf("window %d key %v on main: %v", i, bw.Keys, on)
		}
	}
	var rows int
	if s := batchTable(t, context.Background(), dir).CurrentSnapshot(); s != nil {
		fmt.Sscan(s.Summary.Properties["total-records"], &rows)
	}
	if rows != (days-1)*10 {
		t.Errorf("main holds %d rows, want %d", rows, (days-1)*10)
	}
}

// TestBackfillWindowLinesLandTogether: a grouped window's ledger lines (its workflow's and its
// task's run's) are written in one append when it ends, so in the file each window's lines
// are together, whole and in the order recorded, however its windows interleaved: the 9
// events of a published window, from workflow.started to workflow.finished.
func TestBackfillWindowLinesLandTogether(t *testing.T) {
	dir := t.TempDir()
	const days = 20
	wf := batchDrops(t, dir, days, 10, nil)
	if res := backfillDays(t, wf, days); res.Counts[OutcomePublished] != days {
		t.Fatalf("counts %v, want %d published", res.Counts, days)
	}
	events, warns, err := ledger.Read(wf.Ledger)
	if err != nil || len(warns) > 0 {
		t.Fatalf("reading the ledger: %v %v", err, warns)
	}
	want := []string{"workflow.started", "task.started", "run.started", "run.extracted", "quality.evaluated",
		"run.published", "run.finished", "task.finished", "workflow.finished"}
	if len(events) != days*len(want) {
		t.Fatalf("%d events, want %d", len(events), days*len(want))
	}
	for i := 0; i < len(events); i += len(want) {
		run := events[i].RunID
		for j, typ := range want {
			e := events[i+j]
			if wfRun, _, _ := strings.Cut(e.RunID, "/"); e.Type != typ || wfRun != run {
				t.Fatalf("line %d: %s of run %s, want %s of run %s (a window's lines together, in order)", i+j+1, e.Type, e.RunID, typ, run)
			}
		}
	}
}
