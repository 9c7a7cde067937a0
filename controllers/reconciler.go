package controllers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/reconcile"
	"github.com/ldp-dev/ldp/schemas"
)

// WindowPlan is reconcile's plan of a window, as the callers of Reconcile read it (cmd/ldp
// presents it and does not import reconcile).
type WindowPlan = reconcile.WindowPlan

// Request is what one reconcile is asked: one object, where its desired windows come from,
// and what to do. ldp diff (DryRun) and ldp apply are a Request for each object of a Folder, as
// are ldp schedule tick and ldp watch (the windows due by the schedule); ldp backfill is one
// Request (a range, Fresh), and so are the page's and the cluster's plans.
type Request struct {
	// Object is the object reconciled: a spec file as discovery found it.
	Object Scheduled
	// The desired windows: Window (one), From and To (a range), or, with neither, the windows
	// due by the object's schedule at Now (DueWindows: the latest fire's, or with catch-up
	// every fire's since the object's start).
	Window   string
	From, To string
	Now      time.Time
	// Replace runs every window again under its replace key.
	Replace bool
	// Env reconciles the object in that environment (Object.InEnv): its keys on the
	// environment's branches, its runs in the ledger under the environment, its windows
	// published there. "" is main, or the environment the object's specs name.
	Env string
	// Stale runs again, under its replace key, each published window an upstream window it
	// consumed was replaced under a new key since (reconcile.StaleUpstream): ldp apply --stale.
	Stale bool
	// Fresh makes the windows one range asked for now (a backfill): each runs as a run of its
	// own (a failed run is not carried on), even one whose retry is not due yet; they share the
	// CSV layouts they sniff (pipeline.Sniffs), and each log line names its window.
	Fresh bool
	// DryRun plans and runs nothing: ldp diff, and ldp apply --dry-run.
	DryRun bool
	// ReadSources makes a plan read the sources it can (a DESCRIBE, nothing run) and refuse
	// the columns a spec names that are not there, as a run would: ldp diff's.
	ReadSources bool
	// Run is how the windows the plan runs are run.
	Run WindowRuns
	// OnPlan, when set, is given the plan before anything runs (DryRun too); an error runs
	// nothing and is the object's (a backfill asks before it runs a large range).
	OnPlan func([]WindowPlan) error
	// OnWindow, when set, is told of each window of the plan as it ends, in plan order: i is
	// its index in the plan, w.Result its run (nil when it did not run).
	OnWindow func(i int, w WindowRun)
}

// Folder is a fan-out: every object found under Paths (Discover's rules), or Objects when
// Paths is nil, reconciled one by one with the request Each (its Object set to each).
type Folder struct {
	Paths []string
	// Objects are reconciled instead of discovering Paths (ldp watch keeps the last valid
	// version of a broken file in force).
	Objects []Scheduled
	// Due discovers only scheduled files, as a tick.
	Due  bool
	Each Request
}

