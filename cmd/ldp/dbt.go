package main

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/schemas"
)

func newDbtCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dbt",
		Short: "Run a dbt project with ldp's tables as its sources",
	}
	cmd.AddCommand(newDbtRunCmd(s, "build"), newDbtRunCmd(s, "test"))
	return cmd
}

// dbtOptions are the flags and arguments of the command newDbtRunCmd builds.
type dbtOptions struct {
	args         []string
	win, tz, bin string
	sel, excl    []string
	out          output
	command      string
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *dbtOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
}

func (o *dbtOptions) Run(ctx context.Context, s *streams) error {
	var w v1.LogicalWindow
	if o.win != "" {
		loc, err := time.LoadLocation(o.tz)
		if err != nil {
			return usageError(o.cmd, "--timezone: unknown time zone %q%s: use an IANA name such as Europe/Paris or UTC", o.tz, schemas.ZoneSuggestion(o.tz))
		}
		if w, err = controllers.ParseWindow(o.win, loc, now()); err != nil {
			return usageError(o.cmd, "--window: %v", err)
		}
	}
	project := o.args[0]
	detail, err := runnerFor(s).BuildDbt(ctx, controllers.DbtRun{Project: project, Command: o.command,
		Select: o.sel, Exclude: o.excl, Bin: o.bin, Window: w, RunID: uuid.Must(uuid.NewV7()).String()})
	status := detail.Status(err)
	if o.out.JSON() {
		out := map[string]any{"project": project, "command": o.command, "logical_window": w.String(), "status": status, "detail": detail}
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
	fmt.Fprintf(s.Out, "dbt %s %s: %s", o.command, project, status)
	if len(detail.Published) > 0 {
		fmt.Fprintf(s.Out, ", published %v", detail.Published)
	}
	fmt.Fprintln(s.Out)
	return nil
}

func newDbtRunCmd(s *streams, command string) *cobra.Command {
	o := &dbtOptions{command: command}
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
dbt's own output goes to standard error.`, v1.DbtConfigFile, command, what),
		Example: fmt.Sprintf(`  ldp dbt %s models/ --window 2026-08-01/2026-08-02
  ldp dbt %s models/ --window yesterday --select tag:daily`, command, command),
		Args: exactArgs(1, "name the dbt project folder, for example: ldp dbt "+command+" models/"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.win, "window", "", "the window: a date (that day in the spec's zone), START/END, yesterday, last-week or last-month")
	cmd.Flags().StringVar(&o.tz, "timezone", "UTC", "the time zone the window is read in")
	cmd.Flags().StringSliceVar(&o.sel, "select", nil, "dbt's --select")
	cmd.Flags().StringSliceVar(&o.excl, "exclude", nil, "dbt's --exclude")
	cmd.Flags().StringVar(&o.bin, "dbt-bin", "dbt", "the dbt program to run")
	addOutput(cmd, &o.out, false)
	return cmd
}
