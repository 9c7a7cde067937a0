package main

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

type queryOptions struct {
	spec, sql string
	out       output
	snapshot  int64
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
Iceberg table its tasks write (loads and SQL models) is registered under its name.`,
		Example: `  ldp query config/samples/nyc_taxi.json "SELECT city, count(*) FROM rides GROUP BY city"
  ldp query orders.json "SELECT * FROM orders LIMIT 5" --output csv
  ldp query orders.json "SELECT count(*) FROM orders" --snapshot 4484537308588128261
  ldp query workflow.json "SELECT * FROM revenue_by_country ORDER BY day"`,
		Args: exactArgs(2, `name the spec and the SQL, for example: ldp query orders.json "SELECT count(*) FROM orders"`),
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, true)
	cmd.Flags().Int64Var(&o.snapshot, "snapshot", 0, "read the target table as of this snapshot id (see ldp snapshots)")
	return cmd
}

func (o *queryOptions) Validate(cmd *cobra.Command, args []string) error {
	o.spec, o.sql = args[0], args[1]
	return o.out.validate(cmd)
}

func (o *queryOptions) Run(ctx context.Context, s *streams) error {
	o.s = s
	cols, rows, err := tables.Query(ctx, o.spec, o.sql, o.snapshot)
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

func formatValue(v any) string {
	switch t := v.(type) {
	case time.Time:
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			return t.UTC().Format("2006-01-02")
		}
		if t.Nanosecond() != 0 {
			return t.UTC().Format("2006-01-02 15:04:05.999999")
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(t), 'f', -1, 32)
	case []byte:
		return hex.EncodeToString(t)
	case *big.Int:
		return t.String()
	}
	return fmt.Sprint(v)
}

func jsonValue(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool, int, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
		b, _ := json.Marshal(t)
		return string(b)
	case *big.Int:
		return t.String()
	}
	b, _ := json.Marshal(formatValue(v))
	return string(b)
}