// ObjectResult is what a reconcile found and did for one object.
type ObjectResult struct {
	Name    string       `json:"name"`
	File    string       `json:"file"`
	Windows []WindowPlan `json:"windows"`
	// Runs are what became of the windows of the plan, in plan order, as far as the runner got.
	Runs []WindowRun `json:"-"`
	// Ran are the runs of the windows that ran, in order.
	Ran []*WindowResult `json:"-"`
	// Due counts the windows to run; Waiting those left for a later reconcile (the run's Max,
	// a shutdown); Leased those another process held.
	Due, Waiting, Leased int `json:"-"`
	// RequeueAt is when the object next needs a reconcile: the earliest retry one of its
	// windows waits for, or its schedule's next fire; zero when neither.
	RequeueAt time.Time `json:"-"`
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

// invalid is why the object could not be planned, or nil.
func (o ObjectResult) invalid() error {
	switch {
	case o.Err != nil:
		return o.Err
	case len(o.Problems) > 0:
		return &specs.InvalidError{Path: o.File, Problems: o.Problems}
	}
	return nil
}

// FolderResult is what a fan-out found and did: each object's result, in discovery order.
type FolderResult struct {
	Objects []ObjectResult
	// RequeueAfter is when the next reconcile is due: the earliest of the objects'
	// RequeueAt; 0 when none has one.
	RequeueAfter time.Duration
}

// Pending counts the windows that would run now.
func (r *FolderResult) Pending() int {
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
func (r *FolderResult) Outcome() v1.Outcome {
	var all []v1.Outcome
	for _, o := range r.Objects {
		all = append(all, o.Outcome())
	}
	return reconcile.Fold(all)
}

// Invalid is the objects that could not be planned, together, or nil.
func (r *FolderResult) Invalid() error {
	var bad ObjectErrors
	for _, o := range r.Objects {
		if err := o.invalid(); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return bad
}

// Reconciler drives every entry point through one Reconcile of one object: observe, plan
// (reconcile's decisions), run what the plan runs, and say when to come back.
type Reconciler struct {
	Runner *Runner
	// observer, when set, is the observation a fan-out shares between its objects: the objects
	// of a folder share its ledger, read once (Observer).
	observer *Observer
}

// Sharing is rc planning through observer: the requests of one pass over an object (ldp
// controller's schedule and backfill ranges) open its catalogs once. The caller closes it.
func (rc *Reconciler) Sharing(observer *Observer) *Reconciler {
	return &Reconciler{Runner: rc.Runner, observer: observer}
}

// Reconcile reads the world fresh (level-triggered: running it twice is harmless), plans the
// object's desired windows against it, and unless DryRun runs the windows that are not done.
// The error is the object's, when it could not be planned or its windows' leases could not be
// taken; the result says so too (Problems, Err), so that a fan-out goes on with the others.
func (rc *Reconciler) Reconcile(ctx context.Context, req Request) (ObjectResult, error) {
	r := rc.Runner
	r.defaults()
	if req.Now.IsZero() {
		req.Now = r.Now()
	}
	observer := rc.observer
	if observer == nil {
		observer = new(Observer)
		defer observer.Close()
	}
	s := req.Object
	or := ObjectResult{File: s.Path, Problems: s.Problems, WF: s.WF, Windows: []WindowPlan{}}
	if s.WF != nil {
		or.Name = s.WF.Name
		if wf, err := s.WF.InEnv(req.Env); err != nil {
			or.Err = err
		} else {
			s.WF, or.WF = wf, wf
		}
	}
	if len(s.Problems) == 0 && or.Err == nil {
		or.Windows, or.Err = r.planObject(ctx, observer, s, req)
	}
	if or.Err == nil && len(or.Problems) == 0 && req.OnPlan != nil {
		or.Err = req.OnPlan(or.Windows)
	}
	if or.Err != nil || len(or.Problems) > 0 {
		return or, or.invalid()
	}
	if !req.DryRun {
		or.Runs, or.Err = r.runWindows(ctx, observer, s, or.Windows, req)
		for _, w := range or.Runs {
			switch {
			case w.Result != nil:
				or.Ran = append(or.Ran, w.Result)
			case w.NotRun == NotRunWaiting:
				or.Waiting++
			case w.NotRun == NotRunLeased:
				or.Leased++
			}
			if w.NotRun != NotRunNotDue {
				or.Due++
			}
		}
	}
	or.RequeueAt = nextReconcile(s, or.Windows, req.Now)
	return or, or.Err
}

// ReconcileFolder reconciles each object of a folder: a fan-out over Reconcile, sharing one
// observation. One object's error does not stop the others: it comes back in its
// ObjectResult; the error is discovery's.
func (rc *Reconciler) ReconcileFolder(ctx context.Context, f Folder) (*FolderResult, error) {
	r := rc.Runner
	r.defaults()
	if f.Each.Now.IsZero() {
		f.Each.Now = r.Now() // every object is planned at the same now
	}
	res := &FolderResult{}
	observer := new(Observer)
	defer observer.Close()
	each := &Reconciler{Runner: r, observer: observer}
	var next time.Time
	handle := func(s Scheduled) {
		req := f.Each
		req.Object = s
		or, _ := each.Reconcile(ctx, req) // the error is or's
		next = earliest(next, or.RequeueAt)
		res.Objects = append(res.Objects, or)
	}
	if f.Paths == nil {
		for _, s := range upstreamOrder(f.Objects) {
			handle(s)
		}
	} else {
		// Each object is planned (and run) while the next file is validated: validation holds
		// one core (CUE runs under one lock) and observing the tables can use the other.
		found := make(chan Scheduled, 16)
		var err error
		go func() {
			defer close(found)
			_, err = discoverEach(f.Paths, f.Due, func(s Scheduled) { found <- s })
		}()
		// An object that waits for upstream objects is reconciled after the others, and after
		// those of its upstreams that are in the fan-out (upstreamOrder): one apply then runs
		// the upstream's windows before the windows that wait for them, which see them
		// published (each object is observed when it is reconciled).
		var later []Scheduled
		for s := range found {
			if s.WF != nil && len(s.WF.Upstreams) > 0 {
				later = append(later, s)
				continue
			}
			handle(s)
		}
		if err != nil {
			return nil, err
		}
		for _, s := range upstreamOrder(later) {
			handle(s)
		}
	}
	if !next.IsZero() {
		res.RequeueAfter = max(next.Sub(f.Each.Now), 0)
	}
	return res, nil
}

// upstreamOrder sorts objects so that each comes after those of them it waits for (its
// Upstreams), keeping discovery order otherwise. The loader refuses a cycle of upstreams; were
// one to reach here, its objects would keep discovery order.
func upstreamOrder(objs []Scheduled) []Scheduled {
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return filepath.Clean(p)
	}
	index := map[string]int{}
	for i, s := range objs {
		index[abs(s.Path)] = i
	}
	done := make([]bool, len(objs))
	out := make([]Scheduled, 0, len(objs))
	var visit func(i int, depth int)
	visit = func(i int, depth int) {
		if done[i] || depth > len(objs) {
			return
		}
		if objs[i].WF == nil {
			done[i] = true
			out = append(out, objs[i])
			return
		}
		for _, u := range objs[i].WF.Upstreams {
			if j, ok := index[abs(u.File)]; ok && j != i {
				visit(j, depth+1)
			}
		}
		if !done[i] {
			done[i] = true
			out = append(out, objs[i])
		}
	}
	for i := range objs {
		visit(i, 0)
	}
	return out
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
	plans := reconcile.Plan(s.WF.Planning(), windows, obs, reconcile.Options{Replace: req.Replace, Stale: req.Stale, Fresh: req.Fresh, Now: req.Now, Hold: bySchedule})
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
