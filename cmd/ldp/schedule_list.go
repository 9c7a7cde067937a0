package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/shell"
)

// listOptions are the flags and arguments of the command newListCmd builds.
type listOptions struct {
	args       []string
	now        string
	maxWindows int
	out        output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *listOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
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
	entries := []scheduleEntry{}
	bad := false
	for _, sc := range found {
		e := listOne(o.cmd, sc, t, o.maxWindows)
		bad = bad || e.Error != "" || len(e.Problems) > 0
		entries = append(entries, e)
	}
	switch o.out.format {
	case outJSON:
		if err := writeJSON(s.Out, entries); err != nil {
			return err
		}
	case outCSV:
		t := table{header: []string{"file", "kind", "schedule", "timezone", "window_size", "catchup", "next_fire_utc", "next_fire_local", "last_window", "last_ended", "due", "missed", "fill", "problems"}}
		for _, e := range entries {
			t.add(e.File, e.Kind, e.Schedule, e.Timezone, e.WindowSize, strconv.FormatBool(e.Catchup), e.NextFireUTC, e.NextFireLocal,
				e.LastWindow, e.LastEnded, strings.Join(e.Due, " "), strconv.Itoa(len(e.Missed)), strings.Join(e.Fill, "; "), strings.Join(slices.DeleteFunc(append(slices.Clone(e.Problems), e.Error), func(p string) bool { return p == "" }), "; "))
		}
		if err := t.write(s.Out, outCSV); err != nil {
			return err
		}
	default:
		for _, e := range entries {
			printSchedule(s.Out, e)
		}
		if len(found) == 0 {
			fmt.Fprintf(s.Out, "nothing is scheduled under %s\n", displayPath(o.args[0]))
		}
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
		Example: `  ldp schedule list config/
  ldp schedule list config/ -o json | jq -r '.[] | select(.missed | length > 0) | .fill[]'`,
		Args: exactArgs(1, "name the folder of specs, for example: ldp schedule list config/"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "list as if it were this time, ISO-8601 (default: now)")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "name at most this many missed windows")
	addOutput(cmd, &o.out, true)
	return cmd
}

// scheduleEntry is one scheduled file as ldp schedule list shows it; times are RFC 3339, the
// local one with the offset of the spec's zone.
type scheduleEntry struct {
	File          string   `json:"file"`
	Kind          string   `json:"kind,omitempty"`
	Schedule      string   `json:"schedule,omitempty"`
	Timezone      string   `json:"timezone,omitempty"`
	WindowSize    string   `json:"window_size,omitempty"`
	Catchup       bool     `json:"catchup"`
	NextFireUTC   string   `json:"next_fire_utc,omitempty"`
	NextFireLocal string   `json:"next_fire_local,omitempty"`
	LastWindow    string   `json:"last_window,omitempty"`
	LastEnded     string   `json:"last_ended,omitempty"`
	Due           []string `json:"due"`
	Missed        []string `json:"missed"`
	// Fill are the commands that fill the missed windows.
	Fill     []string `json:"fill,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Error    string   `json:"error,omitempty"`
	nextFire time.Time
	loc      *time.Location
	// countsMissed says a missed "none" is worth printing: there is a start or a ledger to
	// count from.
	countsMissed bool
}

// listOne is what ldp schedule list says of one scheduled file.
func listOne(cmd *cobra.Command, sc controllers.Scheduled, t time.Time, maxWindows int) scheduleEntry {
	e := scheduleEntry{File: displayPath(sc.Path), Due: []string{}, Missed: []string{}}
	if len(sc.Problems) > 0 {
		for _, p := range sc.Problems {
			p.File = displayPath(p.File)
			e.Problems = append(e.Problems, p.String())
		}
		return e
	}
	wf := sc.WF
	e.Schedule, e.Timezone, e.Catchup = wf.Schedule, wf.Window.Location.String(), sc.Catchup
	st, err := controllers.StatusOf(cmd.Context(), sc, t, maxWindows)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.Kind, e.WindowSize = st.Kind, st.Size
	if !st.NextFire.IsZero() {
		e.NextFireUTC = st.NextFire.UTC().Format(time.RFC3339)
		e.NextFireLocal = st.NextFire.In(wf.Window.Location).Format(time.RFC3339)
		e.nextFire, e.loc = st.NextFire, wf.Window.Location
	}
	e.LastWindow, e.LastEnded = st.LastWindow.String(), st.LastEnded
	for _, p := range st.Due {
		e.Due = append(e.Due, p.Key().String())
	}
	if sc.Catchup {
		return e
	}
	e.countsMissed = !sc.Start.IsZero() || st.LastWindow != ""
	for _, m := range st.Missed {
		e.Missed = append(e.Missed, m.Key().String())
	}
	switch missed := st.Missed; {
	case len(missed) == 0:
	case wf.Size() != "":
		e.Fill = []string{controllers.BackfillCommand(e.File, missed[0].Start, missed[len(missed)-1].End)}
	default:
		for _, m := range missed {
			e.Fill = append(e.Fill, shell.Command("ldp", "workflow", "run", e.File, "--window", m.Key().String()))
		}
	}
	return e
}

// printSchedule writes one entry for people.
func printSchedule(w io.Writer, e scheduleEntry) {
	if len(e.Problems) > 0 {
		fmt.Fprintf(w, "%s: not valid\n", e.File)
		for _, p := range e.Problems {
			fmt.Fprintln(w, "  "+p)
		}
		return
	}
	if e.Error != "" {
		fmt.Fprintf(w, "%s\n  error: %s\n", e.File, e.Error)
		return
	}
	size := e.WindowSize
	if size == "" {
		size = "(interval between fires)"
	}
	fmt.Fprintf(w, "%s: %s, schedule %q in %s, window %s, catchup %t\n", e.File, e.Kind, e.Schedule, e.Timezone, size, e.Catchup)
	if e.NextFireUTC != "" {
		fmt.Fprintf(w, "  next fire   %s UTC (%s in the spec's zone, %s)\n", e.NextFireUTC, e.nextFire.In(e.loc).Format("2006-01-02 15:04 MST"), e.Timezone)
	}
	if e.LastWindow != "" {
		fmt.Fprintf(w, "  last run    %s %s\n", e.LastWindow, e.LastEnded)
	} else {
		fmt.Fprintln(w, "  last run    none in the ledger")
	}
	if len(e.Due) == 0 {
		fmt.Fprintln(w, "  due         none: every due window is done")
	} else {
		fmt.Fprintf(w, "  due         %s\n", strings.Join(e.Due, ", "))
	}
	if e.Catchup {
		return
	}
	if len(e.Missed) == 0 {
		if e.countsMissed {
			fmt.Fprintln(w, "  missed      none")
		}
		return
	}
	fmt.Fprintf(w, "  missed      %d %s, oldest first: %s\n", len(e.Missed), plural(len(e.Missed), "window", "windows"), e.Missed[0])
	for _, f := range e.Fill {
		fmt.Fprintf(w, "  fill with   %s\n", f)
	}
}
