package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/reconcile"
	"github.com/ldp-dev/ldp/schemas"
)

// WindowPlan and TaskPlan are reconcile's plans, as the callers of Reconcile read them.
type (
	WindowPlan = reconcile.WindowPlan
	TaskPlan   = reconcile.TaskPlan
)

// Request is what one reconcile is asked: which objects, where their desired windows come
// from, and what to do. Every entry point is a Request: ldp diff (DryRun), ldp apply, ldp
// schedule tick and ldp watch (Due), and ldp backfill (a range, Fresh).
type Request struct {
	// Paths are spec files or folders (Discover's rules). Objects, when set, are reconciled
	// instead (ldp watch keeps the last valid version of a broken file in force).
	Paths   []string
	Objects []Scheduled
	// The desired windows: Window (one), From and To (a range), or, with neither, the windows
	// due by each object's schedule at Now (DueWindows: the latest fire's, or with catch-up
	// every fire's since the object's start). Due discovers only scheduled files, as a tick.
	Window   string
	From, To string
	Now      time.Time
	Due      bool
	// Replace runs every window again under its replace key; Fresh runs each window as a run
	// of its own (a backfill does not carry a failed run on).
	Replace bool
	Fresh   bool
	// DryRun plans and runs nothing: ldp diff, and ldp apply --dry-run.
	DryRun bool
	// ReadSources makes a plan read the sources it can (a DESCRIBE, nothing run) and refuse
	// the columns a spec names that are not there, as a run would: ldp diff's.
	ReadSources bool
	// MaxWindows bounds the windows run per object (0 is 1000); the rest wait for the next.
	MaxWindows int
	// OnRun, when set, is told of each window run as it ends.
	OnRun func(ObjectResult, *Result)
}

// ObjectResult is what a reconcile found and did for one object.
type ObjectResult struct {
	Name    string       `json:"name"`
	File    string       `json:"file"`
	Windows []WindowPlan `json:"windows"`
	// Ran are the runs of the windows that ran, in order.
	Ran []*Result `json:"-"`
	// Due counts the windows to run; Waiting those left for a later reconcile (MaxWindows, a
	// shutdown); Leased those another process held.
	Due, Waiting, Leased int `json:"-"`
	// Problems (an invalid spec) or Err (planning failed) mean nothing was planned.
	Problems []schemas.Problem `json:"-"`
	Err      error             `json:"-"`
	WF       *Object           `json:"-"`
}

// Outcome folds the object's runs: failed if planning failed or a run failed, else blocked if
// a run was held back, else succeeded.
func (o ObjectResult) Outcome() v1.Outcome {
	if o.Err != nil || len(o.Problems) > 0 {
		return v1.Failed
	}
	var all []v1.Outcome
	for _, r := range o.Ran {
		all = append(all, r.Status)
	}
	return reconcile.Fold(all)
}

// ReconcileResult is what a whole reconcile found and did.
type ReconcileResult struct {
	Objects []ObjectResult
	// RequeueAfter is when the next reconcile is due: the earliest retry a window waits for,
	// or the next fire of a schedule; 0 when neither.
	RequeueAfter time.Duration
}

// Pending counts the windows that would run now.
func (r *ReconcileResult) Pending() int {
	n := 0
	for _, o := range r.Objects {
		for _, w := range o.Windows {
			if w.Runs() {
				n++
			}
		}
	}
	return n
}

// Outcome folds every object's outcome.
func (r *ReconcileResult) Outcome() v1.Outcome {
	var all []v1.Outcome
	for _, o := range r.Objects {
		all = append(all, o.Outcome())
	}
	return reconcile.Fold(all)
}

