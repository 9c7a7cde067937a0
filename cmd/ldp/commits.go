package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// commitRow is one publish on main, as ldp commits prints it.
type commitRow = controllers.Commit

// commitsOptions are the flags and arguments of the command newCommitsCmd builds.
type commitsOptions struct {
	args []string
	key  string
	json bool
}

func (o *commitsOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	return nil
}

func (o *commitsOptions) Run(ctx context.Context, s *streams) error {
	rows, err := controllers.Commits(ctx, o.args[0], o.key)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(s.Out, rows)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tCOMMITTED (UTC)\tKEY\tRUN\tATTEMPT\tWINDOW\tROWS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.SnapshotID, time.UnixMilli(r.TimestampMs).UTC().Format("2006-01-02 15:04:05"),
			r.Key, r.RunID, orDash(r.Attempt), orDash(r.Window), orDash(r.Rows))
	}
	return tw.Flush()
}

func newCommitsCmd(s *streams) *cobra.Command {
	o := &commitsOptions{}
	cmd := &cobra.Command{
		Use:   "commits SPEC",
		Short: "List the keyed publishes on the main branch of a Pipeline's table, oldest first",
		Long: `List one line per publish on main: the snapshot, its idempotency key, the run id and
attempt that published it, its logical window and the rows it added. Each key appears at
most once: that is the exactly-once guarantee, and this is where to check it.`,
		Example: `  ldp commits orders.json
  ldp commits orders.json --key b1ceeb08`,
		Args: exactArgs(1, "name the Pipeline spec whose table to list, for example: ldp commits orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.key, "key", "", "only the publish whose key starts with this")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the publishes as JSON")
	return cmd
}
