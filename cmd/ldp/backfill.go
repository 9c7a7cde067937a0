package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/initgc"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// backfillOptions are the flags and arguments of the command newBackfillCmd builds.
type backfillOptions struct {
	args []string
	bo   controllers.BackfillOptions
	now  string
	out  output
	// cluster: the argument is a Pipeline or Workflow object of a cluster, in namespace.
	cluster   bool
	namespace string
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *backfillOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	if err := validEnv(cmd, o.bo.Env); err != nil {
		return err
	}
	if o.cluster && o.bo.Env != "" {
		return usageError(cmd, "--env with --cluster: a cluster object publishes into the environment its spec names (metadata.env)")
	}
	return o.out.validate(cmd)
}

func (o *backfillOptions) Run(ctx context.Context, s *streams) error {
	if o.bo.From == "" {
		return usageError(o.cmd, "--from is required: the first window of the range, such as 2026-08-01")
	}
	if o.cluster {
		return requestClusterBackfill(ctx, s, o)
	}
	if o.bo.Batch < 1 || o.bo.Parallel < 0 {
		return usageError(o.cmd, "--batch must be at least 1 and --parallel at least 0 (0: the number of CPUs)")
	}
	t, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	o.bo.Now = t
	wf, err := controllers.LoadWorkflow(o.args[0])
	if err != nil {
		return err
	}
	runner := runnerFor(s)
	verbose, quiet := chatter(o.cmd)
	runner.Log = &logLines{w: s.Err, verbose: verbose}
	// Only a person at a terminal is asked; the answer is read from the command's input.
	o.bo.Terminal = isTerminal(s.Out) && inputIsTerminal(s.In)
	o.bo.Confirm = func(sum controllers.BackfillSummary) bool { return confirmRange(s, sum) }
	switch {
	case quiet:
		runner.Log = io.Discard
	case o.out.JSON() || o.bo.DryRun:
	case isTerminal(s.Out):
		// The bar, and above it a line for each window that did not publish, saying why.
		bar := newProgress(s.Out)
		if isTerminal(s.Err) {
			bar.checks = verbose
			runner.Log = bar
		}
		o.bo.OnWindow = func(done, total int, w controllers.BackfillWindow) {
			if why := windowTrouble(w); why != "" {
				bar.above(fmt.Sprintf("%s/%s  %s: %s%s", w.Start, w.End, w.Outcome, why, inZone(wf.Window.Location, w.Start, w.End)))
			}
			bar.update(done, total, string(w.Outcome))
		}
	default:
		o.bo.OnWindow = func(done, total int, w controllers.BackfillWindow) {
			line := fmt.Sprintf("[%d/%d] %s/%s  %s -> %s", done, total, w.Start, w.End, w.State, w.Outcome)
			if why := windowTrouble(w); why != "" {
				line += ": " + why
			}
			line += inZone(wf.Window.Location, w.Start, w.End)
			fmt.Fprintln(s.Out, line)
		}
	}
	// A backfill's heap is mostly each window's short-lived garbage (Avro, JSON, Arrow
	// buffers) over a small live set: collecting at 200% instead of 100% halves the
	// collections for some more memory (measured in the commit that set it).
	defer initgc.Tune(200)()
	res, err := runner.Backfill(ctx, wf, o.bo)
	if errors.Is(err, controllers.ErrDeclined) {
		fmt.Fprintln(s.Err, "nothing ran: check --from and --to (ldp backfill --dry-run lists the windows)")
		return ldperr.Silent(ldperr.ExitFailed)
	}
	if err != nil {
		return err
	}
	switch {
	case o.out.JSON():
		if err := writeJSON(s.Out, withExitCode{res, outcomeCode(res.Outcome)}); err != nil {
			return err
		}
	case quiet:
	case o.bo.DryRun:
		for _, w := range res.Windows {
			fmt.Fprintf(s.Out, "%s/%s  %-9s  %s%s\n", w.Start, w.End, w.State, strings.Join(w.Keys, " "), inZone(wf.Window.Location, w.Start, w.End))
			if len(w.Waiting) > 0 {
				fmt.Fprintf(s.Out, "  %s\n", controllers.WaitMessages(w.Waiting))
			}
		}
	default:
		env := ""
		if res.Env != "" {
			env = " in environment " + res.Env
		}
		fmt.Fprintf(s.Out, "%s%s: %d %s: %s\n", res.Workflow, env, len(res.Windows), plural(len(res.Windows), "window", "windows"), counts(res.Counts))
	}
	return outcomeExit(res.Outcome)
}

