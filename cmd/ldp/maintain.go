package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tables"
)

// maintainOptions are the flags and arguments of the command newMaintainCmd builds.
type maintainOptions struct {
	args                 []string
	m                    v1.MaintainTask
	expire, retain, keep int
	age                  float64
	out                  output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *maintainOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
}

func (o *maintainOptions) Run(ctx context.Context, s *streams) error {
	if o.cmd.Flags().Changed("expire") {
		o.m.Expire = &o.expire
	}
	if o.cmd.Flags().Changed("retain-last") {
		o.m.RetainLast = &o.retain
	}
	if o.cmd.Flags().Changed("orphan-age-hours") {
		o.m.OrphanAgeHours = &o.age
	}
	if o.cmd.Flags().Changed("keep-metadata-versions") {
		o.m.KeepMetadataVersions = &o.keep
	}
	if o.m.Expire == nil && !o.m.Orphans && o.m.KeepMetadataVersions == nil {
		if _, err := loadPipeline(o.args[0]); err != nil {
			return err
		}
		return usageError(o.cmd, "say what to do: --expire DAYS, --orphans or --keep-metadata-versions N")
	}
	rep, err := tables.Maintain(ctx, o.args[0], &o.m)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, rep)
	}
	verb, verbs := "would expire", "would delete"
	if rep.Applied {
		verb, verbs = "expired", "deleted"
	}
	fmt.Fprintf(s.Out, "%s: %d snapshots\n", rep.Table, rep.Snapshots)
	if o.m.Expire != nil {
		fmt.Fprintf(s.Out, "  %s %d %s older than %d days (%d bytes of data files)", verb, len(rep.Expire), plural(len(rep.Expire), "snapshot", "snapshots"), max(*o.m.Expire, rep.HorizonDays), rep.ExpireBytes)
		if rep.KeptByHorizon > 0 {
			fmt.Fprintf(s.Out, " (kept %d inside the %d-day idempotency horizon)", rep.KeptByHorizon, rep.HorizonDays)
		}
		fmt.Fprintln(s.Out)
	}
	if o.m.Orphans {
		fmt.Fprintf(s.Out, "  %s %d orphan %s (%d bytes)\n", verbs, len(rep.Orphans), plural(len(rep.Orphans), "file", "files"), rep.OrphanBytes)
		for _, f := range rep.Orphans {
			fmt.Fprintln(s.Out, "    "+f)
		}
		if rep.LiveRuns > 0 {
			fmt.Fprintf(s.Out, "  kept every file newer than the oldest of %d %s writing to the warehouse\n", rep.LiveRuns, plural(rep.LiveRuns, "run", "runs"))
		}
		if len(rep.DeadScratch) > 0 {
			fmt.Fprintf(s.Out, "  %s %d scratch %s of killed runs\n", strings.Replace(verbs, "delete", "remove", 1), len(rep.DeadScratch), plural(len(rep.DeadScratch), "folder", "folders"))
			for _, d := range rep.DeadScratch {
				fmt.Fprintln(s.Out, "    "+displayPath(d))
			}
		}
	}
	if !rep.Applied {
		fmt.Fprintln(s.Out, "dry run: nothing changed; add --apply to do it")
	}
	return nil
}

func newMaintainCmd(s *streams) *cobra.Command {
	o := &maintainOptions{}
	cmd := &cobra.Command{
		Use:   "maintain SPEC",
		Short: "Expire old snapshots and delete orphan files of a Pipeline's table (a dry run unless --apply)",
		Long: `Keep a table healthy as it ages. It prints what it would expire or delete, with counts and
bytes, and changes nothing unless --apply.

Expiry keeps every published window done: the key index on main's head holds the keys of the
snapshots it expires (a table without one is indexed first). It never removes a snapshot newer
than the table's idempotency horizon (table property ldp.idempotency.horizon-days, default
7), for readers that know keys only from summaries, nor a branch head, nor the last
--retain-last snapshots. Superseded key index files are orphans like any other.
Orphans are files no snapshot or metadata version references, older than
--orphan-age-hours (at least one hour unless --force); a staging branch's files are
referenced while the branch exists, and nothing newer than the start of a run still writing
to the warehouse is taken. Scratch folders that killed runs left are removed too.`,
		Example: `  ldp maintain orders.json --expire 30 --orphans
  ldp maintain orders.json --expire 30 --orphans --apply`,
		Args: exactArgs(1, "name the Pipeline spec whose table to maintain, for example: ldp maintain orders.json --expire 30"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().IntVar(&o.expire, "expire", 0, "expire snapshots older than DAYS (never inside the idempotency horizon)")
	cmd.Flags().IntVar(&o.retain, "retain-last", 1, "always keep this many snapshots of main")
	cmd.Flags().BoolVar(&o.m.Orphans, "orphans", false, "find files no snapshot references")
	cmd.Flags().Float64Var(&o.age, "orphan-age-hours", 72, "only files older than this are orphans")
	cmd.Flags().IntVar(&o.keep, "keep-metadata-versions", 0, "keep this many previous metadata files")
	cmd.Flags().BoolVar(&o.m.Apply, "apply", false, "do it (the default is a dry run)")
	cmd.Flags().BoolVar(&o.m.Force, "force", false, "allow an --orphan-age-hours below one hour")
	addOutput(cmd, &o.out, false)
	return cmd
}
