package controllers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ldp-dev/ldp/internal/ledger"
)

// TestLoadObjectFromMemory: an object loaded from an fs.FS (ldp controller's, from a cluster
// object) is the object Discover loads of the same files on disk, the files its tasks name read
// from the FS too; it keeps no ledger; and a task naming a file the FS does not hold is the
// problem ldp validate reports, under the name the file has in the FS.
func TestLoadObjectFromMemory(t *testing.T) {
	files := map[string]string{
		"workflow-daily.json": `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "daily",
		  "metadata": {"schedule": "5 0 * * *", "window": {"size": "day"}, "catchup": true, "start": "2026-08-01"},
		  "tasks": [{"id": "load", "pipeline": "orders.json"},
		    {"id": "totals", "depends_on": ["load"], "sql": {"query_file": "totals.sql", "inputs": {"orders": "orders.json"},
		      "target": {"name": "totals", "format": "ICEBERG", "catalog": {"identifier": "lake", "warehouse_path": "/wh"}}}}]}`,
		"orders.json": `{"apiVersion": "ldp/v1", "kind": "Pipeline", "identifier": "orders",
		  "metadata": {"window": {"size": "day", "column": "ts"}, "source": {"format": "CSV", "path": "/in/orders.csv"},
		    "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake", "warehouse_path": "/wh"}}}}`,
		"totals.sql": "SELECT count(*) AS n FROM orders",
	}
	mem := fstest.MapFS{}
	dir := t.TempDir()
	for name, body := range files {
		mem[name] = &fstest.MapFile{Data: []byte(body)}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := LoadObject(mem, "workflow-daily.json")
	if len(got.Problems) > 0 {
		t.Fatalf("problems: %v", got.Problems)
	}
	found, _, err := Discover([]string{filepath.Join(dir, "workflow-daily.json")}, false)
	if err != nil || len(found) != 1 || len(found[0].Problems) > 0 {
		t.Fatalf("Discover of the same files: %+v, %v", found, err)
	}
	want := found[0]
	if got.WF.Name != want.WF.Name || got.WF.Schedule != want.WF.Schedule || !got.Start.Equal(want.Start) || got.Catchup != want.Catchup {
		t.Errorf("loaded %s %q from %v (catch-up %v), Discover %s %q from %v (catch-up %v)", got.WF.Name, got.WF.Schedule, got.Start, got.Catchup,
			want.WF.Name, want.WF.Schedule, want.Start, want.Catchup)
	}
	gp, wp := got.WF.Planning(), want.WF.Planning()
	if len(gp.Tasks) != 2 || len(gp.Tasks) != len(wp.Tasks) {
		t.Fatalf("tasks %+v, want %+v", gp.Tasks, wp.Tasks)
	}
	for i := range gp.Tasks {
		if gp.Tasks[i].ID != wp.Tasks[i].ID || gp.Tasks[i].Target != wp.Tasks[i].Target || gp.Tasks[i].Evidence != wp.Tasks[i].Evidence {
			t.Errorf("task %d: %+v, want %+v", i, gp.Tasks[i], wp.Tasks[i])
		}
	}
	win := aug1
	if k, w := gp.Tasks[0].Key(win), wp.Tasks[0].Key(win); k == "" || k != w {
		t.Errorf("the load's key %q, want Discover's %q", k, w)
	}
	if q := got.WF.Pipelines["totals"].Metadata.Source.Query; q != files["totals.sql"] {
		t.Errorf("the sql task's query %q, want the query file's, read from the FS", q)
	}
	if got.WF.Ledger != "" || want.WF.Ledger != ledger.PathFor(filepath.Join(dir, "workflow-daily.json")) {
		t.Errorf("ledgers %q and %q: an object loaded from memory keeps none", got.WF.Ledger, want.WF.Ledger)
	}

	delete(mem, "orders.json")
	bad := LoadObject(mem, "workflow-daily.json")
	if len(bad.Problems) == 0 || bad.WF != nil {
		t.Fatalf("a task naming a file not in the FS: %+v", bad)
	}
	if p := bad.Problems[0]; p.File != "workflow-daily.json" || p.Field != "tasks[0].pipeline" || !strings.Contains(p.Message, `file "orders.json" not found`) {
		t.Errorf("problem %+v", p)
	}
}
