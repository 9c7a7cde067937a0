package v1

// TaskKind is what a workflow task does. Each kind is registered once, in controllers, with
// how it runs and what can vouch that its work is done.
type TaskKind string

// Task kinds.
const (
	TaskPipeline TaskKind = "pipeline"
	TaskMaintain TaskKind = "maintain"
	TaskDbt      TaskKind = "dbt"
	TaskSQL      TaskKind = "sql"
)

// WindowState is what the world says of one window of an object: its keys on main and its
// last run.
type WindowState string

// Window states.
const (
	StatePublished WindowState = "published"
	StateFailed    WindowState = "failed"
	StateBlocked   WindowState = "blocked"
	StatePartial   WindowState = "partial"
	StateMissing   WindowState = "missing"
)

// Action is what a plan does with a window or a task.
type Action string

// Actions.
const (
	ActionSkip    Action = "skip"
	ActionRun     Action = "run"
	ActionResume  Action = "resume"
	ActionReplace Action = "replace"
	// ActionWait is a window whose last run failed and waits for its retry: a later reconcile
	// runs it as the next attempt when the retry is due.
	ActionWait Action = "wait"
	// ActionHold is a window the schedule leaves alone until something changes: a data gate
	// held its last run back, or its last run spent its attempts (reconcile.Hold says which).
	// ldp run --window, apply --window and backfill still run it when asked.
	ActionHold Action = "hold"
)

// Outcome is how a task ended, and, folded over its tasks, how a run of a window ended.
type Outcome string

// Outcomes. A run's outcome is Succeeded, Blocked or Failed.
const (
	Succeeded      Outcome = "succeeded"
	Skipped        Outcome = "skipped"
	Failed         Outcome = "failed"
	Blocked        Outcome = "blocked"
	UpstreamFailed Outcome = "upstream_failed"
)

// Done reports whether the outcome leaves the task's work done: it succeeded, or found it done.
func (o Outcome) Done() bool { return o == Succeeded || o == Skipped }

// Holds reports whether the outcome stops the tasks that depend on it.
func (o Outcome) Holds() bool { return o == Failed || o == Blocked || o == UpstreamFailed }
