package controllers

import (
	"context"
	"slices"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/shell"
	"github.com/ldp-dev/ldp/reconcile"
)

// ScheduleStatus is what ldp schedule list says of one scheduled object at now.
type ScheduleStatus struct {
	Kind string
	// Size is the window size, or "" for the interval between fires.
	Size string
	// NextFire is the schedule's next fire after now (zero when none).
	NextFire time.Time
	// LastWindow is the latest window the ledger holds a run of, and how that run ended:
	// succeeded, failed, blocked, incomplete (it stopped before every task ran) or unfinished.
	LastWindow v1.WindowKey
	LastEnded  string
	// Due are the windows due now that are not done; Missed, those of earlier fires that are
	// not done and that no tick will run, because catch-up is off (at most maxWindows).
	Due    []WindowPlan
	Missed []WindowPlan
	// Plan is the plan of every window due now, done or not: what a Reconcile of the
	// object's schedule plans (ldp controller takes it from here rather than plan it twice).
	Plan []WindowPlan
	// Grid is the plan of every window of a fire since start (or the first window the ledger
	// holds) to now, done or not, in order: the status page's columns.
	Grid []WindowPlan
}

// StatusOf plans a scheduled object's due and missed windows at now, through reconcile.
func StatusOf(ctx context.Context, sc Scheduled, now time.Time, maxWindows int) (*ScheduleStatus, error) {
	o := new(Observer)
	defer o.Close()
	return o.StatusOf(ctx, sc, now, maxWindows)
}

// StatusOf is the package's StatusOf through o, so the objects of a folder share its catalogs
// and its ledger, read once.
func (o *Observer) StatusOf(ctx context.Context, sc Scheduled, now time.Time, maxWindows int) (*ScheduleStatus, error) {
	wf := sc.WF
	st := &ScheduleStatus{Kind: wf.Kind(), Size: wf.Size()}
	if _, err := wf.Cron(); err != nil {
		return nil, err
	}
	if next, ok := wf.NextFire(now); ok {
		st.NextFire = next
	}
	obs, err := o.Observe(ctx, wf)
	if err != nil {
		return nil, err
	}
	last := obs.LastRuns
	for w := range last {
		if w > st.LastWindow {
			st.LastWindow = w
		}
	}
	if st.LastWindow != "" {
		st.LastEnded = ended(last[st.LastWindow], wf)
	}
	due, err := DueWindows(sc, now)
	if err != nil {
		return nil, err
	}
	opts := reconcile.Options{Now: now, Hold: true}
	st.Grid = reconcile.Plan(wf.Planning(), due, obs, opts)
	st.Plan = st.Grid
	for _, p := range st.Grid {
		// A held window is not due: no tick runs it until its source or spec changes.
		if p.Action != v1.ActionSkip && p.Action != v1.ActionHold {
			st.Due = append(st.Due, p)
		}
	}
	if sc.Catchup {
		return st, nil
	}
	// Missed: windows of fires since start (or the first window the ledger holds) that are not
	// done and that the next tick will not run, because catch-up is off.
	from := sc.Start
	if from.IsZero() {
		for w := range last {
			if lw, err := w.Window(); err == nil && (from.IsZero() || lw.Start.Before(from)) {
				from = lw.Start
			}
		}
	}
	if from.IsZero() {
		return st, nil
	}
	c := sc
	c.Catchup, c.Start = true, from
	all, err := DueWindows(c, now)
	if err != nil {
		return nil, err
	}
	dueSet := map[string]bool{}
	for _, w := range due {
		dueSet[w.String()] = true
	}
	st.Grid = reconcile.Plan(wf.Planning(), all, obs, opts)
	for _, p := range st.Grid {
		if p.Action != v1.ActionSkip && !dueSet[p.Window.String()] && len(st.Missed) < maxWindows {
			st.Missed = append(st.Missed, p)
		}
	}
	return st, nil
}

// ended says how a window's last run ended: its outcome (reconcile's fold), or incomplete when
// it stopped before every task ran, or unfinished when it never finished.
func ended(l reconcile.LastRun, wf *Object) string {
	if !l.Finished {
		return "unfinished"
	}
	if len(l.Tasks) < len(wf.Tasks) {
		return "incomplete"
	}
	return string(l.Outcome())
}

// BackfillCommand is the command that runs the windows of file from from to to: what the
// status page, ldp schedule list and a missed window's hint all print.
func BackfillCommand(file, from, to string) string {
	return shell.Command("ldp", "backfill", file, "--from", from, "--to", to)
}

// MergePlans is the union of two plans' windows, in window order.
func MergePlans(a, b []WindowPlan) []WindowPlan {
	seen := map[v1.WindowKey]bool{}
	var out []WindowPlan
	for _, p := range append(slices.Clone(a), b...) {
		if k := p.Key(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(x, y WindowPlan) int { return x.Window.Start.Compare(y.Window.Start) })
	return out
}
