package controllers

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/flock"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
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
	WF       *Object
	Catchup  bool
	Start    time.Time
	Problems []schemas.Problem
}

// DiscoverScheduled finds the scheduled files under dir: Discover with scheduledOnly.
func DiscoverScheduled(dir string) ([]Scheduled, error) {
	out, _, err := Discover([]string{dir}, true)
	return out, err
}

// WindowOfFire is the window a fire owns: with a window size, the last complete window of that
// size ending at or before the fire; without one, the interval since the previous fire. With a
// metadata.window.delay, the window must also have waited its delay by the fire (it ends at or
// before fire minus delay), so that every fire's window is finished when it fires: one that was
// not would wait, and the next fire would own the next window, never running it.
func WindowOfFire(wf *Object, fire time.Time) (v1.LogicalWindow, error) {
	loc := wf.Window.Location
	if size := wf.Size(); size != "" {
		end, err := window.Floor(fire.Add(-wf.Window.Delay), size, loc)
		if err != nil {
			return v1.LogicalWindow{}, err
		}
		return window.Of(end.Add(-time.Nanosecond), size, loc)
	}
	spec, err := wf.Cron()
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	end := fire
	if wf.Window.Delay > 0 {
		if end, err = cronx.Latest(spec, fire.Add(-wf.Window.Delay), loc); err != nil {
			return v1.LogicalWindow{}, err
		}
	}
	prev, err := cronx.Previous(spec, end, loc)
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	return v1.LogicalWindow{Start: prev, End: end}, nil
}

// DueWindows are the windows a tick at now looks at: the latest fire's window, or with catchup
// the window of every fire since start, oldest first. No window starts before start, and none
// ends after the workflow's end.
func DueWindows(s Scheduled, now time.Time) ([]v1.LogicalWindow, error) {
	wf := s.WF
	if !s.Catchup {
		w, err := DueWindow(wf, now)
		if err != nil {
			return nil, err
		}
		if !s.Start.IsZero() && w.Start.Before(s.Start) || !wf.Expected(w) {
			return nil, nil
		}
		return []v1.LogicalWindow{w}, nil
	}
	spec, err := wf.Cron()
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
		if !wf.Expected(w) {
			break // windows only grow later
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

// Expected reports whether window win is one the schedule expects: it does not end after the
// workflow's end (metadata.end), when there is one. Every entry point's windows of the
// schedule come from DueWindows, which asks this, so diff, tick, watch, status, the page and
// the controller expect the same windows.
func (w *Object) Expected(win v1.LogicalWindow) bool {
	return w.End.IsZero() || !win.End.After(w.End)
}

// NextFire is the schedule's next fire after now, unless the window it owns is not expected
// (the schedule has ended): then none.
func (w *Object) NextFire(now time.Time) (time.Time, bool) {
	spec, err := w.Cron()
	if err != nil {
		return time.Time{}, false
	}
	fire, err := cronx.Next(spec, now, w.Window.Location)
	if err != nil {
		return time.Time{}, false
	}
	if win, err := WindowOfFire(w, fire); err == nil && !w.Expected(win) {
		return time.Time{}, false
	}
	return fire, true
}

// FileTick is what a tick did with one scheduled file.
type FileTick struct {
	File     string            `json:"file"`
	Problems []schemas.Problem `json:"problems,omitempty"`
	Error    string            `json:"error,omitempty"`
	Due      int               `json:"due"`
	Ran      []*WindowResult   `json:"ran"`
	Waiting  int               `json:"waiting,omitempty"`
	// Leased counts the due windows another process held (with --leases).
	Leased int `json:"leased,omitempty"`
}

// TickResult is a whole tick.
type TickResult struct {
	Locked string     `json:"locked,omitempty"`
	Files  []FileTick `json:"files"`
	// Outcome folds the tick's runs and files: failed, blocked or succeeded.
	Outcome v1.Outcome `json:"outcome"`
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
	// The fan-out discovers the folder itself, planning each file while the next is validated.
	rec, err := (&Reconciler{Runner: r}).ReconcileFolder(ctx, r.tickOf(Folder{Paths: []string{dir}}, now, maxWindows))
	if err != nil {
		return nil, err
	}
	return tickResult(rec), nil
}

// tick ticks scheduled files already discovered (ldp watch keeps the last valid version of a
// file in force while it is broken): one fan-out of the windows due at now, and when the next
// reconcile is due. The caller holds the folder's lock.
func (r *Runner) tick(ctx context.Context, found []Scheduled, now time.Time, maxWindows int) (*TickResult, time.Duration) {
	rec, err := (&Reconciler{Runner: r}).ReconcileFolder(ctx, r.tickOf(Folder{Objects: found}, now, maxWindows))
	if err != nil {
		return &TickResult{Files: []FileTick{}, Outcome: v1.Failed}, 0
	}
	return tickResult(rec), rec.RequeueAfter
}

// tickOf is f as a tick: the scheduled files, each with the windows due by its schedule at
// now, at most maxWindows of them run, each under its lease when the runner takes leases.
func (r *Runner) tickOf(f Folder, now time.Time, maxWindows int) Folder {
	f.Due = true
	f.Each = Request{Now: now, Run: WindowRuns{Mode: Sequential, Max: maxWindows}}
	if r.Leases != nil {
		f.Each.Run.Mode = Leased
	}
	return f
}

// tickResult is a tick's account of its reconcile, file by file.
func tickResult(rec *FolderResult) *TickResult {
	res := &TickResult{Files: []FileTick{}}
	for _, o := range rec.Objects {
		ft := FileTick{File: o.File, Problems: o.Problems, Ran: o.Ran, Due: o.Due, Waiting: o.Waiting, Leased: o.Leased}
		if ft.Ran == nil {
			ft.Ran = []*WindowResult{}
		}
		if o.Err != nil {
			ft.Error = o.Err.Error()
		}
		res.Files = append(res.Files, ft)
	}
	res.Outcome = rec.Outcome()
	return res
}

// leaseWindow takes the window's lease in the workflow's shared catalog. With the lease held,
// it plans the window again (another process may have finished it since the plan was made):
// a window now done is released, and done is true.
func (r *Runner) leaseWindow(ctx context.Context, observer *Observer, s Scheduled, wp *WindowPlan) (*lake.Lease, bool, error) {
	cat, err := sharedCatalog(ctx, s.WF)
	if err != nil {
		return nil, false, err
	}
	name := s.WF.Name + "|" + wp.Window.String()
	if s.WF.Env != "" {
		name += "|env=" + s.WF.Env // a window in an environment is not the window on main
	}
	lease, err := cat.AcquireLease(ctx, name, r.Leases.Holder, r.Leases.TTL)
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
	again := reconcile.Plan(s.WF.Planning(), []v1.LogicalWindow{wp.Window}, obs, reconcile.Options{Now: r.Now(), Hold: true})
	if len(again) == 1 && !again[0].Runs() {
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
func sharedCatalog(ctx context.Context, wf *Object) (*lake.Catalog, error) {
	for _, t := range wf.Tasks {
		p := wf.Pipelines[t.ID]
		if p == nil || p.Metadata.Target.Catalog == nil || p.Metadata.Target.Catalog.Type != v1.CatalogSQL {
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
