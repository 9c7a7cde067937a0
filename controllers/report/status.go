package report

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/shell"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// StatusReport is what the status page shows and ldp status -o json prints: every object under
// the paths, a row per task and a column per window, from Reconcile in dry run and the
// ledger. It computes nothing of its own: each cell is reconcile.Cell of the window's plan.
type StatusReport struct {
	Generated time.Time `json:"generated"`
	// Env is the environment the report is of ("" is main): its windows are those published
	// on the environment's branches and its runs the environment's (controllers.Object.InEnv).
	Env     string         `json:"env,omitempty"`
	Objects []ObjectStatus `json:"objects"`
	Invalid []InvalidFile  `json:"invalid"`
}

// States are the report's objects by name, each with its windows by state: what the window
// gauges of controllers.Metrics show.
func (r *StatusReport) States() iter.Seq2[string, map[string]int] {
	return func(yield func(string, map[string]int) bool) {
		for _, o := range r.Objects {
			if !yield(o.Name, o.Summary) {
				return
			}
		}
	}
}

// InvalidFile is a spec the report could not plan, with its problems as file:line:col lines.
type InvalidFile struct {
	File     string   `json:"file"`
	Problems []string `json:"problems"`
}

// ObjectStatus is one object's grid.
type ObjectStatus struct {
	Name     string `json:"name"`
	File     string `json:"file"`
	Kind     string `json:"kind"`
	Schedule string `json:"schedule,omitempty"`
	Timezone string `json:"timezone"`
	// Windows are the grid's columns: every window of a fire since the object's start, or
	// since the first window its ledger holds, to now. Starts is each window's start (RFC 3339, UTC) run-length
	// encoded by step: the first start, then [step in seconds, how many]; Hours marks the
	// windows of a day that are not 24 hours long (daylight saving), by index.
	Windows WindowAxis `json:"windows"`
	// Summary counts the windows by state; Tasks are the rows, in run order.
	Summary  map[string]int `json:"summary"`
	Tasks    []TaskRow      `json:"tasks"`
	NextFire string         `json:"next_fire,omitempty"`
	// End is the schedule's end (metadata.end, RFC 3339, UTC): no window after it is expected.
	End      string         `json:"end,omitempty"`
	Missed   []v1.WindowKey `json:"missed,omitempty"`
	Backfill string         `json:"backfill,omitempty"`
	// Waiting is the object's window that is not finished at now, and when it may run: it is
	// not missing, nothing of it runs until then.
	Waiting *WaitingWindow `json:"waiting,omitempty"`
	// Held are the windows the schedule leaves alone until their source or spec changes, and
	// why (reconcile.Held): the schedule does not run them again, though they are not done.
	Held []HeldWindow `json:"held,omitempty"`
	// WaitingUpstream are the windows that wait for their upstream objects' windows
	// (reconcile.Waits), each with what is missing and the sentence views show.
	WaitingUpstream []UpstreamWaiting `json:"waiting_upstream,omitempty"`
	// Stale are the published windows an upstream window they consumed was replaced under a
	// new key since (reconcile.StaleUpstream): ldp apply --stale runs them again.
	Stale []StaleWindow `json:"stale,omitempty"`
	Error string        `json:"error,omitempty"`
}

// StaleWindow is a published window made from upstream data since replaced.
type StaleWindow struct {
	Window  v1.WindowKey      `json:"window"`
	Stale   []reconcile.Stale `json:"upstreams"`
	Message string            `json:"message"`
}

// UpstreamWaiting is a window that waits for windows of its upstream objects.
type UpstreamWaiting struct {
	Window  v1.WindowKey     `json:"window"`
	Waits   []reconcile.Wait `json:"waits"`
	Message string           `json:"message"`
}

// HeldWindow is a window the schedule holds, and why.
type HeldWindow struct {
	Window v1.WindowKey `json:"window"`
	*reconcile.Hold
}

