package main

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// snapshotsOptions are the flags and arguments of the command newSnapshotsCmd builds.
type snapshotsOptions struct {
	args []string
	env  string
	out  output
}

func (o *snapshotsOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	if err := validEnv(cmd, o.env); err != nil {
		return err
	}
	return o.out.validate(cmd)
}

func (o *snapshotsOptions) Run(ctx context.Context, s *streams) error {
	snaps, err := tables.EnvSnapshots(ctx, o.args[0], o.env)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, snaps)
	}
	t := table{header: []string{"SNAPSHOT", "PARENT", "COMMITTED (UTC)", "OPERATION", "ADDED", "DELETED", "ROWS", "LDP"}}
	for _, sn := range snaps {
		parent := "-"
		if sn.ParentID != nil {
			parent = strconv.FormatInt(*sn.ParentID, 10)
		}
		t.add(strconv.FormatInt(sn.ID, 10), parent, stamp(time.UnixMilli(sn.TimestampMs), o.out.format), sn.Operation,
			orDash(sn.Summary["added-records"]), orDash(sn.Summary["deleted-records"]), orDash(sn.Summary["total-records"]), ldpSummary(sn.Summary, o.out.format != outCSV))
	}
	return t.write(s.Out, o.out.format, "snapshot_id", "parent_id", "committed_utc", "operation", "added_records", "deleted_records", "total_records", "ldp")
}

func newSnapshotsCmd(s *streams) *cobra.Command {
	o := &snapshotsOptions{}
	cmd := &cobra.Command{
		Use:   "snapshots SPEC",
		Short: "List the snapshots of a Pipeline's Iceberg table, oldest first",
		Example: `  ldp snapshots config/samples/nyc_taxi.json
  ldp snapshots orders.json -o json   # every summary key; ids are strings, as jq needs them
  ldp snapshots orders.json -o csv
  ldp snapshots orders.json --env dev   # the snapshots on dev's branch: main's to the fork, then dev's`,
		Args: exactArgs(1, "name the Pipeline spec whose table to list, for example: ldp snapshots orders.json"),
		RunE: runVerb(o, s),
	}
	addEnvFlag(cmd, &o.env, "list the snapshots on this environment's branch (main's up to the fork, then the environment's)")
	addOutput(cmd, &o.out, true)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ldpSummary shows the ldp.* keys of a summary, sorted, with long keys shortened when short.
func ldpSummary(m map[string]string, short bool) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !strings.HasPrefix(k, "ldp.") {
			continue
		}
		v := m[k]
		if short && len(v) > 16 && strings.HasSuffix(k, "key") {
			v = v[:12] + "…"
		}
		parts = append(parts, strings.TrimPrefix(k, "ldp.")+"="+v)
	}
	return strings.Join(parts, " ")
}
