package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/redact"
	"github.com/ldp-dev/ldp/reconcile"
)

// Runner runs workflows. Its clock, sleeper and random source are seams: tests pass fakes.
type Runner struct {
	Now     func() time.Time
	Sleep   func(time.Duration)
	Rand    *rand.Rand
	Log     io.Writer
	Getenv  func(string) string
	Version string
	// Hook is passed to each publish (a test seam).
	Hook func(string)
	// Sinks returns the extra sinks of a pipeline's spec (besides the workflow's ledger); nil
	// is the sinks the spec declares (SinksFor, with Getenv).
	Sinks func(*v1.Pipeline) []ledger.Sink
	// Stopping, when it reports true, makes the runner start no new task or window: the task
	// that is running finishes (a graceful shutdown).
	Stopping func() bool
	// Leases, when set, makes ticks take a lease per window in the workflow's shared
	// (PostgreSQL) catalog instead of the folder's lock, so processes on several machines
	// divide the windows of one folder.
	Leases *LeaseOptions
	// NoWait makes a task that failed with attempts left end its window's run with the time of
	// its retry, instead of sleeping until then: a later reconcile runs the window as the next
	// attempt of the same run when the retry is due (ldp watch, which must not block on one
	// window's backoff).
	NoWait bool
}

// LeaseOptions are how a process holds windows in a shared catalog.
type LeaseOptions struct {
	Holder string        // who holds them: host and process id
	TTL    time.Duration // how long a lease lasts unrenewed (renewed every third of it)
}

func (r *Runner) stopping() bool { return r.Stopping != nil && r.Stopping() }

