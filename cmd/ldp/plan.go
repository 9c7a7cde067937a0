package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

// planOptions are the flags and arguments of the command newPlanCmd builds.
type planOptions struct {
	args []string
	win  string
	out  output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *planOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
}

func (o *planOptions) Run(ctx context.Context, s *streams) error {
	p, err := loadPipeline(o.args[0])
	if err != nil {
		return err
	}
	var w v1.LogicalWindow
	if o.win != "" {
		if w, err = parseWindow(p, o.win); err != nil {
			return usageError(o.cmd, "--window: %v", err)
		}
	}
	pl, err := controllers.PlanPipeline(p, w)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		if err := writeJSON(s.Out, pl); err != nil {
			return err
		}
	} else {
		printPlan(s.Out, pl, o.win)
	}
	if len(pl.Errors) > 0 {
		return failedExit()
	}
	return nil
}

func newPlanCmd(s *streams) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan SPEC",
		Short: "Show what a run of a Pipeline would do, without running it",
		Long: `Validate a Pipeline and print its route, spec hash, schedule, the window (and what a
shortcut stands for), the source path the window resolves to (noting a file that is not
there yet), and the idempotency key the run would publish under. A scheduled append that
would load the same rows in every window is an error.

Exit status: 0 when the plan holds no error, 1 otherwise.`,
		Example: `  ldp plan orders.json --window 2026-08-01/2026-08-02
  ldp plan orders.json --window yesterday --json`,
		Args: exactArgs(1, "name the Pipeline spec to plan, for example: ldp plan orders.json --window yesterday"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.win, "window", "", "the logical window: a date (that day in the spec's zone), START/END, yesterday, last-week or last-month")
	addOutput(cmd, &o.out, false)
	return cmd
}

func printPlan(w io.Writer, pl *v1.PipelinePlan, asked string) {
	row := func(k, v string) { fmt.Fprintf(w, "%-11s %s\n", k, v) }
	row("pipeline", pl.Pipeline)
	row("route", pl.Route)
	row("target", fmt.Sprintf("%s (%s)", pl.Target, pl.Mode))
	row("spec hash", pl.SpecHash)
	if pl.Schedule != "" {
		row("schedule", fmt.Sprintf("%s (from %s)", pl.Schedule, pl.ScheduleFrom))
	}
	switch {
	case pl.Window == "":
		row("window", "(none: the run owns the whole table)")
	case pl.WindowLocal != "":
		row("window", pl.WindowLocal)
	default:
		row("window", pl.Window)
	}
	if asked != "" && asked != pl.Window {
		row("", fmt.Sprintf("(%s)", asked))
	}
	if pl.SourcePath != "" {
		state := ""
		if !pl.SourceExists {
			state = " (not there yet)"
		}
		row("source", pl.SourcePath+state)
	}
	if pl.Key != "" {
		row("key", pl.Key)
	}
	for _, n := range pl.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, e := range pl.Errors {
		fmt.Fprintln(w, "error: "+e)
	}
}
