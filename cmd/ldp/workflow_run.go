package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// workflowRunOptions are the flags and arguments of the command newWorkflowRunCmd builds.
type workflowRunOptions struct {
	args       []string
	win, runID string
	attempt    int
	env        string
	out        output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *workflowRunOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	return o.out.validate(cmd)
}

func (o *workflowRunOptions) Run(ctx context.Context, s *streams) error {
	if o.win == "" {
		return usageError(o.cmd, "--window is required: the window to run, such as 2026-08-01/2026-08-02 or yesterday")
	}
	wf, err := controllers.LoadWorkflow(o.args[0])
	if err != nil {
		return err
	}
	if wf, err = wf.InEnv(o.env); err != nil {
		return err
	}
	w, err := controllers.ParseWindow(o.win, wf.Window.Location, now())
	if err != nil {
		return usageError(o.cmd, "--window: %v", err)
	}
	if err := controllers.CheckFinished(displayPath(wf.File), wf, w, now()); err != nil {
		return err
	}
	res := runnerFor(s).Run(ctx, wf, w, controllers.RunOptions{RunID: o.runID, Attempt: o.attempt})
	if o.out.JSON() {
		if err := writeJSON(s.Out, res); err != nil {
			return err
		}
	} else {
		printResult(s, res)
	}
	return outcomeExit(res.Outcome())
}

func newWorkflowRunCmd(s *streams) *cobra.Command {
	o := &workflowRunOptions{}
	cmd := &cobra.Command{
		Use:   "run FILE --window W",
		Short: "Run every task of a workflow for one window",
		Long: `Check everything first and start nothing when anything is invalid; then run the tasks one
at a time in dependency order. A pipeline task publishes under the key of the window, so a
task already done is skipped without reading its source. A task that fails or is blocked
makes its dependants upstream_failed; independent tasks still run.

With --env NAME the tasks publish into environment NAME's branches (main untouched) and read
Iceberg tables from them where NAME has written them, from main elsewhere; the run is NAME's
in the ledger (see ldp env).

Exit status: 0 success, 1 a task failed, 3 only a data gate held something back.`,
		Example: `  ldp workflow run config/samples/daily_orders_workflow.json --window 2026-08-02/2026-08-03
  ldp workflow run workflow.json --window 2026-08-02 --env dev`,
		Args: exactArgs(1, "name the workflow file, for example: ldp workflow run workflow.json --window yesterday"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.win, "window", "", "the window: a date (that day in the spec's zone), START/END, yesterday, last-week or last-month")
	cmd.Flags().StringVar(&o.runID, "run-id", "", "continue this run (default: a new one)")
	cmd.Flags().IntVar(&o.attempt, "attempt", 1, "the attempt of the run")
	addEnvFlag(cmd, &o.env, "run in this environment: publish into its branches, main untouched (see ldp env)")
	addOutput(cmd, &o.out, false)
	return cmd
}
