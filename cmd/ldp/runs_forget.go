package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// runsForgetOptions are the flags and arguments of ldp runs forget.
type runsForgetOptions struct {
	file     string
	from, to string
	now      string
	cmd      *cobra.Command
}

func newRunsForgetCmd(s *streams) *cobra.Command {
	o := &runsForgetOptions{}
	cmd := &cobra.Command{
		Use:   "forget FILE --from START [--to END]",
		Short: "Forget the runs of windows run by mistake, so status and the page stop counting them",
		Long: `Append to the ledger an event that forgets the runs of the workflow's (or windowed dataset
config's) windows from START to END, read as ldp backfill reads them, that did not succeed:
from then on ldp status, ldp runs, ldp diff and the status page leave them out, and those
windows are missing again, as before they ran. Use it after a mistyped --from ran hundreds of
windows that were never meant.

Nothing else changes: the ledger stays append-only (the runs' lines are still in the file),
no table is touched, and a window that published stays published, with its succeeded runs.`,
		Example: `  ldp runs forget orders.json --from 2025-01-01 --to 2026-01-01`,
		Args:    exactArgs(1, "name the workflow or dataset config, for example: ldp runs forget orders.json --from 2025-01-01 --to 2026-01-01"),
		RunE:    runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.from, "from", "", "the first window whose runs to forget")
	cmd.Flags().StringVar(&o.to, "to", "", "the end of the range, excluded (default: the end of the last complete window)")
	cmd.Flags().StringVar(&o.now, "now", "", "the time the default end is counted from, ISO-8601")
	return cmd
}

func (o *runsForgetOptions) Validate(cmd *cobra.Command, args []string) error {
	o.file, o.cmd = args[0], cmd
	return nil
}

func (o *runsForgetOptions) Run(_ context.Context, s *streams) error {
	if o.from == "" {
		return usageError(o.cmd, "--from is required: the first window whose runs to forget, such as 2025-01-01")
	}
	now, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	wf, err := controllers.LoadWorkflow(o.file)
	if err != nil {
		return err
	}
	n, err := controllers.ForgetRuns(wf, o.from, o.to, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s: forgot %d %s; no table was touched\n", wf.Name, n, plural(n, "run", "runs"))
	return nil
}
