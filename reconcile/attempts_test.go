package reconcile

import (
	"fmt"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestRecallOutlivesJobs: a window's attempts are the status's memory, not the Jobs that are
// still there, so deleting finished Jobs neither restarts a window at attempt 1 nor runs one
// whose attempts are spent.
func TestRecallOutlivesJobs(t *testing.T) {
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	w := "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z"
	plans := []WindowPlan{{Start: "2026-08-01T00:00:00Z", End: "2026-08-02T00:00:00Z", State: v1.StateMissing, Action: v1.ActionRun}}
	pol := JobPolicy{MaxAttempts: 3, Wait: func(n int) time.Duration { return time.Duration(n) * time.Minute }}
	mem := func(attempt int, phase JobPhase, finished, retryAt time.Time, token string) []Memory {
		return []Memory{{JobRecord: JobRecord{Window: w, Attempt: attempt, Phase: phase, Started: finished.Add(-time.Minute), Finished: finished}, RetryAt: retryAt, Retry: token}}
	}
	cases := []struct {
		name   string
		listed []JobRecord
		memory []Memory
		retry  string
		want   string // create|wait|at+D / attempt / state
	}{
		{"no Job, no memory: attempt 1", nil, nil, "", "create/1/missing"},
		{"blocked at attempt 3, its Jobs deleted: it stays blocked at 3",
			nil, mem(3, JobBlocked, now.Add(-time.Hour), time.Time{}, ""), "", "wait/0/blocked"},
		{"failed at attempt 1, its Job deleted: attempt 2 at the time remembered",
			nil, mem(1, JobFailed, now.Add(-time.Minute), now.Add(5*time.Minute), ""), "", "at+5m0s/2/failed"},
		{"once that time has passed: attempt 2",
			nil, mem(1, JobFailed, now.Add(-time.Hour), now.Add(-time.Minute), ""), "", "create/2/failed"},
		{"a Job of an older attempt still listed does not count over the memory",
			[]JobRecord{{Window: w, Attempt: 1, Phase: JobFailed, Finished: now.Add(-2 * time.Hour)}},
			mem(3, JobBlocked, now.Add(-time.Hour), time.Time{}, ""), "", "wait/0/blocked"},
		{"the Job of the remembered attempt is listed: the Job says how it stands",
			[]JobRecord{{Window: w, Attempt: 2, Phase: JobSucceeded, Finished: now}},
			[]Memory{{JobRecord: JobRecord{Window: w, Attempt: 2, Phase: JobActive, Started: now.Add(-time.Hour)}}}, "", "wait/0/published"},
		{"a running attempt whose Job the cache has not seen yet is running",
			nil, []Memory{{JobRecord: JobRecord{Window: w, Attempt: 2, Phase: JobActive, Started: now.Add(-time.Second)}}}, "", "wait/0/running"},
		{"one whose Job went without an outcome failed: the next attempt fences it",
			nil, []Memory{{JobRecord: JobRecord{Window: w, Attempt: 2, Phase: JobActive, Started: now.Add(-time.Hour)}}}, "", "at+2m0s/3/failed"},
		{"a new retry token gives a spent window its attempts again, numbered on",
			nil, mem(3, JobBlocked, now.Add(-time.Hour), time.Time{}, "a"), "b", "create/4/blocked"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			records, _ := Recall(c.listed, c.memory, c.retry, now, 30*time.Second)
			ds := DecideJobs(plans, records, pol, now)
			if len(ds) != 1 {
				t.Fatalf("%d decisions", len(ds))
			}
			d := ds[0]
			what := "wait"
			switch {
			case d.Create:
				what = "create"
			case !d.At.IsZero():
				what = "at+" + d.At.Sub(now).String()
			}
			if got := fmt.Sprintf("%s/%d/%s", what, d.Attempt, d.State); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// TestRecallRechecksAMissingJob: a remembered running attempt the cache does not list yet is
// looked at again when its grace ends.
func TestRecallRechecksAMissingJob(t *testing.T) {
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	_, recheck := Recall(nil, []Memory{{JobRecord: JobRecord{Window: "a/b", Attempt: 1, Phase: JobActive, Started: now.Add(-10 * time.Second)}}}, "", now, 30*time.Second)
	if recheck != 20*time.Second {
		t.Errorf("recheck in %s, want 20s", recheck)
	}
}

// TestRememberIsBounded: the memory holds the windows that are not published, newest first,
// at most limit; a window done by its keys or its Job is dropped.
func TestRememberIsBounded(t *testing.T) {
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	win := func(day int) WindowPlan {
		return WindowPlan{Start: fmt.Sprintf("2026-08-%02dT00:00:00Z", day), End: fmt.Sprintf("2026-08-%02dT00:00:00Z", day+1), State: v1.StateMissing, Action: v1.ActionRun}
	}
	key := func(p WindowPlan) string { return p.Start + "/" + p.End }
	plans := []WindowPlan{win(1), win(2), win(3), win(4)}
	plans[3].State, plans[3].Action = v1.StatePublished, v1.ActionSkip
	records := []JobRecord{
		{Window: key(plans[0]), Attempt: 2, Phase: JobFailed, Finished: now},
		{Window: key(plans[1]), Attempt: 1, Phase: JobBlocked, Finished: now},
		{Window: key(plans[2]), Attempt: 1, Phase: JobSucceeded, Finished: now},
	}
	decisions := []JobDecision{
		{Plan: plans[0], Attempt: 3, Create: true, State: v1.StateFailed},
		{Plan: plans[1], State: v1.StateBlocked},
		{Plan: plans[2], State: v1.StatePublished},
	}
	before := []Memory{
		{JobRecord: JobRecord{Window: key(plans[3]), Attempt: 1, Phase: JobFailed}},
		{JobRecord: JobRecord{Window: "2026-07-01T00:00:00Z/2026-07-02T00:00:00Z", Attempt: 1, Phase: JobBlocked}},
	}
	keep, forgotten := Remember(plans, decisions, records, before, "", now, 2)
	got := ""
	for _, m := range keep {
		got += fmt.Sprintf("%s:%d:%s ", m.Window[8:10], m.Attempt, m.Phase)
	}
	if want := "02:1:blocked 01:3:active "; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	if len(forgotten) != 1 || forgotten[0].Window[5:7] != "07" {
		t.Errorf("forgotten %+v, want the July window the plan no longer has", forgotten)
	}
	if !keep[1].Started.Equal(now) {
		t.Errorf("the attempt created now started %s", keep[1].Started)
	}
}