// WaitingWindow is a window that is not finished: it has not ended, or waits its
// metadata.window.delay for late rows. Times are RFC 3339 in UTC.
type WaitingWindow struct {
	Window v1.WindowKey `json:"window"`
	// ReadyAt is when it is finished (its end plus the delay): a run of it is refused before.
	ReadyAt string `json:"ready_at"`
	// RunsAt is the schedule's fire that runs it (none without a schedule).
	RunsAt string `json:"runs_at,omitempty"`
	Delay  string `json:"delay,omitempty"`
}

// waitingOf is the window of wf not finished at now that status shows: the first of the
// grid's, else the window of the first fire after now whose window is not finished, else (no
// schedule) the window that holds now.
func waitingOf(wf *controllers.Object, plans []controllers.WindowPlan, next time.Time, now time.Time) *WaitingWindow {
	out := func(w v1.LogicalWindow, runs time.Time) *WaitingWindow {
		if !wf.End.IsZero() && w.End.After(wf.End) {
			return nil // past the schedule's end no window is expected, so none waits
		}
		ww := &WaitingWindow{Window: w.Key(), ReadyAt: reconcile.ReadyAt(w, wf.Window.Delay).UTC().Format(time.RFC3339)}
		if !runs.IsZero() {
			ww.RunsAt = runs.UTC().Format(time.RFC3339)
		}
		if wf.Window.Delay > 0 {
			ww.Delay = wf.Window.Delay.String()
		}
		return ww
	}
	for _, p := range plans {
		if p.NotFinished {
			return out(p.Window, time.Time{})
		}
	}
	if !next.IsZero() {
		// The next fire's window may have ended already (a fire at 02:05 runs the day before):
		// the window not finished is then a later fire's.
		spec, err := wf.Cron()
		for i := 0; err == nil && i < 4; i++ {
			w, werr := controllers.WindowOfFire(wf, next)
			if werr != nil {
				return nil
			}
			if !reconcile.Finished(w, wf.Window.Delay, now) {
				return out(w, next)
			}
			next, err = cronx.Next(spec, next, wf.Window.Location)
		}
		return nil
	}
	if size := wf.Size(); size != "" {
		if w, err := window.Of(now, size, wf.Window.Location); err == nil && !reconcile.Finished(w, wf.Window.Delay, now) {
			return out(w, time.Time{})
		}
	}
	return nil
}

// WindowAxis is the columns of a grid.
type WindowAxis struct {
	Count int        `json:"count"`
	First string     `json:"first,omitempty"`
	Steps [][2]int64 `json:"steps"`
	Odd   []OddDay   `json:"odd_days,omitempty"`
}

// OddDay is a day window that is not 24 hours long.
type OddDay struct {
	Index int `json:"index"`
	Hours int `json:"hours"`
}

// TaskRow is one task's cells, run-length encoded by state, and the cells whose windows went
// wrong before their last try.
type TaskRow struct {
	ID    string              `json:"id"`
	Kind  v1.TaskKind         `json:"kind"`
	Cells []reconcile.CellRun `json:"cells"`
	Marks []CellMark          `json:"marks,omitempty"`
}

// CellMark is a cell (by window index) with earlier tries that did not publish: a window a
// data gate held back and a fix then published is a published cell, marked blocked before.
type CellMark struct {
	Index   int                   `json:"i"`
	Start   string                `json:"start"`
	Earlier []reconcile.CellState `json:"earlier"`
}

// Status builds the report of the objects under paths at now, on main.
func Status(ctx context.Context, r *controllers.Reconciler, paths []string, now time.Time) (*StatusReport, error) {
	return StatusIn(ctx, r, paths, now, "")
}

// StatusIn builds the report of the objects under paths at now in environment env ("" is
// main): their keys on env's branches, their runs in env.
func StatusIn(ctx context.Context, r *controllers.Reconciler, paths []string, now time.Time, env string) (*StatusReport, error) {
	found, _, err := controllers.DiscoverIn(paths, false, env)
	if err != nil {
		return nil, err
	}
	rep := &StatusReport{Generated: now.UTC(), Env: env, Objects: []ObjectStatus{}, Invalid: []InvalidFile{}}
	obs := new(controllers.Observer)
	defer obs.Close()
	for _, sc := range found {
		if len(sc.Problems) > 0 {
			inv := InvalidFile{File: sc.Path}
			for _, p := range sc.Problems {
				inv.Problems = append(inv.Problems, p.String())
			}
			rep.Invalid = append(rep.Invalid, inv)
			continue
		}
		rep.Objects = append(rep.Objects, objectStatus(ctx, r, obs, sc, now))
	}
	return rep, nil
}

