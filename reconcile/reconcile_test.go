package reconcile

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

var (
	d1 = v1.LogicalWindow{Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}
	d2 = v1.LogicalWindow{Start: d1.End, End: d1.End.AddDate(0, 0, 1)}
)

func keyed(id, target string, deps ...string) Task {
	return Task{ID: id, Evidence: ByKey, Target: target, DependsOn: deps, Key: func(w v1.LogicalWindow) string { return id + "@" + w.String() }}
}

func unkeyed(id string, e Evidence, deps ...string) Task {
	return Task{ID: id, Evidence: e, DependsOn: deps}
}

// Outcomes and states, short, for the tables.
const (
	succeeded      = v1.Succeeded
	skipped        = v1.Skipped
	failed         = v1.Failed
	blocked        = v1.Blocked
	upstreamFailed = v1.UpstreamFailed
	Missing        = v1.StateMissing
	Published      = v1.StatePublished
	Partial        = v1.StatePartial
	Failed         = v1.StateFailed
	Blocked        = v1.StateBlocked
	Run            = v1.ActionRun
	Skip           = v1.ActionSkip
	Resume         = v1.ActionResume
	Replace        = v1.ActionReplace
)

func keysOf(pairs ...string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for i := 0; i < len(pairs); i += 2 {
		if out[pairs[i]] == nil {
			out[pairs[i]] = map[string]bool{}
		}
		out[pairs[i]][pairs[i+1]] = true
	}
	return out
}

func TestPlanStates(t *testing.T) {
	two := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), keyed("customers", "t:customers")}}
	withExport := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), unkeyed("export", ByLastRun, "orders")}}
	withMaintain := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), unkeyed("tidy", Nothing, "orders")}}
	k := func(id string) string { return id + "@" + d1.String() }
	ok := func(tasks ...string) map[string]v1.Outcome {
		m := map[string]v1.Outcome{}
		for i := 0; i < len(tasks); i += 2 {
			m[tasks[i]] = v1.Outcome(tasks[i+1])
		}
		return m
	}
	cases := []struct {
		name       string
		obj        Object
		keys       map[string]map[string]bool
		last       *LastRun
		state      v1.WindowState
		action     v1.Action
		tasks      string // id:action, in run order
		unfinished bool
	}{
		{"nothing yet", two, nil, nil, Missing, Run, "orders:run customers:run", false},
		{"every key on main", two, keysOf("t:orders", k("orders"), "t:customers", k("customers")), nil, Published, Skip, "orders:skip customers:skip", false},
		{"one key on main", two, keysOf("t:orders", k("orders")), nil, Partial, Resume, "orders:skip customers:run", false},
		{"last run failed", two, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "failed")}, Failed, Resume, "orders:skip customers:run", false},
		{"last run blocked", two, nil, &LastRun{Finished: true, Tasks: ok("orders", "blocked", "customers", "upstream_failed")}, Blocked, Resume, "orders:run customers:run", false},
		{"blocked only", two, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "blocked")}, Blocked, Resume, "orders:skip customers:run", false},
		{"interrupted run, keys decide", two, keysOf("t:orders", k("orders")), &LastRun{Finished: false, Tasks: ok("orders", "succeeded")}, Partial, Resume, "orders:skip customers:run", true},
		{"interrupted before any key", two, nil, &LastRun{Finished: false}, Missing, Resume, "orders:run customers:run", true},
		{"unkeyed task needs the ledger", withExport, keysOf("t:orders", k("orders")), nil, Partial, Resume, "orders:skip export:run", false},
		{"unkeyed task succeeded last time", withExport, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "skipped", "export", "succeeded")}, Published, Skip, "orders:skip export:skip", false},
		{"maintain needs no ledger", withMaintain, keysOf("t:orders", k("orders")), nil, Published, Skip, "orders:skip tidy:skip", false},
		{"keys gone after a success", two, nil, &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "succeeded")}, Missing, Run, "orders:run customers:run", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := Observed{Keys: c.keys, LastRuns: map[v1.WindowKey]LastRun{}}
			if c.last != nil {
				obs.LastRuns[d1.Key()] = *c.last
			}
			p := Plan(c.obj, []v1.LogicalWindow{d1}, obs, Options{})[0]
			var tasks []string
			for _, tp := range p.Tasks {
				tasks = append(tasks, tp.ID+":"+string(tp.Action))
			}
			if p.State != c.state || p.Action != c.action || strings.Join(tasks, " ") != c.tasks || p.Unfinished != c.unfinished {
				t.Errorf("got %s/%s [%s] unfinished=%v; want %s/%s [%s] unfinished=%v",
					p.State, p.Action, strings.Join(tasks, " "), p.Unfinished, c.state, c.action, c.tasks, c.unfinished)
			}
		})
	}
}

