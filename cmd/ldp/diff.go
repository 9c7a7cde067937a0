package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// diffOptions are ldp diff's: the fan-out of ldp apply, in dry run.
type diffOptions struct {
	reconcileFlags
	req controllers.Folder
}

func (o *diffOptions) Validate(cmd *cobra.Command, args []string) error {
	var err error
	o.req, err = o.request(cmd, "diff")
	o.req.Each.DryRun, o.req.Each.ReadSources = true, true
	if err == nil && o.env != "" && o.window == "" && o.from == "" && o.replace {
		return usageError(cmd, "--replace plans windows to run again: with --env, name them with --window or --from (without, ldp diff --env shows what main lacks)")
	}
	return err
}

func (o *diffOptions) Run(ctx context.Context, s *streams) error {
	if o.env != "" && o.window == "" && o.from == "" {
		return o.envDiff(ctx, s)
	}
	res, err := (&controllers.Reconciler{Runner: runnerFor(s)}).ReconcileFolder(ctx, o.req)
	if err != nil {
		return err
	}
	plans := plansOf(res)
	switch {
	case o.out.JSON():
		if err := writeJSON(s.Out, plans); err != nil {
			return err
		}
	case o.out.format == outCSV:
		if err := diffTable(plans).write(s.Out, outCSV, "object", "file", "window_start", "window_end", "state", "action", "task", "task_action", "reason", "idempotency_key"); err != nil {
			return err
		}
	case len(plans) > 0 || badObjects(res) == nil:
		printDiff(s.Out, plans)
	}
	if bad := badObjects(res); bad != nil {
		return bad
	}
	return changesExit(res.Pending())
}

func newDiffCmd(s *streams) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff -f FILE|DIR",
		Short: "Show what ldp apply would run, window by window and task by task",
		Long: `Compare the windows each workflow (or scheduled dataset config) should have with what is
done (the keys on each table's main branch and the run ledger) and print the difference:
each window's state (published, failed, blocked, partial, missing), what would happen to it
(skip, run, resume, replace), and for each task, run or skip and why. It reads and never
writes, and is the same plan ldp apply runs.

Without --window or --from, the windows are those due by each schedule at now (--now).

With --env NAME and --window or --from, the plan is the environment's: its keys on its
branches (main's as they were at the fork included) and its own runs (ldp apply --env runs
it). With --env NAME alone, it shows instead what main lacks that NAME has, on every table
of the objects named: each of the environment's windows, whether main has its key, its
operation, rows added and deleted, and its checks (failed for a window published under
on_failure "warn"), sorted by window, and what ldp promote NAME would do (fast-forward, or
refused because main moved: --rebase). Exit 2 when main lacks a window, 0 when it lacks none.

Exit status (as terraform plan -detailed-exitcode): 0 nothing to do, 2 something would
run, 1 an error.`,
		Example: `  ldp diff -f config/
  ldp diff -f workflow.json --window 2026-08-01/2026-08-02
  ldp diff -f workflow.json --from 2026-08-01 --to 2026-09-01 -o json
  ldp diff -f config/ -o csv
  ldp diff -f config/ --env dev                          # what main lacks that dev has
  ldp diff -f workflow.json --env dev --window 2026-08-02 -o json`,
		Args: cobra.NoArgs,
		RunE: runVerb(o, s),
	}
	addReconcileFlags(cmd, &o.reconcileFlags, true)
	return cmd
}

// addReconcileFlags registers the flags diff and apply share; rows says whether the output is
// rows (diff's is, so it offers csv).
func addReconcileFlags(cmd *cobra.Command, f *reconcileFlags, rows bool) {
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, "a workflow, a dataset config, or a folder of them (repeatable)")
	cmd.Flags().StringVar(&f.window, "window", "", "one window: a date (that day in the spec's zone), START/END, yesterday, last-week or last-month")
	cmd.Flags().StringVar(&f.from, "from", "", "the first window of a range: a date, an ISO-8601 time, or a day counted back (yesterday, \"7 days ago\")")
	cmd.Flags().StringVar(&f.to, "to", "", "the end of a range (default: the end of the last complete window)")
	cmd.Flags().StringVar(&f.now, "now", "", "the time to plan at, ISO-8601 (default: now)")
	cmd.Flags().BoolVar(&f.replace, "replace", false, "run every window again under its replace key")
	what := "plan and run in this environment: publish on its branches (main untouched), read Iceberg inputs from them where it has written them, and count only its own runs; see ldp env"
	if rows {
		what = "with --window or --from, plan in this environment (as apply --env runs); without, show what main lacks that the environment has, window by window; see ldp env"
	}
	addEnvFlag(cmd, &f.env, what)
	cmd.Flags().BoolVar(&f.stale, "stale", false, "run again, under its replace key, each published window whose upstream window was replaced after it ran (metadata.upstream)")
	addOutput(cmd, &f.out, rows)
}
