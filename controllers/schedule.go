package controllers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/flock"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
	"github.com/ldp-dev/ldp/schemas"
)

// MaxCatchup bounds a catch-up: a start that far back is most likely a typo.
const MaxCatchup = 100000

// Scheduled is a file that discovery found scheduled: a workflow or a dataset config with a
// schedule (its own, or one its when label means).
type Scheduled struct {
	Path     string
	WF       *Workflow
	Catchup  bool
	Start    time.Time
	Problems []schemas.Problem
}

// DiscoverScheduled finds the scheduled files under dir with the contract's discovery rules. A
// file with no schedule is left out without a word; a scheduled file that is not valid is kept,
// with its problems, so it is reported rather than silently skipped.
func DiscoverScheduled(dir string) ([]Scheduled, error) {
	out, _, err := discoverScheduled(dir)
	return out, err
}

// discoverScheduled is DiscoverScheduled that also returns the files it passed over for
// their size, which may be specs.
func discoverScheduled(dir string) ([]Scheduled, []specs.Skipped, error) {
	cands, err := specs.Discover([]string{dir})
	if err != nil {
		return nil, nil, err
	}
	var out []Scheduled
	var skipped []specs.Skipped
	for _, c := range cands {
		if c.TooLarge {
			skipped = append(skipped, specs.Skipped{Path: c.Path, Reason: fmt.Sprintf("larger than the %d-byte limit for spec files, so it is not read as one", v1.MaxSpecBytes)})
			continue
		}
		data, err := os.ReadFile(c.Path)
		if err != nil {
			continue
		}
		r := schemas.Validate(data, c.Path)
		if r.Doc == nil || !hasSchedule(r.Doc) {
			continue
		}
		s := Scheduled{Path: c.Path}
		if len(r.Problems) > 0 {
			s.Problems = r.Problems
			out = append(out, s)
			continue
		}
		wf, err := LoadWorkflow(c.Path)
		if err != nil {
			var inv *specs.InvalidError
			if errors.As(err, &inv) {
				s.Problems = inv.Problems
			} else {
				s.Problems = []schemas.Problem{{File: c.Path, Line: 1, Column: 1, Message: err.Error()}}
			}
			out = append(out, s)
			continue
		}
		s.WF = wf
		if obj, err := specs.Read(c.Path); err == nil {
			if w, ok := obj.(*v1.Workflow); ok {
				s.Catchup = w.Metadata.Catchup
				if w.Metadata.Start != "" {
					if s.Start, err = window.ParseInstant(w.Metadata.Start, wf.Window.Location); err != nil {
						return nil, nil, err
					}
				}
			}
		}
		out = append(out, s)
	}
	return out, skipped, nil
}

func hasSchedule(doc map[string]any) bool {
	md, _ := doc["metadata"].(map[string]any)
	if s, ok := md["schedule"].(string); ok && s != "" {
		return true
	}
	if k, _ := doc["kind"].(string); k == v1.KindWorkflow {
		return false
	}
	w, _ := doc["when"].(string)
	return cronx.ScheduleOfWhen(w) != ""
}

// WindowOfFire is the window a fire owns: with a window size, the last complete window of that
// size ending at or before the fire; without one, the interval since the previous fire.
func WindowOfFire(wf *Workflow, fire time.Time) (v1.LogicalWindow, error) {
	loc := wf.Window.Location
	if size := wf.Size(); size != "" {
		end, err := window.Floor(fire, size, loc)
		if err != nil {
			return v1.LogicalWindow{}, err
		}
		return window.Of(end.Add(-time.Nanosecond), size, loc)
	}
	spec, err := cronx.Parse(wf.Schedule)
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	prev, err := cronx.Previous(spec, fire, loc)
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	return v1.LogicalWindow{Start: prev, End: fire}, nil
}

