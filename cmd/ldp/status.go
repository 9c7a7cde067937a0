package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// statusOptions are ldp status's.
type statusOptions struct {
	paths []string
	out   output
	now   string
}

func (o *statusOptions) Validate(cmd *cobra.Command, args []string) error {
	o.paths = args
	return o.out.validate(cmd)
}

func (o *statusOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return err
	}
	rep, err := (&controllers.Reconciler{Runner: runnerFor(s)}).Status(ctx, o.paths, t)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, rep)
	}
	for _, inv := range rep.Invalid {
		fmt.Fprintf(s.Out, "%s: not valid\n", displayPath(inv.File))
		for _, p := range inv.Problems {
			fmt.Fprintln(s.Out, "  "+p)
		}
	}
	for _, ob := range rep.Objects {
		fmt.Fprintf(s.Out, "%s (%s): %d windows: %s\n", ob.Name, displayPath(ob.File), ob.Windows.Count, summaryLine(ob.Summary))
		if ob.Error != "" {
			fmt.Fprintf(s.Out, "  error: %s\n", ob.Error)
		}
		for _, t := range ob.Tasks {
			var runs []string
			for _, c := range t.Cells {
				runs = append(runs, fmt.Sprintf("%d %s", c.Count, c.State))
			}
			var marks []string
			for _, m := range t.Marks {
				var earlier []string
				for _, st := range m.Earlier {
					earlier = append(earlier, string(st))
				}
				marks = append(marks, fmt.Sprintf("%s (%s)", m.Start, strings.Join(earlier, ", then ")))
			}
			if len(marks) > 0 {
				runs[len(runs)-1] += "; went wrong before: " + strings.Join(marks, ", ")
			}
			fmt.Fprintf(s.Out, "  %-14s %s\n", t.ID, strings.Join(runs, ", then "))
		}
		if ob.NextFire != "" {
			fmt.Fprintf(s.Out, "  next fire   %s\n", ob.NextFire)
		}
		if ob.Backfill != "" {
			fmt.Fprintf(s.Out, "  missed      %d windows: %s\n", len(ob.Missed), ob.Backfill)
		}
	}
	if len(rep.Invalid) > 0 {
		return failedExit()
	}
	return nil
}

// summaryLine writes window counts by state, sorted by state.
func summaryLine(m map[string]int) string {
	if len(m) == 0 {
		return "none yet"
	}
	return counts(m)
}

func newStatusCmd(s *streams) *cobra.Command {
	o := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status FILE|DIR...",
		Short: "Show every object's windows by task and state: what the status page (ldp ui) shows",
		Long: `For each workflow and scheduled dataset config, a row per task (in run order) and a column
per window: every fire's since its start, or since the first window its ledger holds.
Each cell is published, missing, unfinished, blocked (a data gate), failed, retrying (a retry
is due), upstream_failed or skipped, as ldp diff's plan and the ledger say. -o json prints
the report ldp ui's page is drawn from (/api/status): rows run-length encoded by state.

Exit status: 0, or 1 when a spec is not valid.`,
		Example: `  ldp status config/
  ldp status config/ -o json | jq '.objects[] | {name, summary}'`,
		Args: cobra.MinimumNArgs(1),
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, false)
	cmd.Flags().StringVar(&o.now, "now", "", "report as if it were this time, ISO-8601 (default: now)")
	return cmd
}
