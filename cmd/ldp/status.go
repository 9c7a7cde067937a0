package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/report"
)

// statusOptions are ldp status's.
type statusOptions struct {
	paths []string
	out   output
	now   string
	env   string
}

func (o *statusOptions) Validate(cmd *cobra.Command, args []string) error {
	o.paths = args
	if len(o.paths) == 0 {
		o.paths = []string{"."}
	}
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	return o.out.validate(cmd)
}

func (o *statusOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return err
	}
	rep, err := report.StatusIn(ctx, &controllers.Reconciler{Runner: runnerFor(s)}, o.paths, t, o.env)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, rep)
	}
	if o.out.format == outCSV {
		return statusCSV(s, rep)
	}
	for _, inv := range rep.Invalid {
		fmt.Fprintf(s.Out, "%s: not valid\n", displayPath(inv.File))
		for _, p := range inv.Problems {
			fmt.Fprintln(s.Out, "  "+p)
		}
	}
	if rep.Env != "" {
		fmt.Fprintf(s.Out, "environment %s: windows on its branches and its own runs (main's windows before the fork count as done)\n", rep.Env)
	}
	for _, ob := range rep.Objects {
		loc, _ := time.LoadLocation(ob.Timezone)
		fmt.Fprintf(s.Out, "%s (%s): %d %s: %s\n", ob.Name, displayPath(ob.File), ob.Windows.Count, plural(ob.Windows.Count, "window", "windows"), summaryLine(ob.Summary))
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
				marks = append(marks, fmt.Sprintf("%s%s (%s)", m.Start, localTime(loc, m.Start), strings.Join(earlier, ", then ")))
			}
			if len(marks) > 0 {
				runs[len(runs)-1] += "; went wrong before: " + strings.Join(marks, ", ")
			}
			fmt.Fprintf(s.Out, "  %-14s %s\n", t.ID, strings.Join(runs, ", then "))
		}
		if w := ob.Waiting; w != nil {
			start, end, _ := w.Window.Bounds()
			line := fmt.Sprintf("  waiting     %s%s: not finished", w.Window, inZone(loc, start, end))
			if w.Delay != "" {
				line += ", it waits " + w.Delay + " after its end for late rows (metadata.window.delay)"
			}
			line += "; it may run at " + w.ReadyAt + localTime(loc, w.ReadyAt)
			if w.RunsAt != "" {
				line += ", the schedule runs it at " + w.RunsAt + localTime(loc, w.RunsAt)
			}
			fmt.Fprintln(s.Out, line)
		}
		if ob.NextFire != "" {
			fmt.Fprintf(s.Out, "  next fire   %s%s\n", ob.NextFire, inZone(loc, ob.NextFire))
		}
		if ob.End != "" {
			fmt.Fprintf(s.Out, "  ends        %s%s: no window after it is expected\n", ob.End, localTime(loc, ob.End))
		}
		if ob.Backfill != "" {
			fmt.Fprintf(s.Out, "  missed      %d %s: %s\n", len(ob.Missed), plural(len(ob.Missed), "window", "windows"), ob.Backfill)
		}
		for _, h := range ob.Held {
			start, end, _ := h.Window.Bounds()
			fmt.Fprintf(s.Out, "  held        %s%s: %s\n", h.Window, inZone(loc, start, end), h.Message)
		}
		for _, st := range ob.Stale {
			start, end, _ := st.Window.Bounds()
			fmt.Fprintf(s.Out, "  stale       %s%s: %s; ldp apply --stale runs it again\n", st.Window, inZone(loc, start, end), st.Message)
		}
		for _, u := range ob.WaitingUpstream {
			start, end, _ := u.Window.Bounds()
			fmt.Fprintf(s.Out, "  upstream    %s%s: %s\n", u.Window, inZone(loc, start, end), u.Message)
		}
	}
	if len(rep.Invalid) > 0 {
		return failedExit()
	}
	return nil
}

// statusCSV prints a row per object, task and state with its count of windows, states in
// the order the row first reaches them; an invalid spec goes to stderr, and exits 1.
func statusCSV(s *streams, rep *report.StatusReport) error {
	t := table{header: []string{"object", "file", "kind", "task", "state", "windows"}}
	for _, ob := range rep.Objects {
		for _, task := range ob.Tasks {
			var order []string
			n := map[string]int{}
			for _, c := range task.Cells {
				st := string(c.State)
				if _, ok := n[st]; !ok {
					order = append(order, st)
				}
				n[st] += c.Count
			}
			for _, st := range order {
				t.add(ob.Name, displayPath(ob.File), ob.Kind, task.ID, st, strconv.Itoa(n[st]))
			}
		}
	}
	if err := t.write(s.Out, outCSV); err != nil {
		return err
	}
	for _, inv := range rep.Invalid {
		fmt.Fprintf(s.Err, "%s: not valid\n", displayPath(inv.File))
		for _, p := range inv.Problems {
			fmt.Fprintln(s.Err, "  "+p)
		}
	}
	if len(rep.Invalid) > 0 {
		return failedExit()
	}
	return nil
}

// localTime is " (2026-10-25 02:00 CEST)", instant s in loc, or "" in UTC.
func localTime(loc *time.Location, s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || loc == nil || loc.String() == "UTC" {
		return ""
	}
	return " (" + t.In(loc).Format("2006-01-02 15:04 MST") + ")"
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
		Use:   "status [FILE|DIR...]",
		Short: "Show every object's windows by task and state: what the status page (ldp ui) shows",
		Long: `For each workflow and scheduled dataset config, a row per task (in run order) and a column
per window: every fire's since its start, or since the first window its ledger holds.
Each cell is published, missing, unfinished, blocked (a data gate), failed, retrying (a retry
is due), upstream_failed, skipped or waiting (not finished: it has not ended, or waits its
metadata.window.delay), as ldp diff's plan and the ledger say. The window not finished yet
is shown apart, with when it may run. Times are in UTC and in the spec's zone. -o json prints
the report ldp ui's page is drawn from (/api/status): rows run-length encoded by state.
-o csv prints a row per object, task and state with its count of windows. With no path,
the current folder.

With --env NAME the report is environment NAME's: a cell is published when its key is on
NAME's branch (main's windows before the fork included), and the runs counted are NAME's own.

Exit status: 0, or 1 when a spec is not valid.`,
		Example: `  ldp status
  ldp status config/
  ldp status config/ -o csv
  ldp status config/ -o json | jq '.objects[] | {name, summary}'
  ldp status config/ --env dev`,
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, true)
	cmd.Flags().StringVar(&o.now, "now", "", "report as if it were this time, ISO-8601 (default: now)")
	addEnvFlag(cmd, &o.env, "report environment NAME: the windows on its branches and its own runs (see ldp env)")
	return cmd
}
