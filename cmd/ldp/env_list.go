package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// envListOptions are the flags of ldp env list.
type envListOptions struct {
	paths []string
	out   output
}

func newEnvListCmd(s *streams) *cobra.Command {
	o := &envListOptions{}
	cmd := &cobra.Command{
		Use:   "list [-f FOLDER]",
		Short: "List the environments on the tables of a folder's objects",
		Long: `List one line per environment and table: the windows the environment published there
(oldest first), and how many snapshots main published since the environment forked (0: a
promote is a fast-forward).`,
		Example: `  ldp env list
  ldp env list -f pipelines/ -o json`,
		Args: exactArgs(0, "ldp env list takes no argument; name the folder with -f"),
		RunE: runVerb(o, s),
	}
	addFolderFlag(cmd, &o.paths)
	addOutput(cmd, &o.out, true)
	return cmd
}

func (o *envListOptions) Validate(cmd *cobra.Command, _ []string) error { return o.out.validate(cmd) }

func (o *envListOptions) Run(ctx context.Context, s *streams) error {
	envs, err := tables.EnvList(ctx, o.paths)
	if err != nil {
		return err
	}
	if o.out.JSON() {
		return writeJSON(s.Out, envs)
	}
	if len(envs) == 0 && o.out.format == outText {
		fmt.Fprintln(s.Out, "no environment: run with --env NAME to make one")
		return nil
	}
	t := table{header: []string{"ENV", "TABLE", "WINDOWS", "MAIN MOVED", "PUBLISHED"}}
	for _, e := range envs {
		var names []string
		for _, w := range e.Windows {
			names = append(names, w.String())
		}
		t.add(e.Name, e.Table, strconv.Itoa(len(e.Windows)), strconv.Itoa(e.Behind), orDash(strings.Join(names, " ")))
	}
	return t.write(s.Out, o.out.format, "env", "table", "windows", "main_moved", "published")
}
