// Package reconcile is the pure core of ldp: it compares the windows an object should have
// (desired) with what the keys on main and the run ledger say is done (observed), and plans
// the difference, window by window and task by task. Every decision of ldp about what to run
// is here, once: a window's state, its action, whether it continues its last run (which run
// and attempt), each task's action and reason, and how a run's task outcomes fold into the
// run's. It does no I/O: everything it reads comes in as values, so every rule is
// table-tested, and every entry point (diff, apply, tick, watch, backfill) shares this plan.
package reconcile

import (
	"sort"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Evidence is what can vouch that a task's work for a window is done. A task kind says which
// it has (controllers registers the kinds); planning never looks at a kind's name.
type Evidence int

const (
	// ByKey: the task publishes under an idempotency key, and the key on main is proof.
	ByKey Evidence = iota
	// ByLastRun: nothing on main can vouch for the task (a dbt build, a file export): only
	// its last run having succeeded says the window is done.
	ByLastRun
	// Nothing: the task's work is never "done" for a window (maintenance); it runs whenever
	// its window runs and does not decide the window's state.
	Nothing
)

// Task is what planning needs of a workflow task.
type Task struct {
	ID string
	// Evidence is what vouches for the task's work; ByKey needs Key and Target.
	Evidence Evidence
	// Key returns the idempotency key of the task for a window.
	Key func(v1.LogicalWindow) string
	// Target is the identity of the table whose main holds the task's keys.
	Target    string
	DependsOn []string
	// MaxAttempts is how many attempts the task's retries allow (0 counts as 1).
	MaxAttempts int
}

// Keyed reports whether a key on main can vouch for the task's work.
func (t Task) Keyed() bool { return t.Evidence == ByKey && t.Key != nil }

// Object is a workflow (a dataset config is a workflow of one task).
type Object struct {
	Name  string
	File  string
	Tasks []Task
	// Delay is how long after its end a window waits for late rows (metadata.window.delay).
	Delay time.Duration
	// Upstreams are the objects whose overlapping windows a window waits for (Waits).
	Upstreams []Upstream
}

// LastRun is the last run of an object for one window, as the ledger tells it.
type LastRun struct {
	RunID   string
	Attempt int
	// Finished is false for a run that never finished (killed, or still running).
	Finished bool
	// Tasks maps a task id to how its last attempt ended. A task that did not run is absent.
	Tasks map[string]v1.Outcome
	// RetryAt, when set, is when the run's failed task is due for its next attempt: the run
	// ended without waiting for it (a watcher does not block on one window's backoff).
	RetryAt time.Time
	// Evidence is what the run saw of its spec and source (controllers computes it); "" for
	// a run written before ldp recorded it, which is never held.
	Evidence string
	// TaskAttempts maps a task id to the attempt its last try was, counted over the run's
	// attempts (a run's attempt n that tried a task twice reached n+1).
	TaskAttempts map[string]int
	// Fatal marks the tasks that failed with an error no retry can fix (a config error).
	Fatal map[string]bool
	// Checks maps a task a data gate blocked to the checks that failed.
	Checks map[string][]string
	// Consumed are the upstream keys the run's window saw on main when it was planned
	// (Consumed); nil for a run of an object without upstreams, or written before ldp
	// recorded them, which is never stale.
	Consumed []string
	// PublishedFrom are the upstream keys the window's rows on main were made from: the
	// Consumed of the last of its runs that succeeded, this one or an earlier one
	// (PublishedFrom). Staleness is judged by them, not by Consumed: a re-run that failed
	// published nothing, so the keys it consumed are in no row (issue 32).
	PublishedFrom []string
}

// PublishedFrom is the rule of which run a window's staleness is judged by: of a window's
// runs, oldest first, the last that finished and succeeded (its tasks done) published the
// rows on main, so its consumed upstream keys are what they were made from. A run that
// failed, was blocked or never finished after it changed no row; nil when no run succeeded,
// or the one that did recorded nothing (an older ldp), which is never stale.
func PublishedFrom(history []LastRun) []string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Outcome() == v1.Succeeded {
			return history[i].Consumed
		}
	}
	return nil
}

