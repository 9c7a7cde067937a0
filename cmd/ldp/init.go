package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/shell"
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
	res, err := controllers.Init(o.dir, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "wrote %s: a daily Pipeline loading orders into the Iceberg table shop.orders\n", res.Spec)
	fmt.Fprintf(s.Out, "wrote %s: %d orders, %d a day from %s to %s (Paris days)\n",
		res.Data, res.Orders, res.PerDay, res.First.Format(time.DateOnly), res.Last.Format(time.DateOnly))
	fmt.Fprintln(s.Out, "next:")
	if o.dir != "." {
		fmt.Fprintf(s.Out, "  cd %s\n", shell.Quote(o.dir))
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
