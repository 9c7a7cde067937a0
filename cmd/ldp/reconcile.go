package main

import (
	"context"

	"fmt"
	"github.com/spf13/cobra"
	"io"
	"sort"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/reconcile"
)

// objectPlan is the plan of one workflow (or dataset config) over its desired windows.
type objectPlan struct {
	WF      *controllers.Workflow  `json:"-"`
	Name    string                 `json:"name"`
	File    string                 `json:"file"`
	Windows []reconcile.WindowPlan `json:"windows"`
}

// reconcileFlags are the flags diff and apply share.
type reconcileFlags struct {
	files         []string
	window        string
	from, to, now string
	replace       bool
	json          bool
}

func (f *reconcileFlags) desired() (controllers.Desired, error) {
	d := controllers.Desired{Window: f.window, From: f.from, To: f.to, Now: now()}
	if f.window != "" && f.from != "" {
		return d, fmt.Errorf("--window and --from are two ways to say which windows: give one")
	}
	if f.to != "" && f.from == "" {
		return d, fmt.Errorf("--to needs --from")
	}
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return d, fmt.Errorf("--now %q: want an ISO-8601 time with an offset, such as 2026-08-05T02:05:00Z", f.now)
		}
		d.Now = t
	}
	return d, nil
}

// plan checks the flags of diff or apply (verb) and computes their shared plan. An object that
// cannot be planned (an invalid spec) does not stop the others: it comes back in bad, and the
// command reports it after doing the rest.
func (f *reconcileFlags) plan(cmd *cobra.Command, verb string) (plans []objectPlan, bad error, err error) {
	if len(f.files) == 0 {
		return nil, nil, usageError(cmd, "name what to %s with -f, for example: ldp %s -f config/", verb, verb)
	}
	d, err := f.desired()
	if err != nil {
		return nil, nil, usageError(cmd, "%v", err)
	}
	return planObjects(cmd.Context(), f.files, d, f.replace)
}

// objectErrors are the objects of a folder that could not be planned.
type objectErrors []error

func (e objectErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d %s could not be planned, the others were:\n%s", len(e), plural(len(e), "object", "objects"), strings.Join(msgs, "\n"))
}

// Unwrap makes each object's error visible to errors.As (a config error stays one).
func (e objectErrors) Unwrap() []error { return e }

// objectFiles finds the objects to reconcile: a file named is one object; in a folder, the
// workflow files and the dataset configs with a schedule.
func objectFiles(paths []string) ([]string, error) {
	cands, err := specs.Discover(paths)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cands {
		if c.Explicit {
			out = append(out, c.Path)
			continue
		}
		if c.TooLarge {
			continue
		}
		obj, err := specs.Read(c.Path)
		if err != nil {
			continue // ldp validate reports it; a folder may hold other JSON
		}
		switch o := obj.(type) {
		case *v1.Workflow:
			out = append(out, c.Path)
		case *v1.Pipeline:
			if sched, _ := pipeline.Schedule(o); sched != "" {
				out = append(out, c.Path)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// planObjects computes the plan of every object: what ldp diff prints and ldp apply runs. The
// objects that could not be planned are returned together in bad; the rest are planned.
func planObjects(ctx context.Context, files []string, d controllers.Desired, replace bool) ([]objectPlan, error, error) {
	paths, err := objectFiles(files)
	if err != nil {
		return nil, nil, err
	}
	var out []objectPlan
	var bad objectErrors
	observer := new(controllers.Observer)
	defer observer.Close()
	for _, p := range paths {
		wf, err := controllers.LoadWorkflow(p)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		windows, err := d.Windows(wf)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", displayPath(p), err))
			continue
		}
		obs, err := observer.Observe(ctx, wf)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", displayPath(p), err))
			continue
		}
		out = append(out, objectPlan{WF: wf, Name: wf.Name, File: displayPath(p), Windows: reconcile.Plan(wf.Object(), windows, obs, reconcile.Options{Replace: replace})})
	}
	if len(bad) == 0 {
		return out, nil, nil
	}
	if len(bad) == 1 && len(out) == 0 {
		return nil, nil, bad[0] // a single object: its error as it is
	}
	return out, bad, nil
}

// printPlans writes plans window by window and task by task, and returns the windows that
// would run.
func printPlans(w io.Writer, plans []objectPlan) int {
	pending := 0
	for _, op := range plans {
		fmt.Fprintf(w, "%s (%s)\n", op.Name, op.File)
		for _, wp := range op.Windows {
			note := ""
			if wp.Unfinished {
				note = ", last run unfinished"
			}
			fmt.Fprintf(w, "  %s/%s  %s%s -> %s\n", wp.Start, wp.End, wp.State, note, wp.Action)
			if wp.Action == reconcile.Skip {
				continue
			}
			pending++
			for _, tp := range wp.Tasks {
				key := ""
				if tp.Key != "" {
					key = "  key " + tp.Key[:12] + "…"
				}
				fmt.Fprintf(w, "    %-14s %-4s  %s%s\n", tp.ID, tp.Action, tp.Reason, key)
			}
		}
	}
	return pending
}

// runnerFor is the workflow runner of the CLI.
func runnerFor(s *streams) *controllers.Runner {
	return &controllers.Runner{Log: s.Err, Getenv: s.Getenv, Version: version, Hook: faultHook(s.Getenv),
		Sinks: func(p *v1.Pipeline) []ledger.Sink { return sinksFor(p, s.Getenv)[1:] }}
}