// Outcome folds the run's task outcomes: failed over blocked over succeeded (upstream_failed
// follows from another task's outcome and decides nothing by itself). A run that never
// finished, or in which no task ran, has no outcome ("").
func (l LastRun) Outcome() v1.Outcome {
	if !l.Finished || len(l.Tasks) == 0 {
		return ""
	}
	outcomes := make([]v1.Outcome, 0, len(l.Tasks))
	for _, o := range l.Tasks {
		outcomes = append(outcomes, o)
	}
	return Fold(outcomes)
}

// Fold is the outcome of a run from the outcomes of its tasks: failed if one failed, else
// blocked if one was held back by a data gate (or could not run because of one), else
// succeeded. This is the one fold of outcomes: the run's status, a window's state and the
// exit code of a command all come from it.
func Fold(tasks []v1.Outcome) v1.Outcome {
	out := v1.Succeeded
	for _, o := range tasks {
		switch o {
		case v1.Failed:
			return v1.Failed
		case v1.Blocked:
			out = v1.Blocked
		}
	}
	return out
}

// FoldCounts is Fold over counted outcomes: counts maps how windows (or tasks) ended, spelled
// as an Outcome (the window states failed and blocked are), to how many ended so. A
// backfill's outcome and a Kubernetes object's Ready condition come from it.
func FoldCounts[K ~string, N ~int | ~int32](counts map[K]N) v1.Outcome {
	outcomes := make([]v1.Outcome, 0, len(counts))
	for k, n := range counts {
		if n > 0 {
			outcomes = append(outcomes, v1.Outcome(k))
		}
	}
	return Fold(outcomes)
}

// Succeeded reports whether the run finished with every task of tasks done.
func (l LastRun) succeeded(tasks []Task) bool {
	if !l.Finished || len(l.Tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		if !l.Tasks[t.ID].Done() {
			return false
		}
	}
	return true
}

// Observed is the state of the world a plan reads.
type Observed struct {
	// Keys holds, for each target identity, the idempotency keys on its main branch.
	Keys map[string]map[string]bool
	// SpecHashes holds, for each target identity, the distinct spec hashes of the keyed
	// snapshots on its main: the replace keys of a window are made from them.
	SpecHashes map[string][]string
	// LastRuns maps a window to the object's last run of it.
	LastRuns map[v1.WindowKey]LastRun
	// Evidence maps a window whose last run may hold it (MayHold) to the evidence of its spec
	// and source now: the same as its last run's keeps it held.
	Evidence map[v1.WindowKey]string
}

// HasKey reports whether key is on the main branch of target.
func (o Observed) HasKey(target, key string) bool { return o.Keys[target][key] }

// Published reports whether the window of idempotency key key is on the main branch of target:
// under the key itself or under one of its replace keys (v1.WindowKeys), so a window that a
// replace loaded first is not loaded again.
func (o Observed) Published(target, key string) bool {
	for k := range v1.WindowKeys(key, o.SpecHashes[target]) {
		if o.HasKey(target, k) {
			return true
		}
	}
	return false
}

// Reasons a task is skipped or run.
const (
	ReasonKeyOnMain   = "key on main"
	ReasonNotDone     = "not done"
	ReasonNoKey       = "no key can vouch for it: runs every time"
	ReasonWindowDone  = "window published"
	ReasonReplace     = "replace"
	ReasonRetryLater  = "the window waits for its retry"
	ReasonNotFinished = "the window is not finished"
	ReasonHeld        = "the window is held until its source or spec changes"
)

// TaskPlan is what happens to one task in one window.
type TaskPlan struct {
	ID     string    `json:"id"`
	Action v1.Action `json:"action"`
	Reason string    `json:"reason"`
	Key    string    `json:"idempotency_key,omitempty"`
}

