// Package reconcile is the pure core of ldp: it compares the windows an object should have
// (desired) with what the keys on main and the run ledger say is done (observed), and plans
// the difference, window by window and task by task. It does no I/O: everything it reads comes
// in as values, so every state is table-tested, and ldp diff and ldp apply share this one plan.
package reconcile

import (
	"sort"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Task is what planning needs of a workflow task.
type Task struct {
	ID   string
	Kind string // pipeline, maintain, dbt
	// Key returns the idempotency key of the task for a window, or nil for a task no key can
	// vouch for (maintain, dbt, a pipeline that writes a file).
	Key func(v1.LogicalWindow) string
	// Target is the identity of the table whose main holds the task's keys.
	Target    string
	DependsOn []string
}

// Keyed reports whether a key on main can vouch for the task's work.
func (t Task) Keyed() bool { return t.Key != nil }

// Object is a workflow (a dataset config is a workflow of one task).
type Object struct {
	Name  string
	File  string
	Tasks []Task
}

// LastRun is the last run of an object for one window, as the ledger tells it.
type LastRun struct {
	RunID   string
	Attempt int
	// Finished is false for a run that never finished (killed, or still running).
	Finished bool
	// Tasks maps a task id to how its last attempt ended: succeeded, skipped, failed, blocked,
	// upstream_failed. A task that did not run is absent.
	Tasks map[string]string
}

// Observed is the state of the world a plan reads.
type Observed struct {
	// Keys holds, for each target identity, the idempotency keys on its main branch.
	Keys map[string]map[string]bool
	// LastRuns maps a window (LogicalWindow.String()) to the object's last run of it.
	LastRuns map[string]LastRun
}

// HasKey reports whether key is on the main branch of target.
func (o Observed) HasKey(target, key string) bool { return o.Keys[target][key] }

// Window states.
const (
	Published = "published"
	Failed    = "failed"
	Blocked   = "blocked"
	Partial   = "partial"
	Missing   = "missing"
)

// Actions on a window and on a task.
const (
	Skip    = "skip"
	Run     = "run"
	Resume  = "resume"
	Replace = "replace"
)

// Reasons a task is skipped or run.
const (
	ReasonKeyOnMain  = "key on main"
	ReasonNotDone    = "not done"
	ReasonNoKey      = "no key can vouch for it: runs every time"
	ReasonWindowDone = "window published"
	ReasonReplace    = "replace"
)

// TaskPlan is what happens to one task in one window.
type TaskPlan struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Reason string `json:"reason"`
	Key    string `json:"idempotency_key,omitempty"`
}

// WindowPlan is what happens to one window.
type WindowPlan struct {
	Window v1.LogicalWindow `json:"-"`
	Start  string           `json:"start"`
	End    string           `json:"end"`
	State  string           `json:"state"`
	// Unfinished is set when the last run of the window stopped before it finished.
	Unfinished bool `json:"unfinished,omitempty"`
	// LastRun is the run a resume continues (as its next attempt).
	LastRun *LastRun   `json:"-"`
	Action  string     `json:"action"`
	Tasks   []TaskPlan `json:"tasks"`
}

// Options change a plan.
type Options struct {
	// Replace runs every window again under its replace key.
	Replace bool
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
		last, ran := obs.LastRuns[w.String()]
		if ran {
			l := last
			wp.LastRun = &l
			wp.Unfinished = !last.Finished
		}
		wp.State = state(order, w, obs, last, ran)
		switch {
		case opts.Replace:
			wp.Action = Replace
		case wp.State == Published:
			wp.Action = Skip
		case wp.State == Missing && !wp.Unfinished:
			wp.Action = Run
		default:
			wp.Action = Resume
		}
		for _, t := range order {
			tp := TaskPlan{ID: t.ID}
			if t.Keyed() {
				tp.Key = t.Key(w)
			}
			switch {
			case wp.Action == Skip:
				tp.Action, tp.Reason = Skip, ReasonWindowDone
			case wp.Action == Replace:
				tp.Action, tp.Reason = Run, ReasonReplace
			case t.Keyed() && obs.HasKey(t.Target, tp.Key):
				tp.Action, tp.Reason = Skip, ReasonKeyOnMain
			case t.Keyed():
				tp.Action, tp.Reason = Run, ReasonNotDone
			default:
				tp.Action, tp.Reason = Run, ReasonNoKey
			}
			wp.Tasks = append(wp.Tasks, tp)
		}
		out = append(out, wp)
	}
	return out
}

// state applies the contract's rules: published when every keyed task has its key on main and,
// if any task (but maintain) has no key, the last run succeeded for every task; otherwise failed
// or blocked by the last run's outcome, partial when some keys are on main, else missing. A run
// that stopped before every task ran decides nothing: the keys do.
func state(tasks []Task, w v1.LogicalWindow, obs Observed, last LastRun, ran bool) string {
	keyed, onMain, unvouched := 0, 0, false
	for _, t := range tasks {
		if !t.Keyed() {
			if t.Kind != "maintain" {
				unvouched = true
			}
			continue
		}
		keyed++
		if obs.HasKey(t.Target, t.Key(w)) {
			onMain++
		}
	}
	lastSucceeded := ran && last.Finished && len(last.Tasks) > 0
	if ran && last.Finished {
		for _, t := range tasks {
			if s := last.Tasks[t.ID]; s != "succeeded" && s != "skipped" {
				lastSucceeded = false
			}
		}
	}
	if keyed == onMain && (keyed > 0 || lastSucceeded) && (!unvouched || lastSucceeded) {
		return Published
	}
	if ran && last.Finished {
		failed, blocked := false, false
		for _, s := range last.Tasks {
			switch s {
			case "failed": // upstream_failed follows from another task's outcome
				failed = true
			case "blocked":
				blocked = true
			}
		}
		if failed {
			return Failed
		}
		if blocked {
			return Blocked
		}
	}
	if onMain > 0 {
		return Partial
	}
	return Missing
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

// Pending reports whether a plan would run anything.
func Pending(plans []WindowPlan) bool {
	for _, p := range plans {
		if p.Action != Skip {
			return true
		}
	}
	return false
}