func newBackfillCmd(s *streams) *cobra.Command {
	o := &backfillOptions{}
	cmd := &cobra.Command{
		Use:   "backfill FILE --from START [--to END]",
		Short: "Run a workflow (or a windowed dataset config) for every window of a range",
		Long: `Lay windows of the workflow's size end to end from START to END (END excluded; by default
the end of the last complete window) in its time zone, so a day runs between local
midnights. START and END are dates or ISO-8601 times, read in the workflow's time zone when
they have no offset, or local midnights counted back from now (today, yesterday, "7 days
ago", "2 weeks ago"); each must start a window.

Before anything runs, everything is checked, the keys on main are read with one walk of each
table, and the ledger is read; nothing is created. A published window is skipped without
being read; every other window runs (a failed or blocked one with the tasks it finished
skipped by their keys). Running the same range again does only the work that is left.

--replace runs every window under its replace key in overwrite mode, replacing only the
window's rows (every Iceberg pipeline needs metadata.window.column); a window replaced under
the same spec is skipped, one replaced under an older spec is replaced again.

Windows run --parallel at a time, and the appends of ready windows are published --batch to a
catalog commit, each still its own snapshot with its own key (--batch 1 publishes each window
in a commit of its own, one window after another, as --stop-on-failure does).

On a terminal, a range that would run more than 100 windows shows how many, and how many of
them have no source file, and runs only when answered y (--yes skips the question; without a
terminal nothing is asked).

Exit status: 0 no window failed or was blocked, 3 a data gate is the only problem, 1 otherwise.`,
		Example: `  ldp backfill workflow.json --from 2026-08-01 --to 2026-09-01
  ldp backfill orders.json --from 2026-08-01 --dry-run
  ldp backfill orders.json --from "14 days ago"
  ldp backfill --cluster pipeline/daily-orders -n shop --from 2026-08-01 --to 2026-09-01
  ldp backfill orders.json --from 2026-08-01 --to 2026-08-08 --replace --json
  ldp backfill orders.json --from 2026-08-01 --to 2026-08-06 --env dev`,
		Args: exactArgs(1, "name the workflow or dataset config, for example: ldp backfill orders.json --from 2026-08-01"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.bo.From, "from", "", "the first window: a date, an ISO-8601 time, or a day counted back (yesterday, \"7 days ago\")")
	cmd.Flags().StringVar(&o.bo.To, "to", "", "the end of the range, excluded (default: the end of the last complete window)")
	cmd.Flags().BoolVar(&o.cluster, "cluster", false, "FILE is a Pipeline or Workflow object of a Kubernetes cluster (pipeline/NAME): ldp controller runs the range as Jobs")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "with --cluster, the object's namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&o.now, "now", "", "the time the default end is counted from, ISO-8601")
	cmd.Flags().IntVar(&o.bo.MaxWindows, "max-windows", 1000, "refuse a range of more windows than this")
	cmd.Flags().BoolVar(&o.bo.Replace, "replace", false, "replace every window's rows under its replace key")
	cmd.Flags().BoolVar(&o.bo.DryRun, "dry-run", false, "print each window with its keys and state, and run nothing")
	cmd.Flags().BoolVarP(&o.bo.Yes, "yes", "y", false, fmt.Sprintf("run a range of more than %d windows without asking first (only a terminal asks)", controllers.ConfirmAbove))
	cmd.Flags().BoolVar(&o.bo.StopOnFailure, "stop-on-failure", false, "stop at the first window that fails")
	cmd.Flags().IntVar(&o.bo.Batch, "batch", 10, "publish up to this many ready windows in one catalog commit (1: each alone, in order)")
	cmd.Flags().IntVar(&o.bo.Parallel, "parallel", 0, "windows read and checked at once (default: the number of CPUs, at most 8)")
	addEnvFlag(cmd, &o.bo.Env, "run the range in this environment: publish into its branches, one window per commit, main untouched (see ldp env)")
	addOutput(cmd, &o.out, false)
	return cmd
}

func counts[K ~string](m map[K]int) string {
	var keys []K
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// inputIsTerminal reports whether r is a terminal a person can answer on.
func inputIsTerminal(r io.Reader) bool {
	w, ok := r.(io.Writer) // an *os.File is both
	return ok && isTerminal(w)
}

// confirmRange shows the plan's summary of a large range and asks, as terraform apply does:
// only "y" or "yes" runs it.
func confirmRange(s *streams, sum controllers.BackfillSummary) bool {
	fmt.Fprintf(s.Out, "%d %s would run", sum.Run, plural(sum.Run, "window", "windows"))
	if sum.NoSource > 0 {
		fmt.Fprintf(s.Out, ", %d with no source file", sum.NoSource)
	}
	fmt.Fprint(s.Out, ". Run them? (y/N; --yes skips this question) ")
	line, _ := bufio.NewReader(s.In).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// windowTrouble says why a window failed, was held back or was not run; "" for one that
// published or was done already.
func windowTrouble(w controllers.BackfillWindow) string {
	switch w.Outcome {
	case controllers.OutcomeFailed, controllers.OutcomeBlocked:
		if w.Result != nil && w.Result.Reason() != "" {
			return w.Result.Reason()
		}
		return "no reason recorded"
	case controllers.OutcomeNotRun:
		return "an earlier window failed and --stop-on-failure stopped the backfill"
	case controllers.OutcomeWaiting:
		return "skipped (" + controllers.WaitMessages(w.Waiting) + "); backfill the upstream first"
	}
	return ""
}