func TestPlanReplaceAndOrder(t *testing.T) {
	obj := Object{Tasks: []Task{keyed("b", "t:b", "a"), keyed("c", "t:c"), keyed("a", "t:a"), unkeyed("d", ByLastRun, "b")}}
	obs := Observed{Keys: keysOf("t:a", "a@"+d2.String())}
	plans := Plan(obj, []v1.LogicalWindow{d2, d1}, obs, Options{})
	if plans[0].Window != d1 || plans[1].Window != d2 {
		t.Errorf("windows out of time order")
	}
	var ids []string
	for _, tp := range plans[0].Tasks {
		ids = append(ids, tp.ID)
	}
	if strings.Join(ids, ",") != "c,a,b,d" {
		t.Errorf("order %v, want c,a,b,d (file order, then dependencies)", ids)
	}
	if plans[1].Tasks[1].Action != Skip || plans[1].Tasks[1].Reason != ReasonKeyOnMain || plans[1].Tasks[3].Reason != ReasonNoKey {
		t.Errorf("tasks of d2 %+v", plans[1].Tasks)
	}
	rep := Plan(obj, []v1.LogicalWindow{d2}, obs, Options{Replace: true})[0]
	if rep.Action != Replace || rep.Tasks[1].Action != Run {
		t.Errorf("replace plan %+v", rep)
	}
	if !Pending(plans) || Pending(nil) {
		t.Error("Pending is wrong")
	}
}