// Invalid is the objects that could not be planned, together, or nil.
func (r *ReconcileResult) Invalid() error {
	var bad ObjectErrors
	for _, o := range r.Objects {
		switch {
		case o.Err != nil:
			bad = append(bad, o.Err)
		case len(o.Problems) > 0:
			bad = append(bad, &specs.InvalidError{Path: o.File, Problems: o.Problems})
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return bad
}

// Reconciler drives every entry point through one Reconcile: observe, plan (reconcile's
// decisions), run what the plan runs, and say when to come back.
type Reconciler struct {
	Runner *Runner
}

// Reconcile reads the world fresh (level-triggered: running it twice is harmless), plans each
// object's desired windows against it, and unless DryRun runs the windows that are not done.
// One object's error does not stop the others: it comes back in its ObjectResult.
func (rc *Reconciler) Reconcile(ctx context.Context, req Request) (*ReconcileResult, error) {
	r := rc.Runner
	r.defaults()
	if req.Now.IsZero() {
		req.Now = r.Now()
	}
	if req.MaxWindows <= 0 {
		req.MaxWindows = 1000
	}
	res := &ReconcileResult{}
	observer := new(Observer)
	defer observer.Close()
	var next time.Time
	handle := func(s Scheduled) {
		or := ObjectResult{File: s.Path, Problems: s.Problems, WF: s.WF, Windows: []WindowPlan{}}
		if s.WF != nil {
			or.Name = s.WF.Name
		}
		if len(s.Problems) == 0 {
			or.Windows, or.Err = r.planObject(ctx, observer, s, req)
		}
		if or.Err == nil && len(or.Problems) == 0 {
			if !req.DryRun {
				r.runObject(ctx, observer, s, req, &or)
			}
			next = earliest(next, nextReconcile(s, or.Windows, req.Now))
		}
		res.Objects = append(res.Objects, or)
	}
	if req.Objects != nil {
		for _, s := range req.Objects {
			handle(s)
		}
	} else {
		// Each object is planned (and run) while the next file is validated: validation holds
		// one core (CUE runs under one lock) and observing the tables can use the other.
		found := make(chan Scheduled, 16)
		var err error
		go func() {
			defer close(found)
			_, err = discoverEach(req.Paths, req.Due, func(s Scheduled) { found <- s })
		}()
		for s := range found {
			handle(s)
		}
		if err != nil {
			return nil, err
		}
	}
	if !next.IsZero() {
		res.RequeueAfter = max(next.Sub(req.Now), 0)
	}
	return res, nil
}

// planObject is the plan of one object: its desired windows against what is observed.
func (r *Runner) planObject(ctx context.Context, observer *Observer, s Scheduled, req Request) ([]WindowPlan, error) {
	var windows []v1.LogicalWindow
	var err error
	bySchedule := req.Window == "" && req.From == "" && s.WF.Schedule != ""
	if bySchedule {
		// The schedule's windows are the tick's, catch-up included, whatever the entry point:
		// diff is the plan apply, tick, watch, the page and the controller carry out.
		windows, err = DueWindows(s, req.Now)
	} else {
		windows, err = Desired{Window: req.Window, From: req.From, To: req.To, Now: req.Now}.Windows(s.WF)
	}
	if err != nil {
		return nil, inFile(s.Path, err)
	}
	obs, err := observer.Observe(ctx, s.WF)
	if err != nil {
		return nil, inFile(s.Path, err)
	}
	// The schedule's windows hold those that would only be held back again; a window asked for
	// by name runs.
	plans := reconcile.Plan(s.WF.Planning(), windows, obs, reconcile.Options{Replace: req.Replace, Fresh: req.Fresh, Now: req.Now, Hold: bySchedule})
	if req.ReadSources {
		if err := columnErrors(s.WF, plans); err != nil {
			return nil, err
		}
	}
	if req.Window != "" || req.From != "" {
		// Windows asked for by name that have not ended are refused, not left waiting: the
		// user meant them to run now. ldp diff and apply --dry-run refuse them too, so the
		// plan they print is the one apply carries out.
		if err := refuseUnfinished(s.WF, plans); err != nil {
			return nil, err
		}
	}
	return plans, nil
}

// columnErrors checks the columns that the loads of wf name against their sources, for the
// first window of plans that runs (its source file, when the path names a window's file).
func columnErrors(wf *Object, plans []WindowPlan) error {
	for _, wp := range plans {
		if !wp.Runs() {
			continue
		}
		var errs []error
		for _, t := range wf.Tasks {
			if p := wf.Pipelines[t.ID]; p != nil && t.Kind() == v1.TaskPipeline {
				errs = append(errs, pipeline.SourceColumnErrors(p, wp.Window)...)
			}
		}
		return errors.Join(errs...)
	}
	return nil
}

// runObject runs, one by one, the windows of an object's plan that run now.
func (r *Runner) runObject(ctx context.Context, observer *Observer, s Scheduled, req Request, or *ObjectResult) {
	for i := range or.Windows {
		wp := or.Windows[i]
		if !wp.Runs() {
			continue
		}
		or.Due++
		if len(or.Ran) >= req.MaxWindows || r.stopping() {
			or.Waiting++ // the next reconcile starts with the first window that is not done
			continue
		}
		var lease *lake.Lease
		if r.Leases != nil {
			held, done, err := r.leaseWindow(ctx, observer, s, &wp)
			if err != nil {
				or.Err = err
				return
			}
			if held == nil {
				if !done {
					or.Leased++ // another process holds it
				}
				continue
			}
			lease = held
		}
		stopRenew := r.renew(ctx, lease)
		out := r.Run(ctx, s.WF, wp.Window, RunOptions{Plan: &wp, Replace: wp.Action == v1.ActionReplace})
		stopRenew()
		or.Ran = append(or.Ran, out)
		if req.OnRun != nil {
			req.OnRun(*or, out)
		}
	}
}

// nextReconcile is when an object next needs a reconcile: the earliest retry one of its
// windows waits for, a retry its runs just scheduled, or its schedule's next fire.
func nextReconcile(s Scheduled, plans []WindowPlan, now time.Time) time.Time {
	next, _ := reconcile.NextRetry(plans)
	if s.WF == nil {
		return next
	}
	if s.WF.Schedule != "" {
		if fire, ok := s.WF.NextFire(now); ok {
			next = earliest(next, fire)
		}
	}
	return next
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// ObjectErrors are the objects of a reconcile that could not be planned.
type ObjectErrors []error

func (e ObjectErrors) Error() string {
	msg := fmt.Sprintf("%d %s could not be planned, the others were:", len(e), plural(len(e), "object", "objects"))
	for _, err := range e {
		msg += "\n" + err.Error()
	}
	return msg
}

// Unwrap makes each object's error visible to errors.As (a config error stays one).
func (e ObjectErrors) Unwrap() []error { return e }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inFile is err naming the file it is about, unless it names it already.
func inFile(path string, err error) error {
	if strings.HasPrefix(err.Error(), path+":") {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