// RunRef names a run and the attempt of it that a window's next run is.
type RunRef struct {
	RunID   string
	Attempt int
}

// WindowPlan is what happens to one window.
type WindowPlan struct {
	Window v1.LogicalWindow `json:"-"`
	Start  string           `json:"start"`
	End    string           `json:"end"`
	State  v1.WindowState   `json:"state"`
	// Unfinished is set when the last run of the window stopped before it finished.
	Unfinished bool `json:"unfinished,omitempty"`
	// LastRun is the window's last run, as the ledger tells it.
	LastRun *LastRun `json:"-"`
	// Continue, when set, is the run this window's run continues, as its next attempt: the
	// attempt fences every older one. Nil starts a run of its own.
	Continue *RunRef `json:"-"`
	// NotFinished is set when the window is not finished at the plan's Now (it has not ended,
	// or waits its delay for late rows): it waits (its RetryAt is when it is finished) and
	// nothing of it runs.
	NotFinished bool `json:"not_finished,omitempty"`
	// RetryAt is when a waiting window's retry is due, or the end of a window not finished.
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Held, with the action hold, is why the schedule leaves the window alone.
	Held *Hold `json:"held,omitempty"`
	// Waiting, with the action wait, is what the window's upstream objects still lack: it
	// runs once every upstream window that overlaps it is published (Waits).
	Waiting []Wait `json:"waiting,omitempty"`
	// Stale, on a published window, are the upstream windows replaced under a new key after
	// it ran (Stale); Consumed, on a window that runs, the upstream keys its run consumes.
	Stale    []Stale    `json:"stale,omitempty"`
	Consumed []string   `json:"-"`
	Action   v1.Action  `json:"action"`
	Tasks    []TaskPlan `json:"tasks"`
}

// Key is the key of the window p plans.
func (p WindowPlan) Key() v1.WindowKey { return v1.KeyOf(p.Start, p.End) }

// Options change a plan.
type Options struct {
	// Replace runs every window again under its replace key.
	Replace bool
	// Fresh runs every window as a run of its own, never as the next attempt of its last run
	// (a backfill's rule: it does not carry a failed run on).
	Fresh bool
	// Now is when the plan is made: a window whose retry is due later waits, and so does a
	// window that has not ended. Zero plans as if every window had ended.
	Now time.Time
	// Hold holds the windows whose last run was blocked or spent its attempts, while the
	// evidence is unchanged (Held): the plans of the schedule's windows (diff, apply, tick,
	// watch, status). A window asked for by name is run.
	Hold bool
	// Stale runs again, under its replace key, each published window that is stale (an
	// upstream window it consumed was replaced under a new key since): ldp apply --stale.
	// Without it a stale window is shown and left alone.
	Stale bool
}

