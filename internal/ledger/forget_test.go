package ledger

import (
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestForgetKeepsSucceededRuns: in a real ledger file, the runs of a workflow's windows in the
// range whose last attempt failed (or never finished) are forgotten by one runs.forgotten
// event; a run that failed then succeeded on its second attempt, another window's run and
// another workflow's run are kept. Forgetting the range again finds none and writes nothing.
func TestForgetKeepsSucceededRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ldp", "events.jsonl")
	day := func(d int) Window {
		s := time.Date(2026, 8, d, 0, 0, 0, 0, time.UTC)
		return WindowOf(v1.LogicalWindow{Start: s, End: s.AddDate(0, 0, 1)})
	}
	run := func(id, workflow string, w Window, outcomes ...v1.Outcome) {
		t.Helper()
		for i, o := range outcomes {
			evs := []v1.LedgerEvent{NewEvent(id, i+1, 0, WorkflowStartedPayload{Workflow: workflow, Window: w})}
			if o != "" {
				evs = append(evs, NewEvent(id, i+1, 1, WorkflowFinishedPayload{Workflow: workflow, Window: w, Status: o}))
			}
			if err := (File{Path: path}).Append(evs...); err != nil {
				t.Fatal(err)
			}
		}
	}
	run("failed", "daily", day(1), v1.Failed)
	run("retried", "daily", day(2), v1.Failed, v1.Succeeded)
	run("unfinished", "daily", day(2), "")
	run("outside", "daily", day(5), v1.Failed)
	run("other", "weekly", day(1), v1.Failed)
	in := map[string]bool{day(1).String(): true, day(2).String(): true}
	n, err := Forget(path, "daily", in, "2026-08-01", "2026-08-03")
	if err != nil || n != 2 {
		t.Fatalf("forgot %d, %v; want the failed and the unfinished run", n, err)
	}
	events, _, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	p, ok := As[RunsForgottenPayload](last)
	if !ok || last.Type != RunsForgotten || p.Workflow != "daily" || p.From != "2026-08-01" || p.To != "2026-08-03" ||
		len(p.RunIDs) != 2 || p.RunIDs[0] != "failed" || p.RunIDs[1] != "unfinished" {
		t.Errorf("the last event %s %+v", last.Type, p)
	}
	if n, err := Forget(path, "daily", in, "2026-08-01", "2026-08-03"); err != nil || n != 0 {
		t.Errorf("forgetting the range again: %d, %v; want none, the runs are forgotten", n, err)
	}
	if again, _, _ := Read(path); len(again) != len(events) {
		t.Errorf("forgetting nothing wrote %d events", len(again)-len(events))
	}
}
