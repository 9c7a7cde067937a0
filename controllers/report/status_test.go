package report

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/testfiles"
)

var put = testfiles.Put

// project writes a daily workflow (catch-up from 2026-08-01) of one load into a local SQLite
// catalog, with a drop for 2026-08-01 only, and runs its first two windows for real: the first
// publishes, the second fails (no file). The catalog and the ledger are the real ones.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	put(t, dir, "orders.json", `{"apiVersion": "ldp/v1", "kind": "Pipeline", "identifier": "orders",
	  "metadata": {"window": {"size": "day"}, "source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
	    "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	put(t, dir, "daily.json", `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "daily",
	  "metadata": {"schedule": "5 0 * * *", "window": {"size": "day"}, "catchup": true, "start": "2026-08-01"},
	  "tasks": [{"id": "load", "pipeline": "orders.json"}]}`)
	put(t, dir, "drops/orders_2026-08-01.csv", "id,v\n1,10\n2,20\n")
	found, _, err := controllers.Discover([]string{filepath.Join(dir, "daily.json")}, false)
	if err != nil || len(found) != 1 || len(found[0].Problems) > 0 {
		t.Fatalf("Discover: %+v, %v", found, err)
	}
	r := &controllers.Reconciler{Runner: &controllers.Runner{}}
	res, _ := r.Reconcile(context.Background(), controllers.Request{Object: found[0], From: "2026-08-01", To: "2026-08-03", Now: now})
	if len(res.Ran) != 2 || res.Ran[0].Status != "succeeded" || res.Ran[1].Status != "failed" {
		t.Fatalf("the runs: %+v", res.Ran)
	}
	return dir
}

var now = time.Date(2026, 8, 4, 12, 0, 0, 0, time.UTC)

// TestStatusOfARealProject: the page's report of a folder, from its real catalog and ledger:
// the workflow's grid is the three windows of its fires since its start (published, failed,
// and the one never run), its next fire is the schedule's, and a file that is not valid is
// listed with its problem rather than dropped.
func TestStatusOfARealProject(t *testing.T) {
	dir := project(t)
	put(t, dir, "broken.json", `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "broken", "metadata": {"schedule": "every day"}, "tasks": []}`)
	rep, err := Status(context.Background(), &controllers.Reconciler{Runner: &controllers.Runner{}}, []string{dir}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Objects) != 1 || len(rep.Invalid) != 1 || rep.Invalid[0].File != filepath.Join(dir, "broken.json") || len(rep.Invalid[0].Problems) == 0 {
		t.Fatalf("%d objects, invalid %+v; want daily, and broken.json with its problems", len(rep.Objects), rep.Invalid)
	}
	ob := rep.Objects[0]
	if ob.Name != "daily" || ob.Kind != "Workflow" || ob.Error != "" {
		t.Fatalf("object %s (%s), error %q", ob.Name, ob.Kind, ob.Error)
	}
	if got := fmt.Sprint(ob.Summary); got != "map[failed:1 missing:1 published:1]" {
		t.Errorf("summary %s, want one window published, one failed, one missing", got)
	}
	if ob.Windows.Count != 3 || ob.Windows.First != "2026-08-01T00:00:00Z" {
		t.Errorf("windows %+v, want 3 from 2026-08-01", ob.Windows)
	}
	if len(ob.Tasks) != 1 || ob.Tasks[0].ID != "load" || ob.Tasks[0].Kind != "pipeline" {
		t.Fatalf("task rows %+v", ob.Tasks)
	}
	if got := fmt.Sprint(ob.Tasks[0].Cells); got != "[{published 1} {failed 1} {missing 1}]" {
		t.Errorf("the load's cells %s", got)
	}
	if ob.NextFire != "2026-08-05T00:05:00Z" {
		t.Errorf("next fire %q", ob.NextFire)
	}
	counts := map[string]int{}
	for _, states := range rep.States() {
		for s, n := range states {
			counts[s] += n
		}
	}
	if counts["published"] != 1 || counts["failed"] != 1 {
		t.Errorf("the report's states %v", counts)
	}
}