// Plan decides, for each desired window of obj, its state and what to do. Windows come out
// in time order and tasks in run order.
func Plan(obj Object, windows []v1.LogicalWindow, obs Observed, opts Options) []WindowPlan {
	order := Order(obj.Tasks)
	ws := append([]v1.LogicalWindow(nil), windows...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].Start.Before(ws[j].Start) })
	out := make([]WindowPlan, 0, len(ws))
	for _, w := range ws {
		wp := WindowPlan{Window: w, Start: v1.FormatInstant(w.Start), End: v1.FormatInstant(w.End)}
		last, ran := obs.LastRuns[w.Key()]
		if ran {
			l := last
			wp.LastRun = &l
			wp.Unfinished = !last.Finished
		}
		wp.State = State(order, w, obs, wp.LastRun)
		wp.Action = WindowAction(wp.State, wp.Unfinished, opts)
		if wp.Action == v1.ActionResume && RetryPending(wp.LastRun, opts.Now) {
			wp.Action, wp.RetryAt = v1.ActionWait, wp.LastRun.RetryAt
		}
		if wp.Action == v1.ActionResume && opts.Hold {
			if h := Held(obj, w, wp.LastRun, obs.Evidence[w.Key()]); h != nil {
				wp.Action, wp.Held = v1.ActionHold, h
			}
		}
		if wp.Action != v1.ActionSkip && !Finished(w, obj.Delay, opts.Now) {
			wp.NotFinished, wp.Action, wp.RetryAt = true, v1.ActionWait, ReadyAt(w, obj.Delay)
		}
		if len(obj.Upstreams) > 0 {
			if wp.State == v1.StatePublished && wp.Action == v1.ActionSkip {
				if wp.Stale = StaleUpstream(obj.Upstreams, w, obs, wp.LastRun); len(wp.Stale) > 0 && opts.Stale {
					wp.Action = v1.ActionReplace
				}
			}
			wp.Action, wp.Waiting = waitsUpstream(wp.Action, Waits(obj.Upstreams, w, obs))
			if wp.Runs() {
				wp.Consumed = Consumed(obj.Upstreams, w, obs)
			}
		}
		wp.Continue = Continues(wp.Action, wp.LastRun, opts)
		for _, t := range order {
			tp := TaskAction(t, w, wp.Action, obs)
			switch {
			case wp.NotFinished:
				tp.Reason = ReasonNotFinished
			case len(wp.Waiting) > 0:
				tp.Reason = ReasonUpstream
			case len(wp.Stale) > 0 && wp.Action == v1.ActionReplace:
				tp.Reason = ReasonStale
			}
			wp.Tasks = append(wp.Tasks, tp)
		}
		out = append(out, wp)
	}
	return out
}

// Finished reports whether window w has ended, and waited delay for its late rows, at now, so
// that its rows are all in and it can be published under its key. A window published before
// then would be skipped for good once its key is on main, and the rows that land later in it
// would never be loaded. This is the one rule every entry point (run, backfill, apply, diff,
// tick, watch, status) asks. A zero now (no clock) counts every window as finished.
func Finished(w v1.LogicalWindow, delay time.Duration, now time.Time) bool {
	return now.IsZero() || !now.Before(ReadyAt(w, delay))
}

// ReadyAt is when window w is finished: its end plus the delay for its late rows.
func ReadyAt(w v1.LogicalWindow, delay time.Duration) time.Time { return w.End.Add(delay) }

// WindowAction is what to do with a window in state: a published window is skipped, a
// missing one runs, any other (failed, blocked, partial, or a run that never finished) resumes;
// Replace runs every window again.
func WindowAction(state v1.WindowState, unfinished bool, opts Options) v1.Action {
	switch {
	case opts.Replace:
		return v1.ActionReplace
	case state == v1.StatePublished:
		return v1.ActionSkip
	case state == v1.StateMissing && !unfinished:
		return v1.ActionRun
	}
	return v1.ActionResume
}

// RetryPending reports whether the last run waits for a retry that is not due at now.
func RetryPending(last *LastRun, now time.Time) bool {
	return last != nil && !last.RetryAt.IsZero() && !now.IsZero() && now.Before(last.RetryAt)
}

// NextRetry is the earliest retry that the plans wait for, and whether there is one.
func NextRetry(plans []WindowPlan) (time.Time, bool) {
	var next time.Time
	for _, p := range plans {
		if p.Action == v1.ActionWait && !p.RetryAt.IsZero() && (next.IsZero() || p.RetryAt.Before(next)) {
			next = p.RetryAt
		}
	}
	return next, !next.IsZero()
}

// Continues is the one resume rule: a window that resumes continues its last run as that
// run's next attempt (same run id, attempt + 1), unless the plan is Fresh. Every other window
// starts a run of its own.
func Continues(action v1.Action, last *LastRun, opts Options) *RunRef {
	if (action != v1.ActionResume && action != v1.ActionWait) || last == nil || last.RunID == "" || opts.Fresh {
		return nil
	}
	return &RunRef{RunID: last.RunID, Attempt: max(last.Attempt, 1) + 1}
}

