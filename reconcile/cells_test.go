package reconcile

import (
	"slices"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

func TestCell(t *testing.T) {
	now := time.Date(2026, 8, 5, 0, 0, 0, 0, time.UTC)
	run := func(finished bool, retry time.Time, tasks map[string]v1.Outcome) *LastRun {
		return &LastRun{RunID: "r", Attempt: 1, Finished: finished, Tasks: tasks, RetryAt: retry}
	}
	cases := []struct {
		name string
		p    WindowPlan
		task string
		want CellState
	}{
		{"a published window", WindowPlan{State: v1.StatePublished}, "a", CellPublished},
		{"nothing ran", WindowPlan{State: v1.StateMissing}, "a", CellMissing},
		{"its key is on main", WindowPlan{State: v1.StatePartial, Tasks: []TaskPlan{{ID: "a", Action: v1.ActionSkip, Key: "k"}}}, "a", CellPublished},
		{"held back by a check", WindowPlan{State: v1.StateBlocked, LastRun: run(true, time.Time{}, map[string]v1.Outcome{"a": v1.Blocked})}, "a", CellBlocked},
		{"downstream of it", WindowPlan{State: v1.StateBlocked, LastRun: run(true, time.Time{}, map[string]v1.Outcome{"a": v1.Blocked, "b": v1.UpstreamFailed})}, "b", CellUpstreamFailed},
		{"failed, retry due later", WindowPlan{State: v1.StateFailed, LastRun: run(true, now.Add(time.Minute), map[string]v1.Outcome{"a": v1.Failed})}, "a", CellRetrying},
		{"failed, no retry left", WindowPlan{State: v1.StateFailed, LastRun: run(true, time.Time{}, map[string]v1.Outcome{"a": v1.Failed})}, "a", CellFailed},
		{"the run never finished", WindowPlan{State: v1.StateMissing, LastRun: run(false, time.Time{}, map[string]v1.Outcome{})}, "a", CellUnfinished},
		{"not finished: waiting, not missing", WindowPlan{State: v1.StateMissing, NotFinished: true}, "a", CellWaiting},
		{"not finished, an unkeyed run of it killed", WindowPlan{State: v1.StateMissing, NotFinished: true, LastRun: run(false, time.Time{}, map[string]v1.Outcome{})}, "a", CellUnfinished},
		{"found its work done", WindowPlan{State: v1.StateFailed, LastRun: run(true, time.Time{}, map[string]v1.Outcome{"a": v1.Skipped, "b": v1.Failed})}, "a", CellSkipped},
	}
	for _, c := range cases {
		if got := Cell(c.p, c.task, now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestEarlier(t *testing.T) {
	try := func(finished bool, tasks map[string]v1.Outcome) LastRun {
		return LastRun{RunID: "r", Attempt: 1, Finished: finished, Tasks: tasks}
	}
	blocked := try(true, map[string]v1.Outcome{"a": v1.Blocked, "b": v1.UpstreamFailed})
	published := try(true, map[string]v1.Outcome{"a": v1.Succeeded, "b": v1.Succeeded})
	killed := try(false, map[string]v1.Outcome{})
	onlyB := try(true, map[string]v1.Outcome{"b": v1.Succeeded})
	cases := []struct {
		name string
		runs []LastRun
		task string
		want []CellState
	}{
		{"never ran", nil, "a", nil},
		{"published first time", []LastRun{published}, "a", nil},
		{"still blocked: the last try is the cell", []LastRun{blocked}, "a", nil},
		{"held back, then published", []LastRun{blocked, published}, "a", []CellState{CellBlocked}},
		{"downstream of the gate", []LastRun{blocked, published}, "b", []CellState{CellUpstreamFailed}},
		{"killed, blocked, then published", []LastRun{killed, blocked, published}, "a", []CellState{CellUnfinished, CellBlocked}},
		{"a later run without the task is not its last try", []LastRun{blocked, published, onlyB}, "a", []CellState{CellBlocked}},
		{"published, then re-run and blocked", []LastRun{published, blocked}, "a", nil},
	}
	for _, c := range cases {
		if got := Earlier(c.runs, c.task); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRunLength(t *testing.T) {
	got := RunLength([]CellState{CellPublished, CellPublished, CellBlocked, CellPublished})
	want := []CellRun{{CellPublished, 2}, {CellBlocked, 1}, {CellPublished, 1}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d: %v, want %v", i, got[i], want[i])
		}
	}
	if RunLength(nil) != nil {
		t.Error("no cells, no runs")
	}
}
