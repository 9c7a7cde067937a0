package controllers

import (
	"cmp"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/reconcile"
)

// WindowOutcome is how one window of a backfill ended.
type WindowOutcome string

// Window outcomes of a backfill.
const (
	OutcomePublished WindowOutcome = "published" // something was written or built
	OutcomeSkipped   WindowOutcome = "skipped"   // every task found its work done
	OutcomeBlocked   WindowOutcome = WindowOutcome(v1.Blocked)
	OutcomeFailed    WindowOutcome = WindowOutcome(v1.Failed)
	OutcomeDone      WindowOutcome = "done" // published before the backfill: not read, planned or logged
	OutcomeNotRun    WindowOutcome = "not_run"
	// OutcomeWaiting is a window left alone because an upstream window it overlaps is not
	// published (reconcile.Waits): a backfill of the upstream makes it due.
	OutcomeWaiting WindowOutcome = "waiting"
)

// BackfillOptions say which windows a backfill covers and how.
type BackfillOptions struct {
	From, To      string
	Now           time.Time
	MaxWindows    int
	Replace       bool
	DryRun        bool
	StopOnFailure bool
	// Env runs the range in that environment (Request.Env).
	Env string
	// Batch is how many windows publish in one catalog commit (0 is lake.DefaultGroupSize;
	// 1 runs the windows one by one, as StopOnFailure always does).
	Batch int
	// Parallel is how many windows are read and checked at once (0 is the number of CPUs, at
	// most 8).
	Parallel int
	// OnWindow is called when a window is done (for progress).
	OnWindow func(done, total int, w BackfillWindow)
	// Confirm, when set, is asked once the plan is made and before anything runs, when
	// reconcile.Confirm says a range this large asks; false runs nothing (ErrDeclined).
	Confirm func(BackfillSummary) bool
	// Terminal and Yes are what reconcile.Confirm decides by: a person can answer, or said yes.
	Terminal, Yes bool
}

// ConfirmAbove is how many windows a backfill runs before it asks (reconcile.Confirm).
const ConfirmAbove = reconcile.ConfirmAbove

// BackfillSummary is what a backfill asks about before it runs a large range.
type BackfillSummary struct {
	// Run is how many windows would run, NoSource how many of those have a pipeline whose
	// source file is not there (each such run fails).
	Run, NoSource int
}

// ErrDeclined is a backfill that was asked about and not confirmed: nothing ran.
var ErrDeclined = errors.New("backfill not confirmed: nothing ran")

// BackfillWindow is one window of a backfill.
type BackfillWindow struct {
	Start   string         `json:"start"`
	End     string         `json:"end"`
	State   v1.WindowState `json:"state"`
	Keys    []string       `json:"keys"`
	Outcome WindowOutcome  `json:"outcome"`
	// Waiting is what the window's upstream objects lack, when it waits for them.
	Waiting []reconcile.Wait `json:"waiting,omitempty"`
	Result  *WindowResult    `json:"result,omitempty"`
}

// BackfillResult is a whole backfill.
type BackfillResult struct {
	Workflow string                 `json:"workflow"`
	File     string                 `json:"file"`
	Env      string                 `json:"env,omitempty"`
	Windows  []BackfillWindow       `json:"windows"`
	States   map[v1.WindowState]int `json:"states"`
	Counts   map[WindowOutcome]int  `json:"counts"`
	// Outcome folds the windows' outcomes: failed, blocked or succeeded.
	Outcome v1.Outcome `json:"outcome"`
}

