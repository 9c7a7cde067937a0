package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/internal/synth"
)

// initSpec is the Pipeline ldp init writes: the quickstart's spec (docs/quickstart.md shows
// it, and a test holds the two equal).
const initSpec = `{
  "apiVersion": "ldp/v1",
  "kind": "Pipeline",
  "identifier": "orders",
  "metadata": {
    "schedule": "5 2 * * *",
    "window": {"size": "day", "column": "ordered_at", "timezone": "Europe/Paris"},
    "source": {"format": "CSV", "path": "data/orders.csv"},
    "target": {"name": "orders", "format": "ICEBERG", "write_mode": "overwrite",
               "catalog": {"identifier": "shop", "warehouse_path": "warehouse"}},
    "quality": [
      {"check": "row_count", "min": 1},
      {"check": "unique", "columns": ["order_id"]},
      {"check": "range", "column": "amount", "min": 0}
    ]
  }
}
`

// initDays and initPerDay size the sample: two weeks ending yesterday, so the day a schedule
// wants now and a backfill of the days before it both find orders.
const (
	initDays   = 14
	initPerDay = 5
	initZone   = "Europe/Paris"
)

// initOptions are the flags and arguments of the command newInitCmd builds.
type initOptions struct {
	dir string
	now string
}

func (o *initOptions) Validate(cmd *cobra.Command, args []string) error {
	o.dir = "."
	if len(args) == 1 {
		o.dir = args[0]
	}
	return nil
}

func (o *initOptions) Run(ctx context.Context, s *streams) error {
	now, err := parseNow(o.now)
	if err != nil {
		return err
	}
	loc, err := time.LoadLocation(initZone)
	if err != nil {
		return err
	}
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	first := today.AddDate(0, 0, -initDays)
	var data bytes.Buffer
	if err := synth.WriteOrders(&data, 7, first, initDays, initPerDay); err != nil {
		return err
	}
	files := []struct {
		name string
		body []byte
	}{
		{"orders.json", []byte(initSpec)},
		{filepath.Join("data", "orders.csv"), data.Bytes()},
	}
	// Check both before writing either, so a refusal leaves nothing half made.
	for _, f := range files {
		p := filepath.Join(o.dir, f.name)
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%s exists: ldp init writes only into files that are not there; choose another folder (ldp init DIR)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, f := range files {
		p := filepath.Join(o.dir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.body, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Out, "wrote %s: a daily Pipeline loading orders into the Iceberg table shop.orders\n", filepath.Join(o.dir, "orders.json"))
	fmt.Fprintf(s.Out, "wrote %s: %d orders, %d a day from %s to %s (Paris days)\n",
		filepath.Join(o.dir, "data", "orders.csv"), initDays*initPerDay, initPerDay,
		first.Format(time.DateOnly), today.AddDate(0, 0, -1).Format(time.DateOnly))
	fmt.Fprintln(s.Out, "next:")
	if o.dir != "." {
		fmt.Fprintf(s.Out, "  cd %s\n", shellWord(o.dir))
	}
	fmt.Fprintln(s.Out, "  ldp validate .")
	fmt.Fprintln(s.Out, "  ldp diff -f .")
	return nil
}

func newInitCmd(s *streams) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Start a project: a sample daily Pipeline and two weeks of orders for it",
		Long: `Write orders.json, a daily Pipeline (Paris days) loading data/orders.csv into the Iceberg
table shop.orders with three checks, and data/orders.csv itself: five orders a day for the
fourteen days that end yesterday, so the window the schedule wants now and a backfill of the
days before it both have data. DIR (default: the current folder) is made if it is missing;
a file that is already there is never overwritten.

docs/quickstart.md goes on from here.`,
		Example: `  ldp init shop && cd shop
  ldp init`,
		Args: cobra.MaximumNArgs(1),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "date the orders as if it were this time, ISO-8601 (default: now)")
	return cmd
}
