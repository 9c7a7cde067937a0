package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// listOptions are the flags and arguments of the command newListCmd builds.
type listOptions struct {
	args       []string
	now        string
	maxWindows int
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *listOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return nil
}

func (o *listOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	found, err := controllers.DiscoverScheduled(o.args[0])
	if err != nil {
		return err
	}
	bad := false
	for _, sc := range found {
		if len(sc.Problems) > 0 {
			bad = true
			fmt.Fprintf(s.Out, "%s: not valid\n", displayPath(sc.Path))
			for _, p := range sc.Problems {
				p.File = displayPath(p.File)
				fmt.Fprintln(s.Out, "  "+p.String())
			}
			continue
		}
		if err := listOne(o.cmd, s, sc, t, o.maxWindows); err != nil {
			bad = true
			fmt.Fprintf(s.Out, "  error: %v\n", err)
		}
	}
	if len(found) == 0 {
		fmt.Fprintf(s.Out, "nothing is scheduled under %s\n", displayPath(o.args[0]))
	}
	if bad {
		return failedExit()
	}
	return nil
}

func newListCmd(s *streams) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list DIR",
		Short: "Show what is scheduled under DIR, what is due and what was missed",
		Long: `For each scheduled file: its kind, schedule, time zone, window size and catch-up setting,
the next fire (in UTC and in the spec's time zone, each said), the last window the ledger holds and
how its last run ended, the windows that are due, and the windows that were missed (not done,
and not run by the next tick because catch-up is off), with the command that fills them.
It takes no lock and writes nothing.`,
		Example: `  ldp schedule list config/`,
		Args:    exactArgs(1, "name the folder of specs, for example: ldp schedule list config/"),
		RunE:    runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "list as if it were this time, ISO-8601 (default: now)")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "name at most this many missed windows")
	return cmd
}

func listOne(cmd *cobra.Command, s *streams, sc controllers.Scheduled, t time.Time, maxWindows int) error {
	wf := sc.WF
	st, err := controllers.StatusOf(cmd.Context(), sc, t, maxWindows)
	if err != nil {
		return err
	}
	size := st.Size
	if size == "" {
		size = "(interval between fires)"
	}
	fmt.Fprintf(s.Out, "%s: %s, schedule %q in %s, window %s, catchup %t\n", displayPath(sc.Path), st.Kind, wf.Schedule, wf.Window.Location, size, sc.Catchup)
	if !st.NextFire.IsZero() {
		fmt.Fprintf(s.Out, "  next fire   %s UTC (%s in the spec's zone, %s)\n", st.NextFire.UTC().Format(time.RFC3339), st.NextFire.In(wf.Window.Location).Format("2006-01-02 15:04 MST"), wf.Window.Location)
	}
	if st.LastWindow != "" {
		fmt.Fprintf(s.Out, "  last run    %s %s\n", st.LastWindow, st.LastEnded)
	} else {
		fmt.Fprintln(s.Out, "  last run    none in the ledger")
	}
	if len(st.Due) == 0 {
		fmt.Fprintln(s.Out, "  due         none: every due window is done")
	} else {
		var due []string
		for _, p := range st.Due {
			due = append(due, p.Start+"/"+p.End)
		}
		fmt.Fprintf(s.Out, "  due         %s\n", strings.Join(due, ", "))
	}
	if sc.Catchup {
		return nil
	}
	missed := st.Missed
	if len(missed) == 0 {
		if !sc.Start.IsZero() || st.LastWindow != "" {
			fmt.Fprintln(s.Out, "  missed      none")
		}
		return nil
	}
	fmt.Fprintf(s.Out, "  missed      %d %s, oldest first: %s\n", len(missed), plural(len(missed), "window", "windows"), missed[0].Start+"/"+missed[0].End)
	if wf.Size() != "" {
		fmt.Fprintf(s.Out, "  fill with   ldp backfill %s --from %s --to %s\n", displayPath(sc.Path), missed[0].Start, missed[len(missed)-1].End)
		return nil
	}
	for _, m := range missed {
		fmt.Fprintf(s.Out, "  fill with   ldp workflow run %s --window %s/%s\n", displayPath(sc.Path), m.Start, m.End)
	}
	return nil
}
