package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

type runsOptions struct {
	target   string
	limit    int
	run      string
	attempts bool
	json     bool
	s        *streams
}

func newRunsCmd(s *streams) *cobra.Command {
	o := &runsOptions{s: s}
	cmd := &cobra.Command{
		Use:   "runs SPEC|WORKFLOW|DIR|LEDGER",
		Short: "Show the history of runs from the ledger (.ldp/events.jsonl)",
		Long: `Show one line per run, newest first: its id and attempt, the pipeline, the window, how
it ended, when it started, how long it took, the rows it read and wrote, its checks and
the snapshot it published. Only the last attempt of each run is shown unless --attempts.
--run ID shows every event of one run.

The ledger is .ldp/events.jsonl in the folder of the spec or workflow file.`,
		Example: `  ldp runs config/orders.json
  ldp runs config/orders.json --attempts --limit 20
  ldp runs config/orders.json --run 01a2c3
  ldp runs config/.ldp/events.jsonl --json`,
		Args: exactArgs(1, "name a spec, a workflow, a folder or a ledger file, for example: ldp runs orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().IntVar(&o.limit, "limit", 50, "show at most this many runs (0 for all)")
	cmd.Flags().StringVar(&o.run, "run", "", "show every event of the run whose id starts with this")
	cmd.Flags().BoolVar(&o.attempts, "attempts", false, "show every attempt, not only the last of each run")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return cmd
}

func (o *runsOptions) Validate(_ *cobra.Command, args []string) error {
	o.target = args[0]
	return nil
}

func (o *runsOptions) Run(_ context.Context, s *streams) error {
	o.s = s
	path, err := controllers.LedgerPath(o.target)
	if err != nil {
		return err
	}
	events, warns, err := controllers.ReadLedger(path)
	if err != nil {
		return err
	}
	for _, w := range warns {
		fmt.Fprintln(o.s.Err, "warning: "+w)
	}
	if o.run != "" {
		return o.events(events)
	}
	runs := controllers.Runs(events, o.attempts)
	if o.limit > 0 && len(runs) > o.limit {
		runs = runs[:o.limit]
	}
	if o.json {
		if runs == nil {
			runs = []controllers.RunSummary{}
		}
		return writeJSON(o.s.Out, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(o.s.Out, "no runs in %s\n", displayPath(path))
		return nil
	}
	tw := tabwriter.NewWriter(o.s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tATTEMPT\tPIPELINE\tWINDOW\tSTATUS\tSTARTED (UTC)\tDURATION\tREAD\tWRITTEN\tCHECKS\tSNAPSHOT")
	for _, r := range runs {
		checks := "-"
		if r.ChecksPassed+r.ChecksFailed > 0 {
			checks = fmt.Sprintf("%d/%d", r.ChecksPassed, r.ChecksPassed+r.ChecksFailed)
		}
		snap := "-"
		if r.SnapshotID != 0 {
			snap = fmt.Sprint(r.SnapshotID)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.2fs\t%d\t%d\t%s\t%s\n", r.RunID, r.Attempt, r.Pipeline, orDash(r.Window), r.Status,
			r.Started.UTC().Format("2006-01-02 15:04:05"), r.DurationS, r.RowsRead, r.RowsWritten, checks, snap)
	}
	return tw.Flush()
}

// events prints every event of one run.
func (o *runsOptions) events(events []controllers.LedgerEvent) error {
	var mine []controllers.LedgerEvent
	for _, e := range events {
		if strings.HasPrefix(e.RunID, o.run) {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 {
		return fmt.Errorf("no run whose id starts with %q in the ledger (ldp runs lists them)", o.run)
	}
	if o.json {
		return writeJSON(o.s.Out, mine)
	}
	for _, e := range mine {
		b, _ := json.Marshal(e.Payload)
		fmt.Fprintf(o.s.Out, "%s  %s  attempt %d  #%d  %s  %s\n", e.TS.UTC().Format("2006-01-02 15:04:05.000"), e.RunID, e.Attempt, e.Seq, e.Type, b)
	}
	return nil
}
