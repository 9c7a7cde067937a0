package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/redact"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func newRootCmd(s *streams) *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:   "ldp",
		Short: "A lakehouse on your laptop that runs itself",
		Long: `ldp loads files into Apache Iceberg tables one time window at a time, checks the
data before it lands, and publishes each window exactly once.

Declare Pipelines and Workflows in spec files, then:
  ldp validate config/                 check every spec (CI gate; exit 1 on any problem)
  ldp run config/orders.json           load, check and write (exit 3 when a check holds data back)
  ldp query config/orders.json "SQL"   DuckDB SQL over the target table
  ldp schema pipeline                  print the JSON Schema of a spec, for your editor`,
		Version:       version,
		SilenceErrors: true, // Main prints every error once
		SilenceUsage:  true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			setupLogging(redact.Writer{W: s.Err}, verbose)
		},
	}
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetVersionTemplate(fmt.Sprintf("ldp {{.Version}} (%s %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH))
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug messages to stderr (and every check of a backfill or watch, not only the failed)")
	root.PersistentFlags().BoolP("quiet", "q", false, "backfill and watch print only errors: no progress, no check or window lines")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	root.AddCommand(
		newValidateCmd(s),
		newSchemaCmd(s),
		newRunCmd(s),
		newQueryCmd(s),
		newSnapshotsCmd(s),
		newPipelinesCmd(s),
		newPlanCmd(s),
		newCommitsCmd(s),
		newRunsCmd(s),
		newWorkflowCmd(s),
		newDiffCmd(s),
		newApplyCmd(s),
		newMaintainCmd(s),
		newDbtCmd(s),
		newCatalogCmd(s),
		newBackfillCmd(s),
		newScheduleCmd(s),
		newWatchCmd(s),
		newInitCmd(s),
		newStatusCmd(s),
		newUICmd(s),
		newControllerCmd(s),
		newExportCmd(s),
		newEnvCmd(s),
		newPromoteCmd(s),
		newDemoCmd(s),
		newVersionCmd(s),
	)
	registerCompletions(root)
	return root
}

// setupLogging routes slog and the standard logger (which libraries such as iceberg-go use) to
// stderr: warnings by default, everything with -v.
func setupLogging(w io.Writer, verbose bool) {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	slog.SetDefault(slog.New(h))
	log.SetOutput(&levelWriter{w: w, verbose: verbose})
	log.SetFlags(0)
}

// levelWriter keeps the chatter of the standard logger out of stderr unless -v is set.
type levelWriter struct {
	w       io.Writer
	verbose bool
}

func (l *levelWriter) Write(p []byte) (int, error) {
	if !l.verbose {
		return len(p), nil
	}
	return l.w.Write(p)
}

// chatter is how much a command that runs many windows says: -v every check, -q nothing
// but errors.
func chatter(cmd *cobra.Command) (verbose, quiet bool) {
	verbose, _ = cmd.Flags().GetBool("verbose")
	quiet, _ = cmd.Flags().GetBool("quiet")
	return verbose, quiet
}

// usageError is an error in how a command was called.
func usageError(cmd *cobra.Command, format string, args ...any) error {
	return &ldperr.ConfigError{Msg: fmt.Sprintf(format, args...) + fmt.Sprintf("\nRun '%s --help' for usage.", cmd.CommandPath())}
}

// oneOf checks a flag value against its choices.
func oneOf(cmd *cobra.Command, flag, value string, choices ...string) error {
	for _, c := range choices {
		if value == c {
			return nil
		}
	}
	return usageError(cmd, "--%s must be one of %s, got %q", flag, strings.Join(choices, ", "), value)
}

// verb is every command's options: its flags and arguments in a struct, checked by Validate
// (usage errors name the fix), then done by Run with the streams passed in. The logic lives in
// Run and controllers, never in a cobra closure.
type verb interface {
	Validate(cmd *cobra.Command, args []string) error
	Run(ctx context.Context, s *streams) error
}

// runVerb is the RunE of every command: validate the options, then run them.
func runVerb(o verb, s *streams) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Validate(cmd, args); err != nil {
			return err
		}
		return o.Run(cmd.Context(), s)
	}
}
