package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

type queryOptions struct {
	spec, sql string
	out       output
	snapshot  int64
	env       string
	s         *streams
}

func newQueryCmd(s *streams) *cobra.Command {
	o := &queryOptions{s: s}
	cmd := &cobra.Command{
		Use:   "query SPEC SQL",
		Short: "Run DuckDB SQL over a Pipeline's target table, or a Workflow's tables",
		Long: `Run a DuckDB SQL query with the Pipeline's target registered under its target name
(an Iceberg table as the Parquet files of its current snapshot, or of --snapshot for time
travel), and the source of an export Pipeline under its source name. Given a Workflow, every
Iceberg table its tasks write (loads and SQL models) is registered under its name. With --env
NAME each table is read from environment NAME's branch where it has written the table, and
from main where it has not.`,
		Example: `  ldp query config/samples/nyc_taxi.json "SELECT city, count(*) FROM rides GROUP BY city"
  ldp query orders.json "SELECT * FROM orders LIMIT 5" --output csv
  ldp query orders.json "SELECT count(*) FROM orders" --snapshot 4484537308588128261
  ldp query workflow.json "SELECT * FROM revenue_by_country ORDER BY day"
  ldp query orders.json "SELECT count(*) FROM orders" --env dev`,
		Args: exactArgs(2, `name the spec and the SQL, for example: ldp query orders.json "SELECT count(*) FROM orders"`),
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, true)
	cmd.Flags().Int64Var(&o.snapshot, "snapshot", 0, "read the target table as of this snapshot id (see ldp snapshots)")
	addEnvFlag(cmd, &o.env, "read each table from this environment's branch where it has written it, from main elsewhere")
	return cmd
}

func (o *queryOptions) Validate(cmd *cobra.Command, args []string) error {
	o.spec, o.sql = args[0], args[1]
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	return o.out.validate(cmd)
}

func (o *queryOptions) Run(ctx context.Context, s *streams) error {
	o.s = s
	cols, rows, err := tables.EnvQuery(ctx, o.spec, o.sql, o.snapshot, o.env)
	if err != nil {
		return err
	}
	return writeRows(o.s.Out, cols, rows, o.out.format)
}

// writeRows prints a result set as an aligned table, CSV, or a JSON array of objects.
func writeRows(w io.Writer, cols []string, all [][]any, format string) error {
	switch format {
	case outCSV:
		cw := csv.NewWriter(w)
		cw.Write(cols)
		for _, r := range all {
			rec := make([]string, len(r))
			for i, v := range r {
				if v != nil {
					rec[i] = formatValue(v)
				}
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	case outJSON:
		var b strings.Builder
		b.WriteString("[")
		for i, r := range all {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n  {")
			for j, v := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				k, _ := json.Marshal(cols[j])
				b.Write(k)
				b.WriteString(": ")
				b.WriteString(jsonValue(v))
			}
			b.WriteString("}")
		}
		if len(all) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("]\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range all {
		cells := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = formatValue(v)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(%d %s)\n", len(all), plural(len(all), "row", "rows"))
	return nil
}

// formatValue is a value's text: the controller's values render themselves as DuckDB does.
func formatValue(v any) string { return fmt.Sprint(v) }

// jsonValue is a value's JSON: numbers and booleans as JSON's, nested values as objects and
// arrays, the rest as strings.
func jsonValue(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return string(b)
}