// DueWindows are the windows a tick at now looks at: the latest fire's window, or with catchup
// the window of every fire since start, oldest first. No window starts before start.
func DueWindows(s Scheduled, now time.Time) ([]v1.LogicalWindow, error) {
	wf := s.WF
	if !s.Catchup {
		w, err := DueWindow(wf, now)
		if err != nil {
			return nil, err
		}
		if !s.Start.IsZero() && w.Start.Before(s.Start) {
			return nil, nil
		}
		return []v1.LogicalWindow{w}, nil
	}
	spec, err := cronx.Parse(wf.Schedule)
	if err != nil {
		return nil, err
	}
	fires := cronx.Fires(spec, s.Start.Add(-time.Nanosecond), now, wf.Window.Location)
	var out []v1.LogicalWindow
	seen := map[string]bool{}
	for _, f := range fires {
		w, err := WindowOfFire(wf, f)
		if err != nil {
			return nil, err
		}
		if w.Start.Before(s.Start) || seen[w.String()] {
			continue // several fires can own one window: it runs once
		}
		seen[w.String()] = true
		out = append(out, w)
		if len(out) > MaxCatchup {
			return nil, ldperr.Configf(wf.File, "catching up from %s means more than %d windows: set a later metadata.start", s.Start.Format(time.RFC3339), MaxCatchup)
		}
	}
	return out, nil
}

// FileTick is what a tick did with one scheduled file.
type FileTick struct {
	File     string            `json:"file"`
	Problems []schemas.Problem `json:"problems,omitempty"`
	Error    string            `json:"error,omitempty"`
	Due      int               `json:"due"`
	Ran      []*Result         `json:"ran"`
	Waiting  int               `json:"waiting,omitempty"`
	// Leased counts the due windows another process held (with --leases).
	Leased int `json:"leased,omitempty"`
}

// TickResult is a whole tick.
type TickResult struct {
	Locked   string     `json:"locked,omitempty"`
	Files    []FileTick `json:"files"`
	ExitCode int        `json:"exit_code"`
}

// LockPath is the lock every tick (and ldp watch) takes on a folder.
func LockPath(dir string) string { return filepath.Join(dir, ".ldp", "locks", "schedule.lock") }

// Tick runs every window that is due and not done, for every scheduled file under dir, and
// returns. It holds dir's schedule lock without waiting: a tick that finds it held does
// nothing. A window whose last run failed, was blocked or never finished runs as the next
// attempt of that run, so it fences every older attempt. One file's error does not stop the
// others.
func (r *Runner) Tick(ctx context.Context, dir string, now time.Time, maxWindows int) (*TickResult, error) {
	if r.Leases != nil {
		return r.tickLocked(ctx, dir, now, maxWindows) // windows are leased one by one instead
	}
	lock, err := flock.TryLock(LockPath(dir))
	if errors.Is(err, flock.ErrLocked) {
		return &TickResult{Locked: LockPath(dir), Files: []FileTick{}}, nil
	}
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	return r.tickLocked(ctx, dir, now, maxWindows)
}

func (r *Runner) tickLocked(ctx context.Context, dir string, now time.Time, maxWindows int) (*TickResult, error) {
	found, err := DiscoverScheduled(dir)
	if err != nil {
		return nil, err
	}
	return r.TickFiles(ctx, found, now, maxWindows), nil
}

// TickFiles ticks scheduled files already discovered (ldp watch keeps the last valid version of
// a file in force while it is broken). The caller holds the folder's lock.
func (r *Runner) TickFiles(ctx context.Context, found []Scheduled, now time.Time, maxWindows int) *TickResult {
	if maxWindows <= 0 {
		maxWindows = 1000
	}
	res := &TickResult{Files: []FileTick{}}
	code := 0
	observer := new(Observer)
	defer observer.Close()
	for _, s := range found {
		ft := FileTick{File: s.Path, Problems: s.Problems, Ran: []*Result{}}
		if len(s.Problems) > 0 {
			code = Worse(code, ldperr.ExitFailed)
			res.Files = append(res.Files, ft)
			continue
		}
		c, err := r.tickOne(ctx, observer, s, now, maxWindows, &ft)
		if err != nil {
			ft.Error = err.Error()
			c = ldperr.ExitFailed
		}
		code = Worse(code, c)
		res.Files = append(res.Files, ft)
	}
	res.ExitCode = code
	return res
}

