package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

func TestDecideJobs(t *testing.T) {
	now := time.Date(2026, 8, 10, 12, 0, 0, 0, time.UTC)
	win := func(day int, state v1.WindowState) WindowPlan {
		a := fmt.Sprintf("2026-08-%02dT00:00:00Z", day)
		b := fmt.Sprintf("2026-08-%02dT00:00:00Z", day+1)
		action := v1.ActionRun
		if state == v1.StatePublished {
			action = v1.ActionSkip
		}
		return WindowPlan{Start: a, End: b, State: state, Action: action}
	}
	w := func(day int) string { return fmt.Sprintf("2026-08-%02dT00:00:00Z/2026-08-%02dT00:00:00Z", day, day+1) }
	wait := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	cases := []struct {
		name  string
		plans []WindowPlan
		jobs  []JobRecord
		pol   JobPolicy
		want  string // window:create/attempt/state per decision
	}{
		{"a new window is attempt 1, one at a time by default",
			[]WindowPlan{win(1, v1.StateMissing), win(2, v1.StateMissing)}, nil, JobPolicy{MaxAttempts: 3, Wait: wait},
			"1:create/1/missing 2:wait/1/missing"},
		{"a done window needs no Job",
			[]WindowPlan{win(1, v1.StatePublished), win(2, v1.StateMissing)}, nil, JobPolicy{MaxConcurrent: 2},
			"2:create/1/missing"},
		{"a running Job counts against the limit",
			[]WindowPlan{win(1, v1.StateMissing), win(2, v1.StateMissing), win(3, v1.StateMissing)},
			[]JobRecord{{Window: w(1), Attempt: 1, Phase: JobActive}}, JobPolicy{MaxConcurrent: 2},
			"1:wait/0/running 2:create/1/missing 3:wait/1/missing"},
		{"a failed Job is the next attempt of the run once its wait has passed",
			[]WindowPlan{win(1, v1.StateMissing)},
			[]JobRecord{{Window: w(1), Attempt: 1, Phase: JobFailed, Finished: now.Add(-2 * time.Minute)}}, JobPolicy{MaxAttempts: 3, Wait: wait},
			"1:create/2/failed"},
		{"not before its wait",
			[]WindowPlan{win(1, v1.StateMissing)},
			[]JobRecord{{Window: w(1), Attempt: 2, Phase: JobFailed, Finished: now.Add(-time.Minute)}, {Window: w(1), Attempt: 1, Phase: JobFailed}}, JobPolicy{MaxAttempts: 3, Wait: wait},
			"1:at+1m0s/3/failed"},
		{"attempts spent: the window stays failed, or blocked",
			[]WindowPlan{win(1, v1.StateMissing), win(2, v1.StateMissing)},
			[]JobRecord{{Window: w(1), Attempt: 2, Phase: JobFailed}, {Window: w(2), Attempt: 2, Phase: JobBlocked}}, JobPolicy{MaxAttempts: 2, MaxConcurrent: 5},
			"1:wait/0/failed 2:wait/0/blocked"},
		{"a succeeded Job is done even with no key to say so",
			[]WindowPlan{win(1, v1.StateMissing)},
			[]JobRecord{{Window: w(1), Attempt: 1, Phase: JobSucceeded}}, JobPolicy{},
			"1:wait/0/published"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, d := range DecideJobs(c.plans, c.jobs, c.pol, now) {
				what := "wait"
				switch {
				case d.Create:
					what = "create"
				case !d.At.IsZero():
					what = "at+" + d.At.Sub(now).String()
				}
				got = append(got, fmt.Sprintf("%s:%s/%d/%s", d.Plan.Start[8:10], what, d.Attempt, d.State))
			}
			if s := normalize(got); s != c.want {
				t.Errorf("got %s, want %s", s, c.want)
			}
		})
	}
}

// normalize writes a decision's day without its leading zero.
func normalize(ds []string) string {
	for i, d := range ds {
		ds[i] = strings.TrimPrefix(d, "0")
	}
	return strings.Join(ds, " ")
}

func TestJobNamesAreDeterministicAndValid(t *testing.T) {
	a := JobName("Pipeline", "shop", "orders", "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", 1)
	if a != JobName("Pipeline", "shop", "orders", "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", 1) {
		t.Fatal("the same attempt got two names")
	}
	seen := map[string]bool{a: true}
	for _, other := range []string{
		JobName("Pipeline", "shop", "orders", "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", 2),
		JobName("Workflow", "shop", "orders", "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", 1),
		JobName("Pipeline", "other", "orders", "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", 1),
		JobName("Pipeline", "shop", "orders", "2026-08-02T00:00:00Z/2026-08-03T00:00:00Z", 1),
	} {
		if seen[other] {
			t.Errorf("two attempts share the name %s", other)
		}
		seen[other] = true
	}
	long := JobName("Pipeline", "shop", strings.Repeat("a-very-long-name", 6), "w", 1)
	if len(long) > 63 || strings.Contains(long, "--") {
		t.Errorf("%s is not a valid Job name (%d characters)", long, len(long))
	}
	if JobRunID("Pipeline", "shop", "orders", "w") != JobRunID("Pipeline", "shop", "orders", "w") || len(JobRunID("Pipeline", "shop", "orders", "w")) != 36 {
		t.Error("run ids must be deterministic and uuid-shaped")
	}
}

func TestCountStatesAndLastDone(t *testing.T) {
	plans := []WindowPlan{
		{Start: "a", End: "b", State: v1.StatePublished, Action: v1.ActionSkip},
		{Start: "b", End: "c", State: v1.StateMissing, Action: v1.ActionRun},
		{Start: "c", End: "d", State: v1.StateMissing, Action: v1.ActionRun},
	}
	ds := []JobDecision{{Plan: plans[1], State: "published"}, {Plan: plans[2], State: "running"}}
	got := CountStates(plans, ds)
	if got["published"] != 2 || got["running"] != 1 || len(got) != 2 {
		t.Errorf("counts %v", got)
	}
	if l := LastDone(plans, ds); l != "b/c" {
		t.Errorf("last done %s, want b/c", l)
	}
}

// TestJobPhaseState: a window's state on a cluster is one typed WindowState, whatever its last
// Job says; a Job blocked by a data gate leaves the window blocked, not failed.
func TestJobPhaseState(t *testing.T) {
	for p, want := range map[JobPhase]v1.WindowState{
		JobActive: v1.StateRunning, JobSucceeded: v1.StatePublished, JobFailed: v1.StateFailed, JobBlocked: v1.StateBlocked,
	} {
		if got := p.State(); got != want {
			t.Errorf("%s.State() = %s, want %s", p, got, want)
		}
	}
}