// gridPlans plans an object's columns, with its schedule's status: every window of a fire
// since its start or the first window its ledger holds, done or not (StatusOf's one
// observation). An object with no schedule has the range of the windows its ledger holds.
func gridPlans(ctx context.Context, r *controllers.Reconciler, obs *controllers.Observer, sc controllers.Scheduled, now time.Time) ([]controllers.WindowPlan, *controllers.ScheduleStatus, error) {
	if sc.WF.Schedule != "" {
		st, err := obs.StatusOf(ctx, sc, now, 1000)
		if err != nil {
			return nil, nil, err
		}
		return st.Grid, st, nil
	}
	hist, err := obs.History(sc.WF)
	if err != nil {
		return nil, nil, err
	}
	var first, last string
	for w := range hist {
		a, b, ok := w.Bounds()
		if !ok {
			continue
		}
		if first == "" || a < first {
			first = a
		}
		if b > last {
			last = b
		}
	}
	if first == "" || sc.WF.Size() == "" {
		return nil, nil, nil
	}
	res, err := r.Reconcile(ctx, controllers.Request{Object: sc, From: first, To: last, Now: now, DryRun: true})
	return res.Windows, nil, err
}

func objectStatus(ctx context.Context, r *controllers.Reconciler, obs *controllers.Observer, sc controllers.Scheduled, now time.Time) ObjectStatus {
	wf := sc.WF
	ob := ObjectStatus{Name: wf.Name, File: sc.Path, Kind: wf.Kind(), Schedule: wf.Schedule, Timezone: wf.Window.Location.String(),
		Summary: map[string]int{}, Tasks: []TaskRow{}, Windows: WindowAxis{Steps: [][2]int64{}}}
	plans, st, err := gridPlans(ctx, r, obs, sc, now)
	if err != nil {
		ob.Error = err.Error()
		return ob
	}
	if !wf.End.IsZero() {
		ob.End = wf.End.UTC().Format(time.RFC3339)
	}
	if st != nil {
		if !st.NextFire.IsZero() {
			ob.NextFire = st.NextFire.UTC().Format(time.RFC3339)
		}
		for _, m := range st.Missed {
			ob.Missed = append(ob.Missed, m.Key())
		}
		if n := len(st.Missed); n > 0 && wf.Size() != "" {
			ob.Backfill = controllers.BackfillCommand(sc.Path, st.Missed[0].Start, st.Missed[n-1].End)
		}
	}
	ob.Windows = axisOf(plans, wf)
	var next time.Time
	if st != nil {
		next = st.NextFire
	}
	ob.Waiting = waitingOf(wf, plans, next, now)
	hist, err := obs.History(wf)
	if err != nil {
		ob.Error = err.Error()
		return ob
	}
	order := wf.RunOrder(v1.LogicalWindow{})
	for _, t := range order {
		row := TaskRow{ID: t.ID, Kind: t.Kind()}
		cells := make([]reconcile.CellState, len(plans))
		for i, p := range plans {
			cells[i] = reconcile.Cell(p, t.ID, now)
			if runs := hist[p.Key()]; len(runs) > 1 {
				if earlier := reconcile.Earlier(runs, t.ID); len(earlier) > 0 {
					row.Marks = append(row.Marks, CellMark{Index: i, Start: p.Start, Earlier: earlier})
				}
			}
		}
		row.Cells = reconcile.RunLength(cells)
		ob.Tasks = append(ob.Tasks, row)
	}
	for _, p := range plans {
		ob.Summary[string(windowCell(p, order, now))]++
		if p.Held != nil {
			ob.Held = append(ob.Held, HeldWindow{Window: p.Key(), Hold: p.Held})
		}
		if len(p.Stale) > 0 {
			ob.Stale = append(ob.Stale, StaleWindow{Window: p.Key(), Stale: p.Stale, Message: controllers.StaleMessage(p.Stale)})
		}
		if p.WaitsUpstream() {
			ob.WaitingUpstream = append(ob.WaitingUpstream, UpstreamWaiting{Window: p.Key(), Waits: p.Waiting, Message: controllers.WaitMessages(p.Waiting)})
		}
	}
	return ob
}

