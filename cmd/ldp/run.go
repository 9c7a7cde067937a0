package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

type runOptions struct {
	spec    string
	mode    string
	window  string
	runID   string
	attempt int
	key     string
	env     string
	out     output
	// lockTimeout bounds the wait for a table's lock.
	lockTimeout time.Duration
	// p and w are the spec and the window, once validated.
	p *v1.Pipeline
	w v1.LogicalWindow
	s *streams
}

func newRunCmd(s *streams) *cobra.Command {
	o := &runOptions{s: s}
	cmd := &cobra.Command{
		Use:   "run SPEC",
		Short: "Load a Pipeline's source into its target, checked by its quality rules",
		Long: `Run a Pipeline once: read the source (CSV, Parquet or JSON) with DuckDB, apply
metadata.transform.sql, run the quality checks, and write to the target only if they pass.
An Iceberg table is created on the first write, with the spec's partitioning.

Each check prints one line on stderr. A check that fails with on_failure "fail" holds the
whole batch back: nothing is written, and ldp exits with 3.

With --window (or --run-id), an Iceberg target is published exactly once: the run's key
(from the pipeline, the table and the window) goes into the snapshot it publishes, and a run
whose key is already on main is skipped_duplicate without reading its source. With --env
NAME the run publishes into environment NAME's branch instead (see ldp env), exactly once by
the same key, and main is not touched. The window
is START/END (ISO-8601; no offset means the spec's time zone) or yesterday, last-week or
last-month. A retry keeps --run-id and raises --attempt, which fences older attempts.

Exit status: 0 published or skipped, 1 error, 3 held back by a data gate.`,
		Example: `  ldp run config/samples/nyc_taxi.json
  ldp run orders.yaml --mode overwrite
  ldp run orders.yaml --window 2026-08-01/2026-08-02
  ldp run orders.yaml --window yesterday --run-id airflow:orders:2026-08-01 --attempt 2
  ldp run orders.yaml --window 2026-08-02/2026-08-03 --idempotency-key orders-2026-08-02-v2
  ldp run orders.yaml --window 2026-08-01/2026-08-02 --env dev
  ldp run orders.yaml --json | jq .rows_written`,
		Args: exactArgs(1, "name the Pipeline spec to run, for example: ldp run orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.mode, "mode", "", "write mode, instead of the spec's: append, overwrite or upsert")
	cmd.Flags().StringVar(&o.window, "window", "", "the logical window: a date (that day in the spec's zone), START/END, yesterday, last-week or last-month")
	cmd.Flags().StringVar(&o.runID, "run-id", "", "the run's id, kept by every retry (default: a new one)")
	cmd.Flags().IntVar(&o.attempt, "attempt", 1, "the attempt of the run; attempt N fences attempts 1..N-1")
	cmd.Flags().StringVar(&o.key, "idempotency-key", "", "publish under this key instead of the window's (to redo a window)")
	addEnvFlag(cmd, &o.env, "publish into this environment's branch of the target instead of main (and read Iceberg inputs from it where it has written them): see ldp env")
	addOutput(cmd, &o.out, false)
	cmd.Flags().DurationVar(&o.lockTimeout, "lock-timeout", v1.DefaultLockTimeout, "how long an overwrite or upsert waits for its table's lock before it gives up (retriable)")
	return cmd
}

func (o *runOptions) Validate(cmd *cobra.Command, args []string) error {
	o.spec = args[0]
	if err := o.out.validate(cmd); err != nil {
		return err
	}
	if o.mode != "" {
		if err := oneOf(cmd, "mode", o.mode, v1.Names(v1.WriteModes)...); err != nil {
			return err
		}
	}
	var err error
	if o.p, err = loadPipeline(o.spec); err != nil {
		return err
	}
	if o.attempt < 1 {
		return usageError(cmd, "--attempt must be 1 or more, got %d", o.attempt)
	}
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	if o.env != "" && o.window == "" && o.runID == "" {
		return usageError(cmd, "--env %s needs --window (or --run-id): an environment is written only by a keyed publish, exactly once", o.env)
	}
	if o.lockTimeout <= 0 {
		return usageError(cmd, "--lock-timeout must be more than 0, got %s", o.lockTimeout)
	}
	if o.window != "" {
		if o.w, err = parseWindow(o.p, o.window); err != nil {
			return usageError(cmd, "--window: %v", err)
		}
	}
	return nil
}

func (o *runOptions) Run(ctx context.Context, s *streams) error {
	o.s = s
	p := o.p
	opts := controllers.PipelineRun{Mode: v1.WriteMode(o.mode), Log: o.s.Err, RunID: o.runID, Attempt: o.attempt, Key: o.key, Hook: faultHook(o.s.Getenv),
		LockTimeout: o.lockTimeout, Getenv: o.s.Getenv, Version: version, Window: o.w, Env: o.env}
	if err := controllers.CheckPipelineFinished(displayPath(o.spec), p, o.w, now()); err != nil {
		return err
	}
	if o.window != "" && o.w.String() != o.window {
		fmt.Fprintf(o.s.Err, "window %s stands for %s\n", o.window, describeWindow(p, o.w))
	}
	for _, warn := range controllers.PipelineWarnings(p, opts.Window) {
		fmt.Fprintln(o.s.Err, "warning: "+warn)
	}
	res, err := controllers.RunPipeline(ctx, p, opts)
	if res != nil {
		if o.out.JSON() {
			if jerr := writeJSON(o.s.Out, res); jerr != nil {
				return jerr
			}
		} else {
			printRunResult(o.s.Out, res)
		}
	}
	return err
}

func printRunResult(w io.Writer, r *v1.PipelineResult) {
	fmt.Fprintf(w, "%s: %s into %s (%s): %s\n", r.Pipeline, r.Route, r.Target, r.Mode, r.Status)
	if r.Env != "" {
		fmt.Fprintf(w, "  environment   %s (main untouched)\n", r.Env)
	}
	if r.Window != "" {
		fmt.Fprintf(w, "  window        %s\n", r.Window)
	}
	if r.Key != "" {
		fmt.Fprintf(w, "  key           %s\n", r.Key)
		fmt.Fprintf(w, "  run           %s attempt %d\n", r.RunID, r.Attempt)
	}
	if r.Status == v1.PipelineSkippedDuplicate {
		fmt.Fprintf(w, "  published in  snapshot %d; nothing read or written\n", r.SnapshotID)
		return
	}
	fmt.Fprintf(w, "  rows read     %d\n", r.RowsRead)
	if r.RowsKept != r.RowsRead {
		fmt.Fprintf(w, "  rows kept     %d (in the window)\n", r.RowsKept)
	}
	if r.RowsOutside > 0 {
		fmt.Fprintf(w, "  outside       %d (rows of other windows, left for them)\n", r.RowsOutside)
	}
	if r.RowsNoWindow > 0 {
		fmt.Fprintf(w, "  no window     %d (rows with no window value)\n", r.RowsNoWindow)
	}
	fmt.Fprintf(w, "  rows written  %d\n", r.RowsWritten)
	if r.Quality != nil {
		p, f := r.Quality.Counts()
		fmt.Fprintf(w, "  checks        %d passed, %d failed\n", p, f)
	}
	if r.Write != nil {
		fmt.Fprintf(w, "  snapshot      %d\n", r.Write.SnapshotID)
		fmt.Fprintf(w, "  table rows    %d -> %d\n", r.Write.RowsBefore, r.Write.RowsAfter)
	}
	fmt.Fprintf(w, "  duration      %.2fs\n", r.DurationS)
}

// exactArgs is cobra.ExactArgs with a message that says what to pass.
func exactArgs(n int, hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError(cmd, "%s", hint)
		}
		return nil
	}
}
