package main

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

func newDbtCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dbt",
		Short: "Run a dbt project with ldp's tables as its sources",
	}
	cmd.AddCommand(newDbtRunCmd(s, "build"), newDbtRunCmd(s, "test"))
	return cmd
}

func newDbtRunCmd(s *streams, command string) *cobra.Command {
	var win, tz, bin string
	var sel, excl []string
	var asJSON bool
	what := "builds the project and publishes the models whose meta says ldp_publish to Iceberg, through their ldp_quality checks and the exactly-once commit (a table model by overwrite, an incremental one with a unique_key by upsert)"
	if command == "test" {
		what = "runs the project's data tests and publishes nothing"
	}
	cmd := &cobra.Command{
		Use:   command + " PROJECT [--window W]",
		Short: "Run dbt " + command + " for a window, with ldp's tables as sources",
		Long: fmt.Sprintf(`Register the Iceberg tables PROJECT/%s names as views in the DuckDB file the project's
profile uses, run dbt %s with the window as the variables window_start and window_end (UTC
instants), and read how it ended from target/run_results.json: succeeded; blocked_quality
when only data tests failed (exit 3); failed otherwise (exit 1). It %s.
dbt's own output goes to standard error.`, controllers.DbtConfigFile, command, what),
		Example: fmt.Sprintf(`  ldp dbt %s models/ --window 2026-08-01/2026-08-02
  ldp dbt %s models/ --window yesterday --select tag:daily`, command, command),
		Args: exactArgs(1, "name the dbt project folder, for example: ldp dbt "+command+" models/"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var w v1.LogicalWindow
			if win != "" {
				loc, err := time.LoadLocation(tz)
				if err != nil {
					return usageError(cmd, "--timezone: %v", err)
				}
				if w, err = controllers.ParseWindow(win, loc, now()); err != nil {
					return usageError(cmd, "--window: %v", err)
				}
			}
			project := args[0]
			detail, err := runnerFor(s).BuildDbt(cmd.Context(), controllers.DbtBuild{Project: project, Command: command,
				Select: sel, Exclude: excl, Bin: bin, Window: w, RunID: uuid.Must(uuid.NewV7()).String(), Attempt: 1,
				Ledger: controllers.DbtLedger(project)})
			status := string(v1.Succeeded)
			switch {
			case detail.Skipped:
				status = string(v1.Skipped)
			case err != nil && ldperr.IsDataGate(err):
				status = controllers.DbtBlockedQuality
			case err != nil:
				status = string(v1.Failed)
			}
			if asJSON {
				out := map[string]any{"project": project, "command": command, "logical_window": w.String(), "status": status, "detail": detail}
				if err != nil {
					out["error"] = err.Error()
				}
				if werr := writeJSON(s.Out, out); werr != nil {
					return werr
				}
				if err != nil {
					return ldperr.Silent(exitCode(err))
				}
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "dbt %s %s: %s", command, project, status)
			if len(detail.Published) > 0 {
				fmt.Fprintf(s.Out, ", published %v", detail.Published)
			}
			fmt.Fprintln(s.Out)
			return nil
		},
	}
	cmd.Flags().StringVar(&win, "window", "", "the window: START/END, yesterday, last-week or last-month")
	cmd.Flags().StringVar(&tz, "timezone", "UTC", "the time zone the window is read in")
	cmd.Flags().StringSliceVar(&sel, "select", nil, "dbt's --select")
	cmd.Flags().StringSliceVar(&excl, "exclude", nil, "dbt's --exclude")
	cmd.Flags().StringVar(&bin, "dbt-bin", "dbt", "the dbt program to run")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON on stdout")
	return cmd
}