// TaskAction is what happens to task t in window w when the window's action is action.
func TaskAction(t Task, w v1.LogicalWindow, action v1.Action, obs Observed) TaskPlan {
	tp := TaskPlan{ID: t.ID}
	if t.Keyed() {
		tp.Key = t.Key(w)
	}
	switch {
	case action == v1.ActionSkip:
		tp.Action, tp.Reason = v1.ActionSkip, ReasonWindowDone
	case action == v1.ActionWait:
		tp.Action, tp.Reason = v1.ActionSkip, ReasonRetryLater
	case action == v1.ActionHold:
		tp.Action, tp.Reason = v1.ActionSkip, ReasonHeld
	case action == v1.ActionReplace:
		tp.Action, tp.Reason = v1.ActionRun, ReasonReplace
	case t.Keyed() && obs.Published(t.Target, tp.Key):
		tp.Action, tp.Reason = v1.ActionSkip, ReasonKeyOnMain
	case t.Keyed():
		tp.Action, tp.Reason = v1.ActionRun, ReasonNotDone
	default:
		tp.Action, tp.Reason = v1.ActionRun, ReasonNoKey
	}
	return tp
}

// State applies the contract's rules: published when every keyed task has its key (or a
// replace of it) on main and, if a task can only be vouched for by its last run, the last run
// succeeded for every task; otherwise failed or blocked by the last run's outcome, partial when
// some keys are on main, else missing. A run that stopped before every task ran decides
// nothing: the keys do.
func State(tasks []Task, w v1.LogicalWindow, obs Observed, last *LastRun) v1.WindowState {
	keyed, onMain, byRun := 0, 0, false
	for _, t := range tasks {
		switch {
		case t.Keyed():
			keyed++
			if obs.Published(t.Target, t.Key(w)) {
				onMain++
			}
		case t.Evidence == ByLastRun:
			byRun = true
		}
	}
	var run LastRun
	if last != nil {
		run = *last
	}
	succeeded := run.succeeded(tasks)
	if keyed == onMain && (keyed > 0 || succeeded) && (!byRun || succeeded) {
		return v1.StatePublished
	}
	switch run.Outcome() {
	case v1.Failed:
		return v1.StateFailed
	case v1.Blocked:
		return v1.StateBlocked
	}
	if onMain > 0 {
		return v1.StatePartial
	}
	return v1.StateMissing
}

// Order sorts tasks topologically; tasks that nothing orders keep their file order. A cycle
// cannot reach here (validation rejects it); its tasks would come last in file order.
func Order(tasks []Task) []Task {
	index := map[string]int{}
	for i, t := range tasks {
		index[t.ID] = i
	}
	done := map[string]bool{}
	var out []Task
	for len(out) < len(tasks) {
		progressed := false
		for _, t := range tasks {
			if done[t.ID] {
				continue
			}
			ready := true
			for _, d := range t.DependsOn {
				if _, known := index[d]; known && !done[d] {
					ready = false
				}
			}
			if ready {
				done[t.ID] = true
				out = append(out, t)
				progressed = true
				break // restart from the top: the earliest ready task in file order goes next
			}
		}
		if !progressed {
			for _, t := range tasks {
				if !done[t.ID] {
					done[t.ID] = true
					out = append(out, t)
				}
			}
		}
	}
	return out
}

// Pending reports whether a plan would run anything now.
func Pending(plans []WindowPlan) bool {
	for _, p := range plans {
		if p.Runs() {
			return true
		}
	}
	return false
}

// WaitsUpstream reports whether the window waits for its upstream windows: nothing runs it,
// a backfill included, until they are published.
func (p WindowPlan) WaitsUpstream() bool { return len(p.Waiting) > 0 }

// Runs reports whether the window runs now: it is neither done, nor waiting for a retry, its
// upstream windows or its end, nor held.
func (p WindowPlan) Runs() bool {
	return p.Action != v1.ActionSkip && p.Action != v1.ActionWait && p.Action != v1.ActionHold
}
