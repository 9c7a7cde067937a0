package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// tickOptions are the flags and arguments of the command newTickCmd builds.
type tickOptions struct {
	args       []string
	now        string
	maxWindows int
	leases     leaseFlags
	out        output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *tickOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
}

func (o *tickOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	r := runnerFor(s)
	r.Leases = o.leases.options()
	res, err := r.Tick(ctx, o.args[0], t, o.maxWindows)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		if err := writeJSON(s.Out, withExitCode{res, outcomeCode(res.Outcome)}); err != nil {
			return err
		}
	}
	if res.Locked != "" {
		fmt.Fprintf(s.Err, "another tick holds %s; nothing to do\n", displayPath(res.Locked))
		return nil
	}
	for _, f := range res.Files {
		for _, p := range f.Problems {
			p.File = displayPath(p.File)
			fmt.Fprintln(s.Err, p.String())
		}
		if f.Error != "" {
			fmt.Fprintf(s.Err, "ldp: %s: %s\n", displayPath(f.File), f.Error)
		}
		if o.out.JSON() {
			continue
		}
		for _, r := range f.Ran {
			printResult(s, r)
		}
		if f.Waiting > 0 {
			fmt.Fprintf(s.Out, "%s: %d more %s wait for the next tick\n", displayPath(f.File), f.Waiting, plural(f.Waiting, "window", "windows"))
		}
	}
	return outcomeExit(res.Outcome)
}

func newTickCmd(s *streams) *cobra.Command {
	o := &tickOptions{}
	cmd := &cobra.Command{
		Use:   "tick DIR",
		Short: "Run every due window that is not done, for every scheduled file under DIR",
		Long: `For each scheduled file under DIR (a workflow, or a dataset config with a schedule or a
when such as daily), run the windows that are due at now and not done: the latest fire's
window, or with metadata.catchup every fire's window since metadata.start, oldest first, at
most --max-windows per file (the rest wait for the next tick). A window whose last run
failed, was blocked or never finished runs as the next attempt of that run.

A tick holds DIR/.ldp/locks/schedule.lock without waiting: a tick that finds it held prints
which lock and exits 0. An invalid scheduled file is reported and the others still run.

Exit status: 0, 3 when a data gate is the only problem, 1 when a window failed, a file could
not be ticked, or a scheduled file is not valid.`,
		Example: `  ldp schedule tick config/
  ldp schedule tick config/ --now 2026-08-05T02:05:00Z`,
		Args: exactArgs(1, "name the folder of specs, for example: ldp schedule tick config/"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "tick as if it were this time, ISO-8601 (default: now)")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "run at most this many windows per file")
	addOutput(cmd, &o.out, false)
	o.leases.flags(cmd)
	return cmd
}