func (r *Runner) tickOne(ctx context.Context, observer *Observer, s Scheduled, now time.Time, maxWindows int, ft *FileTick) (int, error) {
	windows, err := DueWindows(s, now)
	if err != nil {
		return 0, err
	}
	obs, err := observer.Observe(ctx, s.WF)
	if err != nil {
		return 0, err
	}
	code := 0
	for _, wp := range reconcile.Plan(s.WF.Object(), windows, obs, reconcile.Options{}) {
		if wp.Action == reconcile.Skip {
			continue
		}
		ft.Due++
		if len(ft.Ran) >= maxWindows || r.stopping() {
			ft.Waiting++ // the next tick starts with the first window that is not done
			continue
		}
		wp := wp
		var lease *lake.Lease
		if r.Leases != nil {
			var done bool
			if lease, done, err = r.leaseWindow(ctx, observer, s, &wp); err != nil {
				return Worse(code, ldperr.ExitFailed), err
			}
			if lease == nil {
				if !done {
					ft.Leased++ // another process holds it
				}
				continue
			}
		}
		o := RunOptions{Plan: &wp}
		if wp.LastRun != nil && wp.State != reconcile.Published && !(wp.State == reconcile.Missing && allSucceeded(wp.LastRun)) {
			o.RunID, o.Attempt = wp.LastRun.RunID, wp.LastRun.Attempt+1
		}
		stopRenew := r.renew(ctx, lease)
		out := r.Run(ctx, s.WF, wp.Window, o)
		stopRenew()
		ft.Ran = append(ft.Ran, out)
		code = Worse(code, out.ExitCode())
	}
	return code, nil
}

// leaseWindow takes the window's lease in the workflow's shared catalog. With the lease held,
// it plans the window again (another process may have finished it since the plan was made):
// a window now done is released, and done is true.
func (r *Runner) leaseWindow(ctx context.Context, observer *Observer, s Scheduled, wp *reconcile.WindowPlan) (*lake.Lease, bool, error) {
	cat, err := sharedCatalog(ctx, s.WF)
	if err != nil {
		return nil, false, err
	}
	lease, err := cat.AcquireLease(ctx, s.WF.Name+"|"+wp.Window.String(), r.Leases.Holder, r.Leases.TTL)
	if err != nil || lease == nil {
		cat.Close()
		return nil, false, err
	}
	lease.OnRelease = func() { cat.Close() }
	obs, err := observer.Observe(ctx, s.WF)
	if err != nil {
		lease.Release(ctx)
		return nil, false, err
	}
	again := reconcile.Plan(s.WF.Object(), []v1.LogicalWindow{wp.Window}, obs, reconcile.Options{})
	if len(again) == 1 && again[0].Action == reconcile.Skip {
		lease.Release(ctx)
		return nil, true, nil
	}
	if len(again) == 1 {
		*wp = again[0]
	}
	return lease, false, nil
}

// renew keeps lease alive while a window runs; the returned function stops it and releases
// the lease. A nil lease does nothing.
func (r *Runner) renew(ctx context.Context, lease *lake.Lease) func() {
	if lease == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(r.Leases.TTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := lease.Renew(ctx, r.Leases.TTL); err != nil {
					r.warn(err.Error())
				}
			}
		}
	}()
	return func() {
		close(done)
		lease.Release(context.Background())
	}
}

// sharedCatalog opens the first PostgreSQL catalog a workflow's tasks write to: where its
// windows' leases live.
func sharedCatalog(ctx context.Context, wf *Workflow) (*lake.Catalog, error) {
	for _, t := range wf.Tasks {
		p := wf.Pipelines[t.ID]
		if p == nil || p.Metadata.Target.Catalog == nil || p.Metadata.Target.Catalog.Type != "sql" {
			continue
		}
		cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
		if err != nil {
			return nil, err
		}
		if cat.SupportsLeases() {
			return cat, nil
		}
		cat.Close()
	}
	return nil, ldperr.Configf(wf.File, "leases need a catalog of type sql on PostgreSQL among the workflow's targets; without one, tick without --leases (the folder lock divides the work)")
}

// allSucceeded is a last run that succeeded: a window whose keys are gone after one starts a
// run of its own.
func allSucceeded(l *reconcile.LastRun) bool {
	if !l.Finished {
		return false
	}
	for _, s := range l.Tasks {
		if s != Succeeded && s != Skipped {
			return false
		}
	}
	return true
}

// Worse folds two exit codes into the one that says more: 1 over 3 over 0.
func Worse(a, b int) int {
	if a == ldperr.ExitFailed || b == ldperr.ExitFailed {
		return ldperr.ExitFailed
	}
	if a == ldperr.ExitDataGate || b == ldperr.ExitDataGate {
		return ldperr.ExitDataGate
	}
	return ldperr.ExitOK
}
