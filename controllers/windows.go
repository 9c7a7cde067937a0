package controllers

import (
	"context"
	"runtime"
	"sync"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/pipeline"
)

// RunMode is how the one window runner runs the windows of a plan.
type RunMode int

const (
	// Sequential runs the windows one after another, each published on its own.
	Sequential RunMode = iota
	// Leased runs them one after another, each under a lease in the workflow's shared
	// (PostgreSQL) catalog taken when it starts (Runner.Leases), and planned again once held:
	// processes on several machines divide the windows of one folder. It needs Runner.Leases.
	Leased
	// Grouped runs several windows at once and publishes the appends of the windows that are
	// ready together, several to a catalog commit (each still its own snapshot, key, run and
	// events): a backfill's.
	Grouped
)

// WindowRuns say how the windows a plan runs are run.
type WindowRuns struct {
	Mode RunMode
	// Max bounds the windows run (0 is 1000); the rest wait for the next reconcile.
	Max int
	// StopOnFailure makes the first window that fails leave the rest not run (Sequential and
	// Leased).
	StopOnFailure bool
	// Batch is how many windows publish in one catalog commit, and Parallel how many are read
	// and checked at once (Grouped; 0 is lake.DefaultGroupSize, and the number of CPUs, at
	// most 8).
	Batch, Parallel int
}

// NotRun is why a window of a plan did not run.
type NotRun string

// Why a window did not run.
const (
	NotRunNotDue  NotRun = "not_due" // the plan does not run it: done, waiting for a retry or held
	NotRunWaiting NotRun = "waiting" // past Max, or ldp is shutting down: a later reconcile runs it
	NotRunLeased  NotRun = "leased"  // another process holds its lease
	NotRunDone    NotRun = "done"    // planned again under its lease, it was found done
	NotRunStopped NotRun = "stopped" // an earlier window failed (StopOnFailure)
	NotRunFailed  NotRun = "failed"  // its lease could not be taken: the run stopped there
)

// WindowRun is what became of one window of a plan: its run, or why it did not run.
type WindowRun struct {
	Plan   WindowPlan
	Result *WindowResult
	NotRun NotRun
}

// runsNow reports whether the runner runs a window of the plan. A range asked for now (Fresh:
// a backfill) runs a window whose retry is not due yet too: the user asked for it; never one
// whose upstream windows are not all published, which would read an incomplete upstream.
func runsNow(wp WindowPlan, fresh bool) bool {
	if fresh {
		return wp.Action != v1.ActionSkip && !wp.WaitsUpstream()
	}
	return wp.Runs()
}

// runWindows is the one window runner: it runs the windows of plans that run now, in the mode
// req.Run says, and returns what became of each (in plan order, as far as it got), telling
// req.OnWindow of each in plan order as it ends. The error is a lease's: the windows after it
// are not looked at.
func (r *Runner) runWindows(ctx context.Context, observer *Observer, s Scheduled, plans []WindowPlan, req Request) ([]WindowRun, error) {
	o := req.Run
	if o.Max <= 0 {
		o.Max = 1000
	}
	runs := make([]WindowRun, len(plans))
	for i, wp := range plans {
		runs[i].Plan = wp
	}
	var sniffs *pipeline.Sniffs
	if req.Fresh {
		sniffs = pipeline.NewSniffs()
	}
	var group *lake.Group
	run := r
	if o.Mode == Grouped {
		size := o.Batch
		if size <= 0 {
			size = lake.DefaultGroupSize
		}
		parallel := o.Parallel
		if parallel <= 0 {
			parallel = min(runtime.GOMAXPROCS(0), 8)
		}
		group = lake.NewGroup(parallel, size)
		// The windows a commit publishes are read and checked together, too (Sniffs.Batch).
		var batch []v1.LogicalWindow
		for _, wp := range plans {
			if runsNow(wp, req.Fresh) {
				batch = append(batch, wp.Window)
			}
		}
		if sniffs == nil {
			sniffs = pipeline.NewSniffs()
		}
		sniffs.Batch(batch, size)
		defer sniffs.Close()
		run = r.concurrent()
	}
	var (
		mu       sync.Mutex
		finished = make([]bool, len(runs))
		next     int
		wg       sync.WaitGroup
	)
	// report marks window i finished and tells of every window up to the first unfinished one.
	report := func(i int) {
		mu.Lock()
		defer mu.Unlock()
		finished[i] = true
		for ; next < len(runs) && finished[next]; next++ {
			if req.OnWindow != nil {
				req.OnWindow(next, runs[next])
			}
		}
	}
	// exec runs window i (under lease, when held) and reports it.
	exec := func(i int, lease *lake.Lease) {
		plan := runs[i].Plan
		wr := run
		if req.Fresh {
			wr = run.forWindow(plan)
		}
		stopRenew := r.renew(ctx, lease)
		res := wr.Run(ctx, s.WF, plan.Window, RunOptions{Plan: &plan, Replace: plan.Action == v1.ActionReplace, Group: group, Sniffs: sniffs})
		stopRenew()
		if group != nil {
			group.Leave()
		}
		runs[i].Result = res
		report(i)
	}
	ran, stopped := 0, false
	for i := range runs {
		w := &runs[i]
		switch {
		case stopped:
			w.NotRun = NotRunStopped
		case !runsNow(w.Plan, req.Fresh):
			w.NotRun = NotRunNotDue
		case ran >= o.Max || r.stopping():
			w.NotRun = NotRunWaiting // the next reconcile starts with the first window not done
		}
		if w.NotRun != "" {
			report(i)
			continue
		}
		if o.Mode == Grouped {
			ran++
			group.Enter()
			wg.Add(1)
			go func() {
				defer wg.Done()
				exec(i, nil)
			}()
			continue
		}
		var lease *lake.Lease
		if o.Mode == Leased {
			held, done, err := r.leaseWindow(ctx, observer, s, &w.Plan)
			if err != nil {
				w.NotRun = NotRunFailed
				return runs[:i+1], err
			}
			if held == nil {
				w.NotRun = NotRunLeased
				if done {
					w.NotRun = NotRunDone
				}
				report(i)
				continue
			}
			lease = held
		}
		ran++
		exec(i, lease)
		if o.StopOnFailure && w.Result.Outcome() == v1.Failed {
			stopped = true
		}
	}
	wg.Wait()
	return runs, nil
}
