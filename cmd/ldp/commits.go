package main

import (
	"context"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/tables"
)

// commitRow is one publish on main, as ldp commits prints it.
type commitRow = tables.Commit

// commitsOptions are the flags and arguments of the command newCommitsCmd builds.
type commitsOptions struct {
	args []string
	key  string
	env  string
	out  output
}

func (o *commitsOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	return o.out.validate(cmd)
}

func (o *commitsOptions) Run(ctx context.Context, s *streams) error {
	rows, err := tables.EnvCommits(ctx, o.args[0], o.key, o.env)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, rows)
	}
	t := table{header: []string{"SNAPSHOT", "COMMITTED (UTC)", "KEY", "RUN", "ATTEMPT", "WINDOW", "ROWS"}}
	var times []time.Time
	for _, r := range rows {
		times = append(times, time.UnixMilli(r.TimestampMs))
		attempt, added := "-", "-"
		if r.Attempt > 0 {
			attempt = strconv.Itoa(r.Attempt)
		}
		if r.Rows != nil {
			added = strconv.FormatInt(*r.Rows, 10)
		}
		t.add(strconv.FormatInt(r.SnapshotID, 10), stamp(time.UnixMilli(r.TimestampMs), o.out.format),
			r.Key, r.RunID, attempt, orDash(r.Window), added)
	}
	if p, err := controllers.LoadPipeline(o.args[0]); err == nil {
		loc, _ := controllers.PipelineLocation(p)
		t.withZone(1, loc, times, o.out.format)
	}
	return t.write(s.Out, o.out.format, "snapshot_id", "committed_utc", "idempotency_key", "run_id", "attempt", "logical_window", "rows_added")
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
  ldp commits orders.json --key b1ceeb08
  ldp commits orders.json -o csv > commits.csv
  ldp commits orders.json --env dev`,
		Args: exactArgs(1, "name the Pipeline spec whose table to list, for example: ldp commits orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.key, "key", "", "only the publish whose key starts with this")
	addEnvFlag(cmd, &o.env, "list the publishes on this environment's branch (main's up to the fork, then the environment's) instead of main")
	addOutput(cmd, &o.out, true)
	return cmd
}