// TestResumeRule is the one rule of whether a window's run continues its last run: only a
// window that resumes does, as the next attempt of that run, and never in a fresh plan (a
// backfill).
func TestResumeRule(t *testing.T) {
	last := &LastRun{RunID: "r1", Attempt: 2, Finished: true}
	cases := []struct {
		name   string
		action v1.Action
		last   *LastRun
		opts   Options
		want   *RunRef
	}{
		{"a resume continues its run", Resume, last, Options{}, &RunRef{RunID: "r1", Attempt: 3}},
		{"an attempt 0 counts as 1", Resume, &LastRun{RunID: "r0"}, Options{}, &RunRef{RunID: "r0", Attempt: 2}},
		{"a fresh plan never does", Resume, last, Options{Fresh: true}, nil},
		{"a new run does not", Run, last, Options{}, nil},
		{"a replace does not", Replace, last, Options{}, nil},
		{"a skip does not", Skip, last, Options{}, nil},
		{"nothing to continue", Resume, nil, Options{}, nil},
		{"a run without an id", Resume, &LastRun{Attempt: 1}, Options{}, nil},
	}
	for _, c := range cases {
		got := Continues(c.action, c.last, c.opts)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	// Through Plan: a failed window resumes as attempt 3 of r1; in a fresh plan, as a new run.
	obj := Object{Tasks: []Task{keyed("orders", "t:orders")}}
	obs := Observed{LastRuns: map[v1.WindowKey]LastRun{d1.Key(): {RunID: "r1", Attempt: 2, Finished: true, Tasks: map[string]v1.Outcome{"orders": failed}}}}
	if p := Plan(obj, []v1.LogicalWindow{d1}, obs, Options{})[0]; p.Action != Resume || p.Continue == nil || *p.Continue != (RunRef{RunID: "r1", Attempt: 3}) {
		t.Errorf("plan of a failed window: %s %+v", p.Action, p.Continue)
	}
	if p := Plan(obj, []v1.LogicalWindow{d1}, obs, Options{Fresh: true})[0]; p.Continue != nil {
		t.Errorf("a fresh plan continues %+v", p.Continue)
	}
}

// TestFold is the one fold of task outcomes into a run's: failed over blocked over succeeded.
func TestFold(t *testing.T) {
	cases := []struct {
		tasks []v1.Outcome
		want  v1.Outcome
	}{
		{nil, succeeded},
		{[]v1.Outcome{succeeded, skipped}, succeeded},
		{[]v1.Outcome{skipped}, succeeded},
		{[]v1.Outcome{blocked, upstreamFailed}, blocked},
		{[]v1.Outcome{succeeded, blocked, failed}, failed},
		{[]v1.Outcome{failed, upstreamFailed}, failed},
		{[]v1.Outcome{upstreamFailed}, succeeded},
	}
	for _, c := range cases {
		if got := Fold(c.tasks); got != c.want {
			t.Errorf("Fold(%v) = %s, want %s", c.tasks, got, c.want)
		}
	}
	if o := (LastRun{Finished: false, Tasks: map[string]v1.Outcome{"a": failed}}).Outcome(); o != "" {
		t.Errorf("an unfinished run has outcome %q, want none", o)
	}
	if o := (LastRun{Finished: true, Tasks: map[string]v1.Outcome{"a": succeeded, "b": blocked}}).Outcome(); o != blocked {
		t.Errorf("a finished run's outcome %q, want blocked", o)
	}
}

// TestWaitForRetry: a failed window whose retry is due later waits (its tasks are skipped and
// nothing runs); at the retry it resumes as the next attempt of the same run. NextRetry is the
// earliest retry any window waits for.
func TestWaitForRetry(t *testing.T) {
	obj := Object{Tasks: []Task{keyed("orders", "t:orders")}}
	at := d2.End.Add(time.Hour) // after d2 ends, so that d2 is finished and runs
	obs := Observed{LastRuns: map[v1.WindowKey]LastRun{d1.Key(): {RunID: "r1", Attempt: 1, Finished: true, RetryAt: at, Tasks: map[string]v1.Outcome{"orders": failed}}}}
	cases := []struct {
		now    time.Time
		action v1.Action
	}{
		{at.Add(-time.Second), v1.ActionWait},
		{at, Resume},
		{at.Add(time.Minute), Resume},
		{time.Time{}, Resume}, // no clock: nothing waits
	}
	for _, c := range cases {
		p := Plan(obj, []v1.LogicalWindow{d1, d2}, obs, Options{Now: c.now})
		w := p[0]
		if w.Action != c.action || w.Continue == nil || *w.Continue != (RunRef{RunID: "r1", Attempt: 2}) {
			t.Errorf("at %s: %s %+v, want %s continuing r1 as attempt 2", c.now, w.Action, w.Continue, c.action)
		}
		if c.action == v1.ActionWait {
			if w.Runs() || w.Tasks[0].Action != Skip || w.Tasks[0].Reason != ReasonRetryLater || !w.RetryAt.Equal(at) {
				t.Errorf("a waiting window: %+v", w)
			}
			if next, ok := NextRetry(p); !ok || !next.Equal(at) {
				t.Errorf("NextRetry = %s %v, want %s", next, ok, at)
			}
			if !Pending(p) { // d2 is missing and runs
				t.Error("d2 should still run")
			}
		}
	}
}

// TestUnfinishedWindows: a window that is not finished at the plan's Now (it has not ended, or
// waits its metadata.window.delay for late rows) waits until its end plus the delay, and
// nothing of it runs (publishing it under its key would skip the rows that land later); one
// that is finished, or is published, is planned as ever.
func TestUnfinishedWindows(t *testing.T) {
	cases := []struct {
		name     string
		now      time.Time
		delay    time.Duration
		keys     map[string]map[string]bool
		replace  bool
		finished bool
		action   v1.Action
	}{
		{"ended", d1.End, 0, nil, false, true, Run},
		{"one instant before its end", d1.End.Add(-time.Nanosecond), 0, nil, false, false, v1.ActionWait},
		{"the day is still going", d1.Start.Add(23*time.Hour + 59*time.Minute), 0, nil, false, false, v1.ActionWait},
		{"in the future", d1.Start.Add(-time.Hour), 0, nil, false, false, v1.ActionWait},
		{"replace waits too", d1.Start.Add(time.Hour), 0, nil, true, false, v1.ActionWait},
		{"published already: skipped, not waiting", d1.Start.Add(time.Hour), 0, keysOf("t:orders", "orders@"+d1.String()), false, false, Skip},
		{"no clock", time.Time{}, 0, nil, false, true, Run},
		{"ended, waiting its 2h delay", d1.End.Add(time.Hour), 2 * time.Hour, nil, false, false, v1.ActionWait},
		{"one instant before its delay is over", d1.End.Add(2*time.Hour - time.Nanosecond), 2 * time.Hour, nil, false, false, v1.ActionWait},
		{"its delay is over", d1.End.Add(2 * time.Hour), 2 * time.Hour, nil, false, true, Run},
		{"replace waits for the delay too", d1.End.Add(time.Minute), 2 * time.Hour, nil, true, false, v1.ActionWait},
		{"no clock, with a delay", time.Time{}, 2 * time.Hour, nil, false, true, Run},
	}
	for _, c := range cases {
		obj := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders")}, Delay: c.delay}
		if got := Finished(d1, c.delay, c.now); got != c.finished {
			t.Errorf("%s: Finished = %v, want %v", c.name, got, c.finished)
		}
		wp := Plan(obj, []v1.LogicalWindow{d1}, Observed{Keys: c.keys}, Options{Now: c.now, Replace: c.replace})[0]
		notFinished := c.action == v1.ActionWait
		if wp.Action != c.action || wp.NotFinished != notFinished || wp.Runs() == notFinished && notFinished {
			t.Errorf("%s: action %s, not finished %v, want %s, %v", c.name, wp.Action, wp.NotFinished, c.action, notFinished)
		}
		ready := d1.End.Add(c.delay)
		if notFinished && (!wp.RetryAt.Equal(ready) || wp.Tasks[0].Action != Skip || wp.Tasks[0].Reason != ReasonNotFinished) {
			t.Errorf("%s: waits until %s, task %+v; want until the window's end plus its delay %s, the task skipped as not finished", c.name, wp.RetryAt, wp.Tasks[0], ready)
		}
	}
}

// TestReplacedWindowIsPublished: a window that a replace loaded first (issue 33: backfill
// --replace, then apply loaded it again) is published, whichever spec the replace ran under;
// a replace of another window, or one whose spec hash main does not carry, vouches for nothing;
// --replace still replaces it.
func TestReplacedWindowIsPublished(t *testing.T) {
	obj := Object{Tasks: []Task{keyed("orders", "t:orders")}}
	k1, k2 := "orders@"+d1.String(), "orders@"+d2.String()
	cases := []struct {
		name   string
		keys   map[string]map[string]bool
		hashes map[string][]string
		state  v1.WindowState
		action v1.Action
	}{
		{"its own key", keysOf("t:orders", k1), nil, Published, Skip},
		{"a replace under the spec on main", keysOf("t:orders", v1.ReplaceKey(k1, "h1")), map[string][]string{"t:orders": {"h1"}}, Published, Skip},
		{"a replace under an older spec", keysOf("t:orders", v1.ReplaceKey(k1, "h0"), "t:orders", v1.ReplaceKey(k2, "h1")), map[string][]string{"t:orders": {"h1", "h0"}}, Published, Skip},
		{"a replace of another window", keysOf("t:orders", v1.ReplaceKey(k2, "h1")), map[string][]string{"t:orders": {"h1"}}, Missing, Run},
		{"a spec hash of another table", keysOf("t:orders", v1.ReplaceKey(k1, "h1")), map[string][]string{"t:other": {"h1"}}, Missing, Run},
		{"no spec hash on main", keysOf("t:orders", v1.ReplaceKey(k1, "h1")), nil, Missing, Run},
	}
	for _, c := range cases {
		obs := Observed{Keys: c.keys, SpecHashes: c.hashes}
		p := Plan(obj, []v1.LogicalWindow{d1}, obs, Options{})[0]
		if p.State != c.state || p.Action != c.action || p.Tasks[0].Action != c.action {
			t.Errorf("%s: %s/%s, task %s; want %s/%s", c.name, p.State, p.Action, p.Tasks[0].Action, c.state, c.action)
		}
		if c.state == Published && p.Tasks[0].Reason != ReasonWindowDone {
			t.Errorf("%s: reason %q", c.name, p.Tasks[0].Reason)
		}
		if r := Plan(obj, []v1.LogicalWindow{d1}, obs, Options{Replace: true})[0]; r.Action != Replace || r.Tasks[0].Action != Run {
			t.Errorf("%s: --replace plans %s/%s", c.name, r.Action, r.Tasks[0].Action)
		}
	}
	// A partial window: one task's window replaced, the other's not done.
	two := Object{Tasks: []Task{keyed("orders", "t:orders"), keyed("customers", "t:customers")}}
	obs := Observed{Keys: keysOf("t:orders", v1.ReplaceKey(k1, "h1")), SpecHashes: map[string][]string{"t:orders": {"h1"}}}
	if p := Plan(two, []v1.LogicalWindow{d1}, obs, Options{})[0]; p.State != Partial || p.Tasks[0].Action != Skip || p.Tasks[0].Reason != ReasonKeyOnMain || p.Tasks[1].Action != Run {
		t.Errorf("partial: %s %+v", p.State, p.Tasks)
	}
}

// TestFoldCounts: counted window states and backfill outcomes fold as Fold does: failed over
// blocked over the rest, a zero count deciding nothing.
func TestFoldCounts(t *testing.T) {
	for _, c := range []struct {
		counts map[v1.WindowState]int32
		want   v1.Outcome
	}{
		{map[v1.WindowState]int32{}, v1.Succeeded},
		{map[v1.WindowState]int32{v1.StatePublished: 3, v1.StateMissing: 1}, v1.Succeeded},
		{map[v1.WindowState]int32{v1.StatePublished: 3, v1.StateBlocked: 1}, v1.Blocked},
		{map[v1.WindowState]int32{v1.StateBlocked: 2, v1.StateFailed: 1, v1.StatePublished: 1}, v1.Failed},
		{map[v1.WindowState]int32{v1.StateFailed: 0, v1.StateBlocked: 1}, v1.Blocked},
	} {
		if got := FoldCounts(c.counts); got != c.want {
			t.Errorf("FoldCounts(%v) = %s, want %s", c.counts, got, c.want)
		}
	}
	if got := FoldCounts(map[string]int{"failed": 1}); got != v1.Failed {
		t.Errorf("FoldCounts over strings = %s", got)
	}
}

// TestWorstCellFoldsAsFold: a window's summary cell is the worst of its tasks', in the order
// Fold folds outcomes.
func TestWorstCellFoldsAsFold(t *testing.T) {
	cellOf := map[v1.Outcome]CellState{v1.Succeeded: CellPublished, v1.Skipped: CellSkipped, v1.Failed: CellFailed, v1.Blocked: CellBlocked, v1.UpstreamFailed: CellUpstreamFailed}
	all := []v1.Outcome{v1.Succeeded, v1.Skipped, v1.Failed, v1.Blocked, v1.UpstreamFailed}
	for _, a := range all {
		for _, b := range all {
			got := WorstCell([]CellState{cellOf[a], cellOf[b]})
			if f := Fold([]v1.Outcome{a, b}); f != v1.Succeeded && got != cellOf[f] {
				t.Errorf("WorstCell(%s, %s) = %s, but Fold gives %s", cellOf[a], cellOf[b], got, f)
			}
		}
	}
	for _, c := range []struct {
		cells []CellState
		want  CellState
	}{
		{nil, CellPublished},
		{[]CellState{CellWaiting}, CellPublished},
		{[]CellState{CellPublished, CellMissing, CellSkipped}, CellMissing},
		{[]CellState{CellBlocked, CellRetrying, CellUnfinished}, CellRetrying},
		{[]CellState{CellUpstreamFailed, CellBlocked}, CellBlocked},
		{[]CellState{CellRetrying, CellFailed}, CellFailed},
	} {
		if got := WorstCell(c.cells); got != c.want {
			t.Errorf("WorstCell(%v) = %s, want %s", c.cells, got, c.want)
		}
	}
}
