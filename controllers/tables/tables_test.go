package tables

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/testfiles"
)

var put = testfiles.Put

// TestTableVerbsReadWhatARunPublished: two real runs publish two days into a local SQLite
// catalog; snapshots, commits and query read them back from that catalog: after the table's
// creation, one snapshot and one keyed commit a window (oldest first, each naming its window), and the rows themselves. A
// prefix narrows the commits to a key; a file target has no snapshots, and says so.
func TestTableVerbsReadWhatARunPublished(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "orders.json")
	put(t, dir, "orders.json", `{"apiVersion": "ldp/v1", "kind": "Pipeline", "identifier": "orders",
	  "metadata": {"window": {"size": "day"}, "source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
	    "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	put(t, dir, "drops/orders_2026-08-01.csv", "id,v\n1,10\n2,20\n")
	put(t, dir, "drops/orders_2026-08-02.csv", "id,v\n3,30\n")
	found, _, err := controllers.Discover([]string{spec}, false)
	if err != nil || len(found) != 1 || len(found[0].Problems) > 0 {
		t.Fatalf("Discover: %+v, %v", found, err)
	}
	ctx := context.Background()
	r := &controllers.Reconciler{Runner: &controllers.Runner{}}
	res, err := r.Reconcile(ctx, controllers.Request{Object: found[0], From: "2026-08-01", To: "2026-08-03", Now: time.Date(2026, 8, 4, 0, 0, 0, 0, time.UTC)})
	if err != nil || len(res.Ran) != 2 || res.Outcome() != "succeeded" {
		t.Fatalf("the runs: %+v, %v", res.Ran, err)
	}

	snaps, err := Snapshots(ctx, spec)
	if err != nil || len(snaps) != 3 || snaps[0].Summary["ldp.init"] != "true" {
		t.Fatalf("snapshots %+v, %v; want the table's creation, then one a window", snaps, err)
	}
	commits, err := Commits(ctx, spec, "")
	if err != nil || len(commits) != 2 {
		t.Fatalf("commits %+v, %v", commits, err)
	}
	for i, want := range []string{"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", "2026-08-02T00:00:00Z/2026-08-03T00:00:00Z"} {
		c := commits[i]
		if c.Window != want || c.Key == "" || c.SnapshotID != snaps[i+1].ID || c.Rows == nil || *c.Rows != int64(2-i) {
			t.Errorf("commit %d: window %s, key %q, snapshot %d (snapshots' %d), rows %v; want %s with %d rows", i, c.Window, c.Key, c.SnapshotID, snaps[i+1].ID, c.Rows, want, 2-i)
		}
	}
	if one, err := Commits(ctx, spec, commits[1].Key[:12]); err != nil || len(one) != 1 || one[0].Key != commits[1].Key {
		t.Errorf("the commits of a key prefix: %+v, %v", one, err)
	}

	cols, rows, err := Query(ctx, spec, "SELECT id, v FROM orders ORDER BY id", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cols, rows); got != "[id v] [[1 10] [2 20] [3 30]]" {
		t.Errorf("query: %s", got)
	}
	_, rows, err = Query(ctx, spec, "SELECT count(*) FROM orders", snaps[1].ID)
	if err != nil || fmt.Sprint(rows) != "[[2]]" {
		t.Errorf("query as of the first snapshot: %v, %v; want its 2 rows", rows, err)
	}

	put(t, dir, "export.json", `{"apiVersion": "ldp/v1", "kind": "Pipeline", "identifier": "export",
	  "metadata": {"source": {"format": "CSV", "path": "drops/orders_2026-08-01.csv"}, "target": {"name": "export", "format": "PARQUET", "path": "out.parquet"}}}`)
	if _, err := Snapshots(ctx, filepath.Join(dir, "export.json")); err == nil || !strings.Contains(err.Error(), "writes a PARQUET file, which has no snapshots") {
		t.Errorf("snapshots of a file target: %v", err)
	}
}
