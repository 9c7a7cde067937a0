package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// applyOptions are ldp apply's: a fan-out of Reconcile requests that run what is not done.
type applyOptions struct {
	reconcileFlags
	dryRun bool
	req    controllers.Folder
}

func (o *applyOptions) Validate(cmd *cobra.Command, args []string) error {
	var err error
	o.req, err = o.request(cmd, "apply")
	o.req.Each.DryRun, o.req.Each.ReadSources = o.dryRun, o.dryRun
	return err
}

func (o *applyOptions) Run(ctx context.Context, s *streams) error {
	var results []*controllers.WindowResult
	o.req.Each.OnWindow = func(_ int, w controllers.WindowRun) {
		if w.Result == nil {
			return
		}
		results = append(results, w.Result)
		if !o.out.JSON() {
			printResult(s, w.Result)
		}
	}
	res, err := (&controllers.Reconciler{Runner: runnerFor(s)}).ReconcileFolder(ctx, o.req)
	if err != nil {
		return err
	}
	if o.dryRun {
		if plans := plansOf(res); len(plans) > 0 || badObjects(res) == nil {
			printDiff(s.Out, plans) // what ldp diff prints: the same Reconcile
		}
		return badObjects(res)
	}
	if o.out.JSON() {
		if err := writeJSON(s.Out, applyRows(res, results)); err != nil {
			return err
		}
	}
	if bad := badObjects(res); bad != nil {
		return bad // "nothing to do" would hide that some objects were not planned
	}
	waiting, stale := 0, 0
	for _, obj := range res.Objects {
		for _, wp := range obj.Windows {
			if len(wp.Stale) > 0 && !wp.Runs() {
				stale++
			}
			if len(wp.Stale) > 0 && !wp.Runs() && !o.out.JSON() {
				fmt.Fprintf(s.Out, "%s %s/%s: %s; ldp apply --stale runs it again\n", obj.Name, wp.Start, wp.End, controllers.StaleMessage(wp.Stale))
			}
			if !wp.WaitsUpstream() {
				continue
			}
			waiting++
			if !o.out.JSON() {
				fmt.Fprintf(s.Out, "%s %s/%s: %s\n", obj.Name, wp.Start, wp.End, controllers.WaitMessages(wp.Waiting))
			}
		}
	}
	switch {
	case o.out.JSON():
	case len(results) == 0 && stale > 0 && waiting == 0:
		fmt.Fprintf(s.Out, "nothing ran: %d %s stale; ldp apply --stale runs %s again\n", stale, plural(stale, "window is", "windows are"), plural(stale, "it", "them"))
	case len(results) == 0 && waiting > 0:
		fmt.Fprintf(s.Out, "nothing ran: %d %s for %s upstream windows\n", waiting, plural(waiting, "window waits", "windows wait"), plural(waiting, "its", "their"))
	case len(results) == 0:
		fmt.Fprintln(s.Out, "nothing to do: every window is done")
	}
	return outcomeExit(res.Outcome())
}

func newApplyCmd(s *streams) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR",
		Short: "Run what is not done: the difference ldp diff shows",
		Long: `Validate, compute the same plan as ldp diff, and run only its difference: windows that are
published are skipped without being read; a window that failed, was blocked or was left
unfinished resumes as the next attempt of its last run, with the tasks whose keys are on
main skipped. Running apply again right after runs nothing.

A window whose upstream windows (metadata.upstream) are not all published waits, and says
which; an upstream in the same apply runs first. A published window whose upstream window was
replaced under a new key since is stale: apply shows it and leaves it alone, and --stale runs
it again under its replace key.

With -o json, apply prints one row per window, sorted by object and window: each run's result,
and each window that did not run because it waits for its upstream windows (status "waiting",
with "waiting" as ldp diff -o json gives it) or is stale (status "stale", with "stale").

Without --window or --from, the windows are those due by each schedule at now.

With --env NAME every object runs in environment NAME: each task publishes into NAME's
branch of its table (forked from main on first use; main is never touched), reads Iceberg
tables from NAME's branch where NAME has written them and from main elsewhere, and counts as
done only what is on NAME's branches and NAME's own runs (a failed run on main is not resumed
in NAME). ldp diff --env NAME then shows what main lacks, and ldp promote NAME moves it.

Exit status: 0 success, 1 a task failed, 3 only a data gate held something back.`,
		Example: `  ldp apply -f config/samples/daily_orders_workflow.json --window 2026-08-02/2026-08-03
  ldp apply -f config/
  ldp apply -f workflow.json --from 2026-08-01 --to 2026-08-08 --dry-run
  ldp apply -f workflow.json --from 2026-08-01 --to 2026-08-06 --env dev
  ldp apply -f config/ --from 2026-08-01 --to 2026-08-08 --stale
  ldp apply -f config/ --from 2026-08-01 --to 2026-08-08 -o json`,
		Args: cobra.NoArgs,
		RunE: runVerb(o, s),
	}
	addReconcileFlags(cmd, &o.reconcileFlags, false)
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the plan and run nothing")
	return cmd
}

func printResult(s *streams, res *controllers.WindowResult) {
	env := ""
	if res.Env != "" {
		env = " in environment " + res.Env
	}
	fmt.Fprintf(s.Out, "%s %s%s: %s (run %s attempt %d)\n", res.Workflow, res.Window, env, res.Status, res.RunID, res.Attempt)
	for _, t := range res.Tasks {
		line := fmt.Sprintf("  %-14s %s", t.ID, t.Status)
		if t.Attempts > 1 {
			line += fmt.Sprintf(" after %d attempts", t.Attempts)
		}
		if t.Error != "" {
			line += ": " + strings.SplitN(t.Error, "\n", 2)[0]
		}
		fmt.Fprintln(s.Out, line)
	}
}

// applyRow is one window of ldp apply -o json: a run's result, or a window that did not run
// because it waits for its upstream windows (status "waiting", with what it waits for) or is
// stale (status "stale", with the upstream windows replaced since it ran), as ldp diff -o json
// shows them.
type applyRow struct {
	*controllers.WindowResult
	// Status shadows the result's: a window that did not run has no run outcome.
	Status  string              `json:"status"`
	Waiting []controllers.Wait  `json:"waiting,omitempty"`
	Stale   []controllers.Stale `json:"stale,omitempty"`
}

// applyRows are the results of the runs and the windows that waited or were stale and did
// not run, sorted by object, window and environment (never null: an empty apply is []).
func applyRows(res *controllers.FolderResult, results []*controllers.WindowResult) []applyRow {
	rows := make([]applyRow, 0, len(results))
	for _, r := range results {
		rows = append(rows, applyRow{WindowResult: r, Status: string(r.Status)})
	}
	for _, obj := range res.Objects {
		env := ""
		if obj.WF != nil {
			env = obj.WF.Env
		}
		for _, wp := range obj.Windows {
			row := applyRow{WindowResult: &controllers.WindowResult{Workflow: obj.Name, Window: wp.Window.String(), Env: env, Tasks: []controllers.TaskResult{}}}
			switch {
			case wp.WaitsUpstream():
				row.Status, row.Waiting = "waiting", wp.Waiting
			case len(wp.Stale) > 0 && !wp.Runs():
				row.Status, row.Stale = "stale", wp.Stale
			default:
				continue
			}
			rows = append(rows, row)
		}
	}
	slices.SortStableFunc(rows, func(a, b applyRow) int {
		return cmp.Or(cmp.Compare(a.Workflow, b.Workflow), cmp.Compare(a.Window, b.Window), cmp.Compare(a.Env, b.Env))
	})
	return rows
}
