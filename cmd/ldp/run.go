package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/internal/pipeline"
)

type runOptions struct {
	spec string
	mode string
	json bool
	s    *streams
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

Exit status: 0 written, 1 error, 3 held back by a data gate.`,
		Example: `  ldp run config/samples/nyc_taxi.json
  ldp run orders.yaml --mode overwrite
  ldp run orders.yaml --json | jq .rows_written`,
		Args: exactArgs(1, "name the Pipeline spec to run, for example: ldp run orders.json"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.spec = args[0]
			if o.mode != "" {
				if err := oneOf(cmd, "mode", o.mode, "append", "overwrite", "upsert"); err != nil {
					return err
				}
			}
			return o.run(cmd)
		},
	}
	cmd.Flags().StringVar(&o.mode, "mode", "", "write mode, instead of the spec's: append, overwrite or upsert")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON on stdout")
	return cmd
}

func (o *runOptions) run(cmd *cobra.Command) error {
	p, err := loadPipeline(o.spec)
	if err != nil {
		return err
	}
	res, err := pipeline.Run(cmd.Context(), p, pipeline.Options{Mode: o.mode, Log: o.s.Err})
	if res != nil {
		if o.json {
			enc := json.NewEncoder(o.s.Out)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(res); jerr != nil {
				return jerr
			}
		} else {
			printRunResult(o.s.Out, res)
		}
	}
	return err
}

func printRunResult(w io.Writer, r *pipeline.Result) {
	fmt.Fprintf(w, "%s: %s into %s (%s): %s\n", r.Pipeline, r.Route, r.Target, r.Mode, r.Status)
	fmt.Fprintf(w, "  rows read     %d\n", r.RowsRead)
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
