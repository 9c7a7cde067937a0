package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// catalogTestOptions are ldp catalog test's.
type catalogTestOptions struct {
	spec string
	out  output
}

func (o *catalogTestOptions) Validate(cmd *cobra.Command, args []string) error {
	o.spec = args[0]
	return o.out.validate(cmd)
}

func (o *catalogTestOptions) Run(ctx context.Context, s *streams) error {
	id, steps, err := tables.CatalogTest(ctx, o.spec)
	if err != nil {
		return err
	}
	failed := false
	for _, st := range steps {
		failed = failed || st.Error != ""
	}
	if o.out.JSON() {
		if err := writeJSON(s.Out, map[string]any{"catalog": id, "steps": steps, "ok": !failed}); err != nil {
			return err
		}
	} else {
		for _, st := range steps {
			if st.Error != "" {
				fmt.Fprintf(s.Out, "FAIL  %s: %s\n", st.What, st.Error)
			} else {
				fmt.Fprintf(s.Out, "ok    %s\n", st.What)
			}
		}
	}
	if failed {
		return failedExit()
	}
	return nil
}

// catalogRegisterOptions are ldp catalog register's.
type catalogRegisterOptions struct {
	spec, metadata string
}

func (o *catalogRegisterOptions) Validate(_ *cobra.Command, args []string) error {
	o.spec = args[0]
	return nil
}

func (o *catalogRegisterOptions) Run(ctx context.Context, s *streams) error {
	ref, catalog, loc, err := tables.CatalogRegister(ctx, o.spec, o.metadata)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "registered %s in catalog %s at %s\n", ref, catalog, displayPath(loc))
	return nil
}

// catalogReindexOptions are ldp catalog reindex's.
type catalogReindexOptions struct {
	spec string
}

func (o *catalogReindexOptions) Validate(_ *cobra.Command, args []string) error {
	o.spec = args[0]
	return nil
}

func (o *catalogReindexOptions) Run(ctx context.Context, s *streams) error {
	ref, res, err := tables.CatalogReindex(ctx, o.spec)
	if err != nil {
		return err
	}
	how := ""
	if res.Rebuilt {
		how = " (the old index could not be read: rebuilt from the snapshots' summaries)"
	}
	fmt.Fprintf(s.Out, "indexed %d %s of %s%s\n", res.Keys, plural(res.Keys, "key", "keys"), ref, how)
	if res.Gap {
		fmt.Fprintf(s.Err, "ldp: main's snapshots before %s were expired and no index holds their keys: windows published before then count as done only inside the idempotency horizon\n",
			time.UnixMilli(res.GapMs).UTC().Format(time.RFC3339))
	}
	return nil
}

func newCatalogCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Check the Iceberg catalog a spec names"}
	testOpts, registerOpts := &catalogTestOptions{}, &catalogRegisterOptions{}
	test := &cobra.Command{
		Use:   "test SPEC",
		Short: "Connect to a spec's catalog, list namespaces, create and drop a scratch table",
		Long: `Check that the catalog of a dataset config's target (or of its Iceberg source) works for
ldp: connect, list the namespaces, create the namespace if missing, and create and drop a
scratch table, which writes to the warehouse's storage (a folder or an s3:// bucket). Each step
prints ok or what failed, in plain words; secrets never print.

Exit status: 0 every step worked, 1 a step failed.`,
		Example: `  ldp catalog test orders.json
  SHOP_CATALOG_TOKEN=... ldp catalog test --json orders_on_rest.json`,
		Args: exactArgs(1, "name the dataset config, for example: ldp catalog test orders.json"),
		RunE: runVerb(testOpts, s),
	}
	addOutput(test, &testOpts.out, false)
	register := &cobra.Command{
		Use:   "register SPEC",
		Short: "Put a table back in its catalog from the newest metadata.json in the warehouse",
		Long: `Register the target table of a dataset config in its catalog again, at the newest
metadata.json that reads found under the table's folder in the warehouse. Use it when the
catalog file was deleted or replaced while the tables' files stayed: ldp refuses to create a
table where one's metadata already lies, because the new, empty table would hide the published
data. With --metadata FILE, the table (registered or not) is pointed at that file: the way back
when its current metadata file is truncated or corrupt.

Exit status: 0 registered, 1 nothing to register or the table is already there.`,
		Example: `  ldp catalog register orders.json
  ldp catalog register orders.json --metadata warehouse/shop.db/orders/metadata/00006-....metadata.json`,
		Args: exactArgs(1, "name the dataset config, for example: ldp catalog register orders.json"),
		RunE: runVerb(registerOpts, s),
	}
	register.Flags().StringVar(&registerOpts.metadata, "metadata", "", "the metadata file to point the table at (a table already in the catalog too: the way back from a corrupt current version)")
	reindexOpts := &catalogReindexOptions{}
	reindex := &cobra.Command{
		Use:   "reindex SPEC",
		Short: "Build the key index of a spec's table again from its snapshots",
		Long: `Build the key index of the target table of a dataset config and attach it to main's head:
a readable index is carried forward with the keys published after it, one that cannot be read
is rebuilt from the idempotency keys in the summaries of main's snapshots. No data file is read
or written. Use it when ldp reports the key index missing or corrupt, or to index a table
written by an ldp without one. Keys of expired snapshots that no readable index holds cannot
be recovered: it says so, and for them the idempotency horizon holds as before.

Exit status: 0 indexed, 1 it failed.`,
		Example: `  ldp catalog reindex orders.json`,
		Args:    exactArgs(1, "name the dataset config, for example: ldp catalog reindex orders.json"),
		RunE:    runVerb(reindexOpts, s),
	}
	cmd.AddCommand(test, register, reindex)
	return cmd
}
