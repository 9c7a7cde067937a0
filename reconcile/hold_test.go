package reconcile

import (
	"strings"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestPlanHolds: a scheduled window whose last run a data gate blocked, or that spent its
// attempts, is held while the evidence its run saw is what is there now, and runs again once
// the source or spec changed, or when asked for by name. A failed task with attempts left, a
// run that recorded no evidence (an old ledger) and one waiting for its retry are not held.
func TestPlanHolds(t *testing.T) {
	obj := Object{Name: "w", File: "orders.json", Tasks: []Task{
		{ID: "orders", Evidence: ByKey, Target: "t:orders", MaxAttempts: 3, Key: func(w v1.LogicalWindow) string { return "orders@" + w.String() }},
	}}
	run := func(o v1.Outcome, attempts int, evidence string) *LastRun {
		return &LastRun{RunID: "r1", Attempt: attempts, Finished: true, Tasks: map[string]v1.Outcome{"orders": o},
			Evidence: evidence, TaskAttempts: map[string]int{"orders": attempts}, Checks: map[string][]string{"orders": {"positive_amount"}}}
	}
	fatal := run(failed, 1, "e1")
	fatal.Fatal = map[string]bool{"orders": true}
	unstarted := run(failed, 1, "e1")
	unstarted.TaskAttempts = nil // not started: ldp was shutting down
	waiting := run(failed, 1, "e1")
	waiting.RetryAt = d2.End
	for _, c := range []struct {
		name     string
		last     *LastRun
		evidence string
		hold     bool
		action   v1.Action
		kind     HoldKind
		message  string
	}{
		{"blocked, same evidence", run(blocked, 1, "e1"), "e1", true, v1.ActionHold, HoldBlocked,
			"blocked by check positive_amount; waiting for a change to source or spec, or run `ldp run orders.json --window " + d1.String() + "`"},
		{"blocked, the source changed", run(blocked, 1, "e1"), "e2", true, Resume, "", ""},
		{"blocked, asked for by name", run(blocked, 1, "e1"), "e1", false, Resume, "", ""},
		{"blocked, no evidence recorded", run(blocked, 1, ""), "", true, Resume, "", ""},
		{"failed with attempts left", run(failed, 2, "e1"), "e1", true, Resume, "", ""},
		{"failed, attempts spent", run(failed, 3, "e1"), "e1", true, v1.ActionHold, HoldAttemptsSpent,
			"task orders failed 3 of 3 attempts; waiting for a change to source or spec, or run `ldp run orders.json --window " + d1.String() + "` or `ldp runs forget orders.json --from 2026-08-01T00:00:00Z --to 2026-08-02T00:00:00Z` to retry"},
		{"failed, attempts spent, the spec changed", run(failed, 3, "e1"), "e3", true, Resume, "", ""},
		{"failed with an error no retry fixes", fatal, "e1", true, v1.ActionHold, HoldAttemptsSpent, "task orders failed with an error no retry can fix"},
		{"failed, its retry due later", waiting, "e1", true, v1.ActionWait, "", ""},
		{"failed before its task started", unstarted, "e1", true, Resume, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs := Observed{LastRuns: map[v1.WindowKey]LastRun{d1.Key(): *c.last}, Evidence: map[v1.WindowKey]string{d1.Key(): c.evidence}}
			p := Plan(obj, []v1.LogicalWindow{d1}, obs, Options{Hold: c.hold, Now: d2.Start})[0]
			if p.Action != c.action {
				t.Fatalf("action %s, want %s (held %+v)", p.Action, c.action, p.Held)
			}
			if c.kind == "" {
				if p.Held != nil {
					t.Fatalf("held %+v, want not held", p.Held)
				}
				if c.action == Resume && (!p.Runs() || p.Continue == nil || p.Continue.RunID != "r1") {
					t.Fatalf("a released window runs as the next attempt of its run: %+v", p)
				}
				return
			}
			if p.Held == nil || p.Held.Kind != c.kind || p.Held.Task != "orders" || !strings.HasPrefix(p.Held.Message, c.message) {
				t.Fatalf("held %+v, want %s with message %q", p.Held, c.kind, c.message)
			}
			if p.Runs() || Pending([]WindowPlan{p}) || p.Tasks[0].Action != Skip || p.Tasks[0].Reason != ReasonHeld {
				t.Fatalf("a held window runs: %+v", p)
			}
			if _, ok := NextRetry([]WindowPlan{p}); ok {
				t.Fatal("a held window asks for a requeue")
			}
		})
	}
}

// TestSpentIsTheJobsRule: the controller's Jobs stop where a tick does.
func TestSpentIsTheJobsRule(t *testing.T) {
	plans := Plan(Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders")}}, []v1.LogicalWindow{d1}, Observed{}, Options{})
	for _, c := range []struct {
		attempt int
		create  bool
	}{{1, true}, {2, true}, {3, false}} {
		d := DecideJobs(plans, []JobRecord{{Window: d1.String(), Attempt: c.attempt, Phase: JobFailed}}, JobPolicy{MaxAttempts: 3}, d2.End)
		if d[0].Create != c.create || d[0].Create == Spent(c.attempt, 3) {
			t.Errorf("after attempt %d of 3: create %v, want %v", c.attempt, d[0].Create, c.create)
		}
	}
}
