package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// Output formats. Every command that prints data takes -o/--output, kubectl's convention: text
// for people by default, json for programs, and csv where the data is rows.
const (
	outText = "text"
	outJSON = "json"
	outCSV  = "csv"
)

// output is a command's -o/--output flag, with --json kept as an alias of -o json for the
// scripts written before the flag was one.
type output struct {
	format  string
	json    bool
	choices []string
}

// addOutput registers -o/--output (and the --json alias) on cmd; rows says whether the data is
// rows, so csv is offered.
func addOutput(cmd *cobra.Command, o *output, rows bool) {
	o.choices = []string{outText, outJSON}
	if rows {
		o.choices = append(o.choices, outCSV)
	}
	cmd.Flags().StringVarP(&o.format, "output", "o", outText, "output format: "+strings.Join(o.choices, ", "))
	cmd.Flags().BoolVar(&o.json, "json", false, "the same as -o json")
}

// validate resolves the alias and checks the choice.
func (o *output) validate(cmd *cobra.Command) error {
	if o.format == "table" && slices.Contains(o.choices, outCSV) {
		o.format = outText // ldp query called its text output table
	}
	if o.json {
		if cmd.Flags().Changed("output") && o.format != outJSON {
			return usageError(cmd, "--json and -o %s ask for two formats: pass one of them", o.format)
		}
		o.format = outJSON
	}
	return oneOf(cmd, "output", o.format, o.choices...)
}

// JSON says whether the command prints JSON.
func (o *output) JSON() bool { return o.format == outJSON }

// stamp writes a time for format: RFC 3339 for programs (csv), "2006-01-02 15:04:05" for
// people, both in UTC.
func stamp(t time.Time, format string) string {
	if format == outCSV {
		return t.UTC().Format(time.RFC3339)
	}
	return t.UTC().Format(time.DateTime)
}

// withZone adds to a text table, after its column at, that column's times in loc (the spec's
// zone), when loc is not UTC; times holds each row's. CSV and JSON keep UTC alone.
func (t *table) withZone(at int, loc *time.Location, times []time.Time, format string) {
	if format != outText || loc == nil || loc.String() == "UTC" {
		return
	}
	t.header = slices.Insert(t.header, at+1, strings.Replace(t.header[at], "(UTC)", "("+loc.String()+")", 1))
	for i, r := range t.rows {
		t.rows[i] = slices.Insert(r, at+1, times[i].In(loc).Format("2006-01-02 15:04:05 MST"))
	}
}

// table is data as rows of cells, printed aligned under a header (text) or as CSV. CSV has the
// same columns with machine-friendly headers and no dashes for missing cells.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints t as text or CSV; csvHeader, when given, names the CSV columns.
func (t *table) write(w io.Writer, format string, csvHeader ...string) error {
	if format == outCSV {
		cw := csv.NewWriter(w)
		h := t.header
		if len(csvHeader) > 0 {
			h = csvHeader
		}
		cw.Write(h)
		for _, r := range t.rows {
			rec := make([]string, len(r))
			for i, c := range r {
				if c != "-" {
					rec[i] = c
				}
			}
			cw.Write(rec)
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