// Backfill runs every window of a range of wf that is not done. Everything is checked, the
// keys on main read with one walk of each table, and the ledger read, before anything runs;
// nothing is created. A window that fails or is blocked does not stop the others unless
// StopOnFailure. A backfill does not carry a run on: each window it runs is a run of its own.
func (r *Runner) Backfill(ctx context.Context, wf *Object, o BackfillOptions) (*BackfillResult, error) {
	if o.MaxWindows <= 0 {
		o.MaxWindows = 1000
	}
	windows, err := Desired{From: o.From, To: o.To, Now: o.Now}.Windows(wf)
	if err != nil {
		return nil, err
	}
	if len(windows) == 0 {
		return nil, ldperr.Configf(wf.File, "the range %s to %s holds no complete window", o.From, orEnd(o.To))
	}
	if len(windows) > o.MaxWindows {
		return nil, ldperr.Configf(wf.File, "the range holds %d windows, more than --max-windows %d: narrow it or raise --max-windows", len(windows), o.MaxWindows)
	}
	if o.Replace {
		for _, t := range wf.Tasks {
			if p := wf.Pipelines[t.ID]; t.Kind() == v1.TaskPipeline && p != nil && p.IsIceberg() && (p.Metadata.Window == nil || p.Metadata.Window.Column == "") {
				return nil, ldperr.Configf(p.Path, "--replace replaces only the rows of each window, so every pipeline that writes to Iceberg needs metadata.window.column; %s has none", p.Identifier)
			}
		}
	}
	// A backfill is one Reconcile of the range: it differs from apply's only in its request (a
	// range, Fresh: it does not carry a run on, each window it runs is a run of its own) and in
	// running its windows in groups.
	res := &BackfillResult{Workflow: wf.Name, File: wf.File, Env: cmp.Or(o.Env, wf.Env), States: map[v1.WindowState]int{}, Counts: map[WindowOutcome]int{}}
	req := Request{Object: Scheduled{Path: wf.File, WF: wf}, From: o.From, To: o.To, Now: o.Now, Replace: o.Replace, Fresh: true, DryRun: o.DryRun,
		Env: o.Env, Run: WindowRuns{Mode: Grouped, Max: o.MaxWindows, Batch: o.Batch, Parallel: o.Parallel}}
	// An environment's windows publish one by one (a publish into a branch shares no commit
	// with other windows: lake.Publish).
	if o.StopOnFailure || o.Batch == 1 || o.Env != "" {
		req.Run = WindowRuns{Mode: Sequential, Max: o.MaxWindows, StopOnFailure: o.StopOnFailure}
	}
	req.OnPlan = func(plans []WindowPlan) error {
		for _, p := range plans {
			bw := BackfillWindow{Start: p.Start, End: p.End, State: p.State, Keys: []string{}, Waiting: p.Waiting}
			for _, tp := range p.Tasks {
				if tp.Key != "" {
					bw.Keys = append(bw.Keys, tp.Key)
				}
			}
			res.States[p.State]++
			res.Windows = append(res.Windows, bw)
		}
		if o.DryRun {
			return nil
		}
		if err := refuseUnfinished(wf, plans); err != nil {
			return err
		}
		if o.Confirm != nil {
			sum := BackfillSummary{}
			for _, p := range plans {
				if p.Action != v1.ActionSkip && !p.WaitsUpstream() {
					sum.Run++
				}
			}
			if reconcile.Confirm(sum.Run, o.Terminal, o.Yes) {
				sum.NoSource = noSource(wf, plans)
				if !o.Confirm(sum) {
					return ErrDeclined
				}
			}
		}
		return nil
	}
	req.OnWindow = func(i int, w WindowRun) {
		bw := &res.Windows[i]
		switch {
		case w.Result != nil:
			bw.Result, bw.Outcome = w.Result, outcomeOf(w.Result)
		case w.Plan.WaitsUpstream():
			bw.Outcome = OutcomeWaiting
		case w.NotRun == NotRunNotDue:
			bw.Outcome = OutcomeDone
		default:
			bw.Outcome = OutcomeNotRun
		}
		res.Counts[bw.Outcome]++
		if o.OnWindow != nil {
			o.OnWindow(i+1, len(res.Windows), *bw)
		}
	}
	if _, err := (&Reconciler{Runner: r}).Reconcile(ctx, req); err != nil {
		return nil, err
	}
	if o.DryRun {
		return res, nil
	}
	res.Outcome = reconcile.FoldCounts(res.Counts)
	return res, nil
}

// noSource counts the windows to run that have a pipeline task whose source file is not there.
func noSource(wf *Object, plans []WindowPlan) int {
	n := 0
	for _, wp := range plans {
		if wp.Action == v1.ActionSkip || wp.WaitsUpstream() {
			continue
		}
		for _, t := range wf.Tasks {
			p := wf.Pipelines[t.ID]
			if t.Kind() != v1.TaskPipeline || p == nil {
				continue
			}
			if path, ok := pipeline.SourceFile(p, wp.Window); path != "" && !ok {
				n++
				break
			}
		}
	}
	return n
}

// concurrent is a copy of r whose log and random source can be shared by several windows
// running at once.
func (r *Runner) concurrent() *Runner {
	r.defaults()
	c := *r
	c.Log = &lockedWriter{w: r.Log}
	c.Rand = rand.New(&lockedSource{src: r.Rand})
	return &c
}

// forWindow is a copy of r whose log lines begin with the window they are about: a backfill's
// check lines and warnings would otherwise not say which of its windows they came from.
func (r *Runner) forWindow(wp WindowPlan) *Runner {
	r.defaults()
	c := *r
	c.Log = &prefixWriter{w: r.Log, prefix: wp.Start + "/" + wp.End + ": ", bol: true}
	return &c
}

// prefixWriter starts every line with prefix, writing each Write whole in one call so lines of
// windows running at once do not interleave.
type prefixWriter struct {
	w      io.Writer
	prefix string
	bol    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if p.bol {
			out = append(out, p.prefix...)
		}
		out = append(out, c)
		p.bol = c == '\n'
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}

func outcomeOf(r *WindowResult) WindowOutcome {
	switch reconcile.Fold(r.outcomes()) {
	case v1.Failed:
		return OutcomeFailed
	case v1.Blocked:
		return OutcomeBlocked
	}
	for _, t := range r.Tasks {
		if t.Status != v1.Skipped {
			return OutcomePublished
		}
	}
	return OutcomeSkipped
}

func orEnd(to string) string {
	if to == "" {
		return "the end of the last complete window"
	}
	return to
}
