package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

func newScheduleCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Run a folder of scheduled specs from cron or launchd, with no service",
		Long: `ldp schedule tick DIR runs every window that is due and not done for every scheduled
workflow and dataset config under DIR, and exits; cron or launchd calls it every 5 minutes
(ldp schedule install --print prints the recipe). ldp schedule list DIR shows what is
scheduled, due and missed.`,
	}
	cmd.AddCommand(newTickCmd(s), newListCmd(s), newInstallCmd(s))
	return cmd
}

func parseNow(v string) (time.Time, error) {
	if v == "" {
		return now(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, fmt.Errorf("--now %q: want an ISO-8601 time with an offset, such as 2026-08-05T02:05:00Z", v)
	}
	return t, nil
}

type leaseFlags struct {
	on  bool
	ttl time.Duration
}

func (f *leaseFlags) flags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "leases", false, "divide windows with other ldp processes (on other machines) by a lease per window in the workflows' PostgreSQL catalog, instead of the folder's lock")
	cmd.Flags().DurationVar(&f.ttl, "lease-ttl", 30*time.Second, "how long a window's lease outlives a process that stopped renewing it")
}

func (f *leaseFlags) options() *controllers.LeaseOptions {
	if !f.on {
		return nil
	}
	host, _ := os.Hostname()
	return &controllers.LeaseOptions{Holder: fmt.Sprintf("%s:%d", host, os.Getpid()), TTL: f.ttl}
}
