package controllers

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// TestStatusPlanIsTheSchedulesReconcile: the plan a schedule's status carries is the plan a
// dry-run Reconcile of the schedule makes, window for window, with catch-up off (its grid is
// then every window since the start, the missed ones with it) and on, so ldp controller can
// take it from the status instead of planning the schedule twice.
func TestStatusPlanIsTheSchedulesReconcile(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 8, 4, 12, 0, 0, 0, time.UTC)
	for _, catchup := range []string{"false", "true"} {
		put(t, dir, "orders.json", `{"apiVersion": "ldp/v1", "kind": "Pipeline", "identifier": "orders",
		  "metadata": {"window": {"size": "day", "column": "ts"}, "source": {"format": "CSV", "path": "in.csv"},
		    "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
		put(t, dir, "daily.json", `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "daily",
		  "metadata": {"schedule": "5 0 * * *", "window": {"size": "day"}, "catchup": `+catchup+`, "start": "2026-08-01"},
		  "tasks": [{"id": "load", "pipeline": "orders.json"}]}`)
		found, _, err := Discover([]string{filepath.Join(dir, "daily.json")}, false)
		if err != nil || len(found) != 1 || len(found[0].Problems) > 0 {
			t.Fatalf("Discover: %+v, %v", found, err)
		}
		st, err := StatusOf(context.Background(), found[0], now, 100)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&Reconciler{Runner: &Runner{}}).Reconcile(context.Background(), Request{Object: found[0], Now: now, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(st.Plan)
		want, _ := json.Marshal(res.Windows)
		if string(got) != string(want) || len(res.Windows) == 0 {
			t.Errorf("catch-up %s: the status's plan\n%s\nthe Reconcile's\n%s", catchup, got, want)
		}
		if catchup == "false" && (len(st.Missed) != 2 || len(st.Grid) != 3 || len(st.Plan) != 1) {
			t.Errorf("catch-up off: %d missed, a grid of %d, a plan of %d; want 2, 3 and 1", len(st.Missed), len(st.Grid), len(st.Plan))
		}
	}
}