// windowCell is a whole window's state for the summary bar: the worst of its tasks' cells.
func windowCell(p controllers.WindowPlan, tasks []controllers.OrderedTask, now time.Time) reconcile.CellState {
	cells := make([]reconcile.CellState, len(tasks))
	for i, t := range tasks {
		cells[i] = reconcile.Cell(p, t.ID, now)
	}
	return reconcile.WorstCell(cells)
}

// axisOf encodes the plans' window starts by step, and marks the odd days.
func axisOf(plans []controllers.WindowPlan, wf *controllers.Object) WindowAxis {
	ax := WindowAxis{Count: len(plans), Steps: [][2]int64{}}
	for i, p := range plans {
		if i == 0 {
			ax.First = p.Window.Start.UTC().Format(time.RFC3339)
		} else {
			step := int64(p.Window.Start.Sub(plans[i-1].Window.Start).Seconds())
			if n := len(ax.Steps); n > 0 && ax.Steps[n-1][0] == step {
				ax.Steps[n-1][1]++
			} else {
				ax.Steps = append(ax.Steps, [2]int64{step, 1})
			}
		}
		if h := p.Window.End.Sub(p.Window.Start).Hours(); wf.Size() == "day" && h != 24 {
			ax.Odd = append(ax.Odd, OddDay{Index: i, Hours: int(h)})
		}
	}
	return ax
}

// CellDetail is what the page shows of one cell: the keys and runs behind it, its last try's
// checks and error, every try of the window before it, the last lines of its run in the
// ledger, and the command that runs it again.
type CellDetail struct {
	Object string              `json:"object"`
	File   string              `json:"file"`
	Task   string              `json:"task"`
	Window v1.WindowKey        `json:"window"`
	State  reconcile.CellState `json:"state"`
	Key    string              `json:"idempotency_key,omitempty"`
	// Try is the task's last try; its State is how that try ended, which the cell's may not
	// be (a failed try whose retry is due later is a retrying cell).
	Try
	RetryAt string `json:"retry_at,omitempty"`
	// Tries are every try of the task in the window, oldest first, the last one included.
	Tries   []Try    `json:"tries"`
	Ledger  []string `json:"ledger,omitempty"`
	Command string   `json:"command"`
}

// Try is one attempt of a window's run, as one task saw it.
type Try struct {
	RunID     string              `json:"run_id,omitempty"`
	Attempt   int                 `json:"attempt,omitempty"`
	Started   string              `json:"started,omitempty"`
	TryState  reconcile.CellState `json:"try_state,omitempty"`
	Snapshot  int64               `json:"snapshot_id,string,omitempty"`
	RowsRead  int64               `json:"rows_read,omitempty"`
	RowsKept  int64               `json:"rows_kept,omitempty"`
	Checks    []CheckResult       `json:"checks,omitempty"`
	Error     string              `json:"error,omitempty"`
	taskRunID string

	// RowsOutside and RowsNoWindow are the rows the window filter left out: rows of other
	// windows, and rows with no window value.
	RowsOutside  int64 `json:"rows_outside_window,omitempty"`
	RowsNoWindow int64 `json:"rows_no_window_value,omitempty"`
}

// CheckResult is one quality check of a cell's run.
type CheckResult struct {
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Failing int64  `json:"failing_rows"`
}

// Cell details the cell of task in the window starting at start of the object in file, on main.
func Cell(ctx context.Context, r *controllers.Reconciler, file, start, task string, now time.Time) (*CellDetail, error) {
	return CellIn(ctx, r, file, start, task, now, "")
}

