package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

type runsOptions struct {
	target   string
	limit    int
	run      string
	attempts bool
	out      output
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

The ledger is .ldp/events.jsonl in the folder of the spec or workflow file; it holds the
runs of every spec in that folder. A spec shows its own runs, a workflow its tasks', a
folder or a ledger file all of them.`,
		Example: `  ldp runs config/orders.json
  ldp runs config/orders.json --attempts --limit 20
  ldp runs config/orders.json --run 01a2c3
  ldp runs config/.ldp/events.jsonl -o json
  ldp runs config/ -o csv > runs.csv`,
		Args: exactArgs(1, "name a spec, a workflow, a folder or a ledger file, for example: ldp runs orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().IntVar(&o.limit, "limit", 50, "show at most this many runs (0 for all)")
	cmd.Flags().StringVar(&o.run, "run", "", "show every event of the run whose id starts with this")
	cmd.Flags().BoolVar(&o.attempts, "attempts", false, "show every attempt, not only the last of each run")
	addOutput(cmd, &o.out, true)
	cmd.AddCommand(newRunsForgetCmd(s))
	return cmd
}

func (o *runsOptions) Validate(cmd *cobra.Command, args []string) error {
	o.target = args[0]
	return o.out.validate(cmd)
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
	names, loc, err := controllers.RunsOf(o.target)
	if err != nil {
		fmt.Fprintf(o.s.Err, "warning: showing every run in %s: %v\n", displayPath(path), err)
	} else if names != nil {
		runs = slices.DeleteFunc(runs, func(r v1.RunSummary) bool { return !slices.Contains(names, r.Pipeline) })
	}
	if o.limit > 0 && len(runs) > o.limit {
		runs = runs[:o.limit]
	}
	if o.out.JSON() {
		if runs == nil {
			runs = []v1.RunSummary{}
		}
		return writeJSON(o.s.Out, runs)
	}
	if len(runs) == 0 && o.out.format == outText {
		fmt.Fprintf(o.s.Out, "no runs in %s\n", displayPath(path))
		return nil
	}
	t := table{header: []string{"RUN", "ATTEMPT", "PIPELINE", "WINDOW", "STATUS", "STARTED (UTC)", "DURATION", "READ", "WRITTEN", "CHECKS", "SNAPSHOT"}}
	var started []time.Time
	for _, r := range runs {
		started = append(started, r.Started)
		checks := "-"
		if r.ChecksPassed+r.ChecksFailed > 0 {
			checks = fmt.Sprintf("%d/%d", r.ChecksPassed, r.ChecksPassed+r.ChecksFailed)
		}
		snap := "-"
		if r.SnapshotID != 0 {
			snap = fmt.Sprint(r.SnapshotID)
		}
		duration := fmt.Sprintf("%.2fs", r.DurationS)
		if o.out.format == outCSV {
			duration = strconv.FormatFloat(r.DurationS, 'f', 3, 64)
		}
		t.add(r.RunID, strconv.Itoa(r.Attempt), r.Pipeline, orDash(r.Window), r.Status, stamp(r.Started, o.out.format),
			duration, strconv.FormatInt(r.RowsRead, 10), strconv.FormatInt(r.RowsWritten, 10), checks, snap)
	}
	t.withZone(5, loc, started, o.out.format)
	return t.write(o.s.Out, o.out.format, "run_id", "attempt", "pipeline", "logical_window", "status", "started_utc", "duration_s", "rows_read", "rows_written", "checks", "snapshot_id")
}

// events prints every event of one run.
func (o *runsOptions) events(events []v1.LedgerEvent) error {
	var mine []v1.LedgerEvent
	for _, e := range events {
		if strings.HasPrefix(e.RunID, o.run) {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 {
		return fmt.Errorf("no run whose id starts with %q in the ledger (ldp runs lists them)", o.run)
	}
	if o.out.JSON() {
		for i := range mine {
			mine[i].Payload = stringIDs(mine[i].Payload).(map[string]any)
		}
		return writeJSON(o.s.Out, mine)
	}
	for _, e := range mine {
		b, _ := json.Marshal(e.Payload)
		fmt.Fprintf(o.s.Out, "%s  %s  attempt %d  #%d  %s  %s\n", e.TS.UTC().Format("2006-01-02 15:04:05.000"), e.RunID, e.Attempt, e.Seq, e.Type, b)
	}
	return nil
}

// stringIDs turns the snapshot ids of an event's payload, numbers in the ledger file, into the
// strings every JSON ldp prints has them as: a 64-bit id is past what jq and JavaScript hold.
func stringIDs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if n, ok := x.(json.Number); ok && (k == "snapshot_id" || strings.HasSuffix(k, "_snapshot_id") || k == "parent_id") {
				t[k] = n.String()
				continue
			}
			t[k] = stringIDs(x)
		}
	case []any:
		for i, x := range t {
			t[i] = stringIDs(x)
		}
	}
	return v
}