func (r *Runner) defaults() {
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Sleep == nil {
		r.Sleep = time.Sleep
	}
	if r.Rand == nil {
		r.Rand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
}

// TaskResult is how one task of a window ended.
type TaskResult struct {
	ID       string      `json:"id"`
	Kind     v1.TaskKind `json:"kind"`
	Status   v1.Outcome  `json:"status"`
	Attempts int         `json:"attempts"`
	RunID    string      `json:"run_id,omitempty"`
	Error    string      `json:"error,omitempty"`
	Waits    []float64   `json:"waits_s,omitempty"`
	// RetryAt is when the failed task is due again, when the runner did not wait (NoWait).
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Detail is the kind's own output (its JSON), nil when the task reported nothing.
	Detail tasks.Output `json:"detail,omitempty"`
	// err is the task's error, whose public part the task's event carries (ldperr.Public).
	err error
	// checks are the checks that failed when a data gate blocked the task; fatal is set when
	// the task failed with an error no retry can fix. The task's event carries both, for
	// reconcile.Held.
	checks []string
	fatal  bool
}

// publicError is the task's error as its event carries it: without a row's values.
func (tr *TaskResult) publicError() string {
	if tr.err == nil {
		return tr.Error
	}
	return ldperr.Public(tr.err)
}

// WindowResult is how one window of a workflow ended: one run of its tasks.
type WindowResult struct {
	// RunID and Attempt are set on every run's result (left out of the JSON of a window that
	// did not run: ldp apply -o json lists waiting and stale windows too).
	Workflow string     `json:"workflow"`
	Window   string     `json:"logical_window"`
	RunID    string     `json:"run_id,omitempty"`
	Attempt  int        `json:"attempt,omitempty"`
	Status   v1.Outcome `json:"status"`
	// Env is the environment the window ran in; "" is main.
	Env   string       `json:"env,omitempty"`
	Tasks []TaskResult `json:"tasks"`
	// DurationS is how long the run took, in seconds.
	DurationS float64 `json:"duration_s"`
}

// outcomes are the outcomes of the result's tasks, in run order.
func (res *WindowResult) outcomes() []v1.Outcome {
	out := make([]v1.Outcome, len(res.Tasks))
	for i, t := range res.Tasks {
		out[i] = t.Status
	}
	return out
}

// Reason is why a window did not succeed: the first task that failed or was held back, and its
// error's first line ("" when every task succeeded or was skipped).
func (r *WindowResult) Reason() string {
	for _, t := range r.Tasks {
		if t.Error != "" {
			return t.ID + ": " + strings.SplitN(t.Error, "\n", 2)[0]
		}
	}
	return ""
}

// Outcome folds the run's task outcomes: failed, blocked or succeeded.
func (res *WindowResult) Outcome() v1.Outcome { return reconcile.Fold(res.outcomes()) }

// RunOptions are the run of one window.
type RunOptions struct {
	// RunID and Attempt continue a run (a resume is its next attempt); empty starts a new one.
	RunID   string
	Attempt int
	Replace bool
	// Plan, when given, skips the tasks it skips without running them.
	Plan *reconcile.WindowPlan
	// Group, when set, publishes the window's appends in one commit with other windows.
	Group *lake.Group
	// Sniffs, when set, are the CSV layouts the windows of a backfill share.
	Sniffs *pipeline.Sniffs
	// ledger is the run's held sink (a grouped window's), which its tasks' events go to.
	ledger ledger.Sink
}

// TaskRunID is the run id of a task within a workflow run: kept by every attempt.
func TaskRunID(workflowRunID, taskID string) string { return workflowRunID + "/" + taskID }

// Run runs the tasks of wf for one window, one at a time in dependency order. A task that fails
// or is blocked makes its dependants upstream_failed; independent tasks still run.
func (r *Runner) Run(ctx context.Context, wf *Object, w v1.LogicalWindow, o RunOptions) *WindowResult {
	r.defaults()
	if o.RunID == "" && o.Plan != nil && o.Plan.Continue != nil {
		// The plan decided this window continues its last run, as its next attempt.
		o.RunID, o.Attempt = o.Plan.Continue.RunID, o.Plan.Continue.Attempt
	}
	if o.RunID == "" {
		o.RunID = uuid.Must(uuid.NewV7()).String()
	}
	if o.Attempt < 1 {
		o.Attempt = 1
	}
	res := &WindowResult{Workflow: wf.Name, Window: w.String(), RunID: o.RunID, Attempt: o.Attempt, Env: wf.Env}
	started := time.Now()
	defer func() { res.DurationS = time.Since(started).Seconds() }()
	var sink ledger.Sink = &ledger.FileSink{File: ledger.File{Path: wf.Ledger}}
	if o.Group != nil {
		// A grouped window (a backfill's) writes its lines in one append when it ends.
		held := &ledger.HeldSink{File: ledger.File{Path: wf.Ledger}}
		sink, o.ledger = held, held
		defer func() {
			if err := held.Flush(); err != nil {
				r.warn(fmt.Sprintf("event sink: %s", redact.String(err.Error())))
			}
		}()
	}
	rec := ledger.NewRecorder(o.RunID, o.Attempt, []ledger.Sink{sink}, r.warn)
	defer rec.Close()
	var ids []string
	for _, t := range wf.Tasks {
		ids = append(ids, t.ID)
	}
	var consumed []string
	if o.Plan != nil {
		consumed = o.Plan.Consumed
	}
	rec.Record(ctx, ledger.WorkflowStartedPayload{Workflow: wf.Name, File: wf.File, Window: ledger.WindowOf(w), Tasks: ids, Replace: o.Replace, Evidence: wf.Evidence(w), Env: wf.Env, Upstream: consumed})
	status := map[string]v1.Outcome{}
	planned := map[string]reconcile.TaskPlan{}
	if o.Plan != nil {
		for _, tp := range o.Plan.Tasks {
			planned[tp.ID] = tp
		}
	}
	byID := map[string]v1.Task{}
	for _, t := range wf.Tasks {
		byID[t.ID] = t
	}
	wrote := false
	for _, rt := range reconcile.Order(wf.Planning().Tasks) {
		t := byID[rt.ID]
		tr := TaskResult{ID: t.ID, Kind: t.Kind(), RunID: TaskRunID(o.RunID, t.ID)}
		for _, d := range t.DependsOn {
			if s := status[d]; s.Holds() {
				tr.Status, tr.Error = v1.UpstreamFailed, fmt.Sprintf("depends on %s, which ended %s", d, s)
			}
		}
		if tr.Status == "" && r.stopping() {
			tr.Status, tr.Error = v1.Failed, "not started: ldp is shutting down"
		}
		if tr.Status == "" {
			if tp, ok := planned[t.ID]; ok && tp.Action == v1.ActionSkip {
				tr.Status = v1.Skipped
				tr.Detail = tasks.Skip{Reason: tp.Reason}
			} else {
				r.runTask(ctx, rec, wf, t, w, o, wrote, &tr)
			}
		}
		status[t.ID] = tr.Status
		wrote = wrote || tr.Status == v1.Succeeded
		finished := ledger.TaskFinishedPayload{Task: t.ID, Kind: t.Kind(), Status: tr.Status, Attempts: tr.Attempts, TaskRunID: tr.RunID, Error: tr.publicError(), FailedChecks: tr.checks}
		if f, ok := tr.Detail.(tasks.Fingerprinted); ok {
			finished.Fingerprint = f.Fingerprint()
		}
		if !tr.RetryAt.IsZero() {
			at := tr.RetryAt.UTC()
			finished.RetryAt = &at
		}
		if tr.Attempts > 0 {
			finished.TaskAttempt = o.Attempt + tr.Attempts - 1
		}
		if tr.fatal {
			finished.Retriable = new(false)
		}
		rec.Record(ctx, finished)
		res.Tasks = append(res.Tasks, tr)
	}
	res.Status = reconcile.Fold(res.outcomes())
	rec.Record(ctx, ledger.WorkflowFinishedPayload{Workflow: wf.Name, Window: ledger.WindowOf(w), Status: res.Status, Tasks: status, Env: wf.Env})
	return res
}

// staleConsumed are the upstream keys a stale window's re-run consumes (its replace key is
// made with them), nil for any other run: a plain replace keeps its key.
func staleConsumed(o RunOptions) []string {
	if p := o.Plan; o.Replace && p != nil && len(p.Stale) > 0 && p.Action == v1.ActionReplace {
		return p.Consumed
	}
	return nil
}

// runTask runs one task with its retry policy: the same task run id, the attempt counting up.
func (r *Runner) runTask(ctx context.Context, rec *ledger.Recorder, wf *Object, t v1.Task, w v1.LogicalWindow, o RunOptions, upstreamWrote bool, tr *TaskResult) {
	kind := tasks.Lookup(t.Kind())
	if kind == nil {
		tr.Status, tr.Error = v1.Failed, fmt.Sprintf("no task kind %q is registered in this ldp", t.Kind())
		return
	}
	policy := wf.TaskPolicy(t)
	for n := 1; ; n++ {
		attempt := o.Attempt + n - 1
		tr.Attempts = n
		rec.Record(ctx, ledger.TaskStartedPayload{Task: t.ID, Kind: t.Kind(), TaskRunID: tr.RunID, TaskAttempt: attempt})
		tc := tasks.TaskContext{Spec: wf.spec(t), Workflow: wf.Name, Ledger: wf.Ledger, Window: w, RunID: tr.RunID, Attempt: attempt,
			Replace: o.Replace, StaleConsumed: staleConsumed(o), Group: o.Group, Sniffs: o.Sniffs, LedgerSink: o.ledger, UpstreamWrote: upstreamWrote, Env: r.env(),
			Environment:     wf.Env,
			LastFingerprint: func() string { return lastBuild(wf.Ledger, wf.Name, wf.Env, w.String(), t.ID) }}
		out, err := kind.Run(ctx, tc)
		tr.Detail, tr.err = nil, err
		if out != nil && !reflect.ValueOf(out).IsZero() {
			tr.Detail = out
		}
		switch {
		case err == nil && out != nil && out.Skipped():
			tr.Status, tr.Error = v1.Skipped, ""
			return
		case err == nil:
			tr.Status, tr.Error = v1.Succeeded, ""
			return
		case ldperr.IsDataGate(err):
			tr.Status, tr.Error = v1.Blocked, err.Error()
			var fc interface{ FailedChecks() []string }
			if errors.As(err, &fc) {
				tr.checks = fc.FailedChecks()
			}
			return
		}
		tr.Status, tr.Error = v1.Failed, err.Error()
		if !Retriable(err) {
			tr.fatal = true
			return
		}
		if n >= policy.MaxAttempts || (r.NoWait && reconcile.Spent(attempt, policy.MaxAttempts)) {
			return
		}
		wait := policy.Wait(n, r.Rand.Float64())
		tr.Waits = append(tr.Waits, wait.Seconds())
		if r.NoWait {
			// The window's next run is attempt+1 of this run, when the retry is due.
			tr.RetryAt = r.Now().Add(wait)
			fmt.Fprintf(r.Log, "task %s attempt %d failed (%s); retry due in %s\n", t.ID, attempt, firstLine(err.Error()), wait.Round(time.Millisecond))
			return
		}
		fmt.Fprintf(r.Log, "task %s attempt %d failed (%s); retrying in %s\n", t.ID, attempt, firstLine(err.Error()), wait.Round(time.Millisecond))
		r.Sleep(wait)
	}
}

func (r *Runner) warn(m string) { fmt.Fprintln(r.Log, "warning: "+m) }

// env is what of the runner a task kind may use: its log, clock, version, publish hook, and
// the sinks of a pipeline's events (those Sinks gives, or those the spec declares).
func (r *Runner) env() tasks.Env {
	e := tasks.Env{Log: r.Log, Warn: r.warn, Now: r.Now, Version: r.Version, Hook: r.Hook, Sinks: r.Sinks}
	if e.Sinks == nil && r.Getenv != nil {
		e.Sinks = func(p *v1.Pipeline) []ledger.Sink { return SinksFor(p, r.Version, r.Getenv)[1:] }
	}
	return e
}

// lastBuild is the fingerprint of the last build of task for window in env in the ledger, when it
// succeeded; "" otherwise.
func lastBuild(path, workflow, env, window, task string) string {
	st, err := new(Observer).ledger(path)
	if err != nil {
		return ""
	}
	return st.fold.lastBuild(workflow, env, window, task)
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