// CellIn is Cell in environment env ("" is main).
func CellIn(ctx context.Context, r *controllers.Reconciler, file, start, task string, now time.Time, env string) (*CellDetail, error) {
	found, _, err := controllers.DiscoverIn([]string{file}, false, env)
	if err != nil {
		return nil, err
	}
	if len(found) != 1 || len(found[0].Problems) > 0 {
		return nil, fmt.Errorf("%s is not a valid spec: %s says why", file, shell.Command("ldp", "validate", file))
	}
	sc := found[0]
	obs := new(controllers.Observer)
	defer obs.Close()
	plans, _, err := gridPlans(ctx, r, obs, sc, now)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(plans, func(p controllers.WindowPlan) bool { return p.Start == start })
	if i < 0 {
		return nil, fmt.Errorf("%s has no window starting at %s", file, start)
	}
	p := plans[i]
	d := &CellDetail{Object: sc.WF.Name, File: sc.Path, Task: task, Window: p.Key(), State: reconcile.Cell(p, task, now), Tries: []Try{}}
	for _, t := range sc.WF.RunOrder(p.Window) {
		if t.ID == task {
			d.Key = t.Key
		}
	}
	d.Command = controllers.BackfillCommand(sc.Path, p.Start, p.End)
	if d.State == reconcile.CellPublished {
		d.Command += " --replace"
	}
	if lr := p.LastRun; lr != nil && !lr.RetryAt.IsZero() {
		d.RetryAt = lr.RetryAt.UTC().Format(time.RFC3339)
	}
	hist, err := obs.History(sc.WF)
	if err != nil {
		return nil, err
	}
	for _, run := range hist[d.Window] {
		if c := reconcile.TryCell(run, task); c != "" {
			d.Tries = append(d.Tries, Try{RunID: run.RunID, Attempt: run.Attempt, TryState: c, taskRunID: controllers.TaskRunID(run.RunID, task)})
		}
	}
	if len(d.Tries) == 0 {
		return d, nil
	}
	events, _, _ := ledger.Read(sc.WF.Ledger)
	// A task's events belong to the attempt of its run that started last before them: a
	// resumed run's task events follow its own workflow.started.
	attempt := map[string]int{}
	for _, e := range events {
		if e.Type == ledger.WorkflowStarted {
			attempt[e.RunID] = e.Attempt
		}
		for k := range d.Tries {
			tr := &d.Tries[k]
			own := e.RunID == tr.taskRunID && attempt[tr.RunID] == tr.Attempt
			run := e.RunID == tr.RunID && e.Attempt == tr.Attempt
			if own {
				tr.event(e)
			}
			if run && e.Type == ledger.WorkflowStarted {
				tr.Started = e.TS.UTC().Format(time.RFC3339)
			}
			if p, ok := ledger.As[ledger.TaskFinishedPayload](e); run && ok && p.Task == task && p.Error != "" && tr.Error == "" {
				tr.Error = p.Error
			}
			if (own || run) && k == len(d.Tries)-1 {
				b, _ := json.Marshal(e.Payload)
				d.Ledger = append(d.Ledger, fmt.Sprintf("%s  %s  attempt %d  %s  %s", e.TS.UTC().Format(time.RFC3339), e.RunID, e.Attempt, e.Type, b))
			}
		}
	}
	if n := len(d.Ledger); n > 10 {
		d.Ledger = d.Ledger[n-10:]
	}
	d.Try = d.Tries[len(d.Tries)-1]
	return d, nil
}

// event takes what a try shows from one event of its task's run.
func (t *Try) event(e v1.LedgerEvent) {
	switch e.Type {
	case ledger.RunFinished:
		p, _ := ledger.As[ledger.RunFinishedPayload](e)
		t.RowsRead, t.RowsKept = p.RowsRead, p.RowsKept
		t.RowsOutside, t.RowsNoWindow = p.RowsOutside, p.RowsNoWindowValue
		if p.SnapshotID != 0 {
			t.Snapshot = p.SnapshotID
		}
		if p.Error != "" {
			t.Error = p.Error
		}
	case ledger.QualityEvaluated:
		p, _ := ledger.As[ledger.QualityEvaluatedPayload](e)
		t.Checks = nil
		for _, c := range p.Checks {
			t.Checks = append(t.Checks, CheckResult{Name: c.Name, Passed: c.Passed, Failing: c.FailingRows})
		}
	}
}
