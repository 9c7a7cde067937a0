package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// envDeleteOptions are the flags and argument of ldp env delete.
type envDeleteOptions struct {
	name  string
	paths []string
}

func newEnvDeleteCmd(s *streams) *cobra.Command {
	o := &envDeleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete NAME [-f FOLDER]",
		Short: "Delete an environment: remove its branch from every table of a folder's objects",
		Long: `Remove environment NAME's branch from each table the folder's objects write, with its
snapshots that main does not hold (a window promoted onto main stays). Its data files are
then unreferenced and ldp maintain --orphans removes them. main is not touched.`,
		Example: `  ldp env delete dev
  ldp env delete pr-114 -f pipelines/`,
		Args: exactArgs(1, "name the environment to delete, for example: ldp env delete dev"),
		RunE: runVerb(o, s),
	}
	addFolderFlag(cmd, &o.paths)
	return cmd
}

func (o *envDeleteOptions) Validate(cmd *cobra.Command, args []string) error {
	o.name = args[0]
	if err := tables.CheckEnvName(o.name); err != nil {
		return usageError(cmd, "%v", err)
	}
	return nil
}

func (o *envDeleteOptions) Run(ctx context.Context, s *streams) error {
	from, err := tables.EnvDelete(ctx, o.paths, o.name)
	if err != nil {
		return err
	}
	if len(from) == 0 {
		fmt.Fprintf(s.Out, "environment %s is on no table here: nothing to delete\n", o.name)
		return nil
	}
	fmt.Fprintf(s.Out, "deleted environment %s from %s\n", o.name, strings.Join(from, ", "))
	return nil
}
