package controllers

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
)

// mainHistory reads table name's snapshots on main, oldest first: each one's window and key,
// and how many catalog commits the table has taken (its metadata file's version).
func mainHistory(t *testing.T, dir, name string) (windows, keys []string, commits int) {
	t.Helper()
	ctx := context.Background()
	cat, err := lake.Open(ctx, &v1.Catalog{Identifier: "lake"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, lake.Ref{Namespace: "lake", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	for s := tbl.CurrentSnapshot(); s != nil && s.ParentSnapshotID != nil; s = tbl.SnapshotByID(*s.ParentSnapshotID) {
		windows = append([]string{s.Summary.Properties[lake.WindowProp]}, windows...)
		keys = append(keys, s.Summary.Properties[lake.KeyProp])
	}
	base := filepath.Base(tbl.MetadataLocation())
	commits, _ = strconv.Atoi(base[:strings.Index(base, "-")])
	return windows, keys, commits
}

// TestBackfillPublishesSeveralWindowsToACommit: a 24-day backfill of two chained tasks, one
// window of which fails for the second task. Every other window of both tables is published
// once, with far fewer catalog commits than windows; progress comes in window order.
func TestBackfillPublishesSeveralWindowsToACommit(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "a.json", pipelineSpec("a"))
	put(t, dir, "b.json", pipelineSpec("b"))
	start := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	const days = 24
	for d := 0; d < days; d++ {
		day := start.AddDate(0, 0, d).Format("2006-01-02")
		put(t, dir, "drops/a_"+day+".csv", fmt.Sprintf("id,v\n%d,1\n", d))
		if d != 4 { // b has no drop on the fifth day: that window fails
			put(t, dir, "drops/b_"+day+".csv", fmt.Sprintf("id,v\n%d,2\n", d))
		}
	}
	put(t, dir, "wf.json", `{"kind": "Workflow", "identifier": "two", "metadata": {"window": {"size": "day"}}, "tasks": [
		{"id": "a", "pipeline": "a.json"}, {"id": "b", "pipeline": "b.json", "depends_on": ["a"]}]}`)
	wf, err := LoadWorkflow(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reported []int
	r := &Runner{Sleep: func(time.Duration) {}}
	res, err := r.Backfill(context.Background(), wf, BackfillOptions{From: "2026-08-01", To: "2026-08-25", Parallel: 3,
		OnWindow: func(done, total int, w BackfillWindow) { reported = append(reported, done) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts[OutcomePublished] != days-1 || res.Counts[OutcomeFailed] != 1 || res.Outcome != v1.Failed {
		t.Fatalf("counts %v outcome %s, want %d published and 1 failed, failed", res.Counts, res.Outcome, days-1)
	}
	if w := res.Windows[4]; w.Outcome != OutcomeFailed || statuses(w.Result) != "a=succeeded b=failed" {
		t.Errorf("fifth window %s: %s", w.Outcome, statuses(w.Result))
	}
	if !sort.IntsAreSorted(reported) || len(reported) != days || reported[0] != 1 {
		t.Errorf("progress reported %v, want 1..%d in order", reported, days)
	}
	for _, table := range []string{"a", "b"} {
		windows, keys, commits := mainHistory(t, dir, table)
		want := days
		if table == "b" {
			want = days - 1
		}
		if len(keys) != want {
			t.Errorf("table %s: %d snapshots on main, want %d", table, len(keys), want)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Errorf("table %s: key %s twice on main", table, k)
			}
			seen[k] = true
		}
		if len(windows) != len(keys) {
			t.Errorf("table %s: %d windows for %d keys", table, len(windows), len(keys))
		}
		if commits >= want {
			t.Errorf("table %s: %d catalog commits for %d windows: the windows were not grouped", table, commits, want)
		}
	}
	again, err := r.Backfill(context.Background(), wf, BackfillOptions{From: "2026-08-01", To: "2026-08-25"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Counts[OutcomeDone] != days-1 || again.Counts[OutcomeFailed] != 1 {
		t.Errorf("second run counts %v: only the failed window should run", again.Counts)
	}
}
