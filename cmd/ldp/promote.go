package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// promoteOptions are the flags and argument of ldp promote.
type promoteOptions struct {
	name  string
	paths []string
	opts  tables.PromoteOptions
	out   output
}

func newPromoteCmd(s *streams) *cobra.Command {
	o := &promoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote NAME [-f FOLDER] [--rebase] [--force]",
		Short: "Move main of every table of a folder's objects to what environment NAME published",
		Long: `For each table the folder's objects write that environment NAME has published to:

- main has not moved since the environment forked: main fast-forwards to the environment's
  head, in one catalog commit per table. A reader of main sees the old rows until that
  commit and the environment's after it, never a mix.
- main has moved (a run on main published since): the promote is refused, naming what main
  published. With --rebase, each of the environment's windows that main lacks (by key) is
  added to main again, from the same data files, under its own key, in one commit per table;
  a window main already has is skipped, never doubled. An overwrite or upsert is replayed
  with its write mode on main as it is now: its batch replaces the window's rows (or the
  rows of its join keys), main's files rewritten without them.

A window published in the environment although its checks failed (on_failure "warn") holds
the promote back unless --force. Every table is checked first: if one is refused, none is
promoted. The environment's branches stay (ldp env delete removes them).

Exit status: 0 promoted (or nothing to promote), 1 refused or an error.`,
		Example: `  ldp promote dev
  ldp promote dev -f pipelines/orders.json --dry-run
  ldp promote dev --rebase
  ldp promote dev --force -o json`,
		Args: exactArgs(1, "name the environment to promote, for example: ldp promote dev"),
		RunE: runVerb(o, s),
	}
	addFolderFlag(cmd, &o.paths)
	cmd.Flags().BoolVar(&o.opts.Rebase, "rebase", false, "when main moved since the fork, replay the environment's windows main lacks onto it, once each by key")
	cmd.Flags().BoolVar(&o.opts.Force, "force", false, "promote windows whose checks failed")
	cmd.Flags().BoolVar(&o.opts.DryRun, "dry-run", false, "check and print what would be promoted, and promote nothing")
	addOutput(cmd, &o.out, false)
	return cmd
}

func (o *promoteOptions) Validate(cmd *cobra.Command, args []string) error {
	o.name = args[0]
	if err := tables.CheckEnvName(o.name); err != nil {
		return usageError(cmd, "%v", err)
	}
	return o.out.validate(cmd)
}

func (o *promoteOptions) Run(ctx context.Context, s *streams) error {
	o.opts.Hook = faultHook(s.Getenv)
	res, err := tables.Promote(ctx, o.paths, o.name, o.opts)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, res)
	}
	printPromote(s.Out, res, o.opts.DryRun)
	return nil
}

func printPromote(w io.Writer, res []*tables.PromoteResult, dry bool) {
	verb, done := "", "promoted"
	if dry {
		verb, done = "would be ", "to promote"
	}
	for _, r := range res {
		switch r.Action {
		case tables.PromoteNoEnv:
			fmt.Fprintf(w, "%s: environment %s has not written it\n", r.Table, r.Env)
			continue
		case tables.PromoteUpToDate:
			fmt.Fprintf(w, "%s: main already has every window of %s\n", r.Table, r.Env)
			continue
		}
		fmt.Fprintf(w, "%s: %s%s, %d %s, main %d -> %d\n", r.Table, verb, r.Action, len(r.Windows), plural(len(r.Windows), "window", "windows"), r.From, r.To)
		for _, win := range r.Windows {
			fmt.Fprintf(w, "  %s  %s (%d rows)\n", done, win, win.Rows)
		}
		for _, win := range r.Skipped {
			fmt.Fprintf(w, "  skipped   %s (main has it)\n", win)
		}
	}
}
