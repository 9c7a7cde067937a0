package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// snapshotsOptions are the flags and arguments of the command newSnapshotsCmd builds.
type snapshotsOptions struct {
	args []string
	json bool
}

func (o *snapshotsOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	return nil
}

func (o *snapshotsOptions) Run(ctx context.Context, s *streams) error {
	snaps, err := controllers.Snapshots(ctx, o.args[0])
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(s.Out, snaps)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tPARENT\tCOMMITTED (UTC)\tOPERATION\tADDED\tDELETED\tROWS\tLDP")
	for _, sn := range snaps {
		parent := "-"
		if sn.ParentID != nil {
			parent = fmt.Sprint(*sn.ParentID)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sn.ID, parent,
			time.UnixMilli(sn.TimestampMs).UTC().Format("2006-01-02 15:04:05"), sn.Operation,
			orDash(sn.Summary["added-records"]), orDash(sn.Summary["deleted-records"]), orDash(sn.Summary["total-records"]), ldpSummary(sn.Summary))
	}
	return tw.Flush()
}

func newSnapshotsCmd(s *streams) *cobra.Command {
	o := &snapshotsOptions{}
	cmd := &cobra.Command{
		Use:   "snapshots SPEC",
		Short: "List the snapshots of a Pipeline's Iceberg table, oldest first",
		Example: `  ldp snapshots config/samples/nyc_taxi.json
  ldp snapshots orders.json --json`,
		Args: exactArgs(1, "name the Pipeline spec whose table to list, for example: ldp snapshots orders.json"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print every snapshot with its whole summary as JSON")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ldpSummary shows the ldp.* keys of a summary, sorted, with long keys shortened.
func ldpSummary(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, "ldp.") {
			continue
		}
		v := m[k]
		if len(v) > 16 && strings.HasSuffix(k, "key") {
			v = v[:12] + "…"
		}
		parts = append(parts, strings.TrimPrefix(k, "ldp.")+"="+v)
	}
	return strings.Join(parts, " ")
}
