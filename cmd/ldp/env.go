package main

import (
	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers/tables"
)

func newEnvCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "env",
		Short: "List and delete environments: Iceberg branches beside main that runs publish to with --env",
		Long: `An environment NAME is a branch ldp_env_NAME of each Iceberg table that a run with --env NAME
writes, forked from main when the environment first writes the table. Its windows publish
exactly once, by the same keys as on main, and main is never touched: ldp query --env NAME
reads the environment (a table it has not written reads from main), and ldp promote NAME
moves main to it. A name is a lowercase letter followed by up to 39 lowercase letters,
digits, '_' or '-'.

ldp env list shows each environment on the tables of a folder's objects, with its windows;
ldp env delete NAME removes its branches (its files go with the next ldp maintain).`,
		Example: `  ldp run orders.json --window 2026-08-01/2026-08-02 --env dev
  ldp query orders.json "SELECT count(*) FROM orders" --env dev
  ldp env list -f .
  ldp promote dev -f .
  ldp env delete dev -f .`,
	}
	cmd.AddCommand(newEnvListCmd(s), newEnvDeleteCmd(s))
	return cmd
}

// addEnvFlag adds --env to a command; what says what it does there.
func addEnvFlag(cmd *cobra.Command, env *string, what string) {
	cmd.Flags().StringVar(env, "env", "", what)
}

// validEnv is a usage error naming the rule when --env is set to a name no environment may take.
func validEnv(cmd *cobra.Command, env string) error {
	if env == "" {
		return nil
	}
	if err := tables.CheckEnvName(env); err != nil {
		return usageError(cmd, "--env: %v", err)
	}
	return nil
}

// addFolderFlag adds -f, the folders or specs whose tables an environment verb works on.
func addFolderFlag(cmd *cobra.Command, paths *[]string) {
	cmd.Flags().StringSliceVarP(paths, "file", "f", []string{"."}, "the folder (every spec in it) or spec files whose Iceberg tables to work on; repeatable")
}
