package controllers

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/sources"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/schemas"
)

// The pipeline-level verbs (ldp run, maintain, catalog) go through these, so that the command
// line drives the data plane only through controllers.

// PipelineRun is how one pipeline run goes (the flags of ldp run).
type PipelineRun struct {
	Mode        v1.WriteMode
	Window      v1.LogicalWindow
	RunID       string
	Attempt     int
	Key         string
	LockTimeout time.Duration
	// Log receives the checks' lines and warnings; Getenv the environment the sinks read.
	Log     io.Writer
	Getenv  func(string) string
	Version string
	// Hook is the publish's test seam (LDP_FAULT).
	Hook func(string)
	// Env publishes into that environment and reads its inputs from it (pipeline.Options.Env).
	Env string
}

// RunPipeline runs p once, with its sinks: published exactly once with a window or a run id.
func RunPipeline(ctx context.Context, p *v1.Pipeline, o PipelineRun) (*v1.PipelineResult, error) {
	opts := pipeline.Options{Mode: o.Mode, Window: o.Window, Log: o.Log, RunID: o.RunID, Attempt: o.Attempt, Key: o.Key, Hook: o.Hook, Env: o.Env,
		LockTimeout: o.LockTimeout, Sinks: SinksFor(p, o.Version, o.Getenv), Version: o.Version,
		Warn: func(m string) { fmt.Fprintln(o.Log, "warning: "+m) }}
	return pipeline.Run(ctx, p, opts)
}

// PipelineWarnings are what a run of p for w should say before it starts.
func PipelineWarnings(p *v1.Pipeline, w v1.LogicalWindow) []string { return pipeline.Warnings(p, w) }

// Routes lists the routes a Pipeline can take (source format -> target format), sorted.
func Routes() []string {
	var out []string
	for _, r := range pipeline.Routes() {
		out = append(out, r.String())
	}
	out = append(out, sources.EngineRoutes()...)
	sort.Strings(out)
	return out
}

// PlanPipeline plans a run of p for w without running it.
func PlanPipeline(p *v1.Pipeline, w v1.LogicalWindow) (*v1.PipelinePlan, error) {
	return pipeline.MakePlan(p, w)
}

// ParseWindow reads a --window value (START/END or a shortcut) in loc, counting shortcuts
// from now.
func ParseWindow(s string, loc *time.Location, now time.Time) (v1.LogicalWindow, error) {
	return window.Parse(s, loc, now)
}

// PipelineLocation is the time zone of a Pipeline's windows.
func PipelineLocation(p *v1.Pipeline) (*time.Location, error) {
	ws, err := window.SpecOf(p.Metadata.Window)
	return ws.Location, err
}

// DescribeWindow says a window in UTC and in loc.
func DescribeWindow(w v1.LogicalWindow, loc *time.Location) string { return window.Describe(w, loc) }

// LedgerPath finds the ledger a target means: a folder's, a spec's or workflow's (beside it),
// or a ledger file itself.
func LedgerPath(target string) (string, error) {
	info, err := os.Stat(target)
	if err != nil {
		return "", err
	}
	switch {
	case info.IsDir():
		return filepath.Join(target, ".ldp", "events.jsonl"), nil
	case strings.HasSuffix(target, ".jsonl"):
		return target, nil
	}
	return ledger.PathFor(target), nil
}

// RunsOf names the pipelines whose runs belong to target, a spec's own or a workflow's
// tasks', and the zone of its windows; nil names for a folder or a ledger file, whose every
// run is its own. A ledger holds the runs of every spec in its folder, so a spec's history is
// the ledger filtered by these.
func RunsOf(target string) ([]string, *time.Location, error) {
	if info, err := os.Stat(target); err != nil || info.IsDir() || strings.HasSuffix(target, ".jsonl") {
		return nil, nil, err
	}
	wf, err := LoadWorkflow(target)
	if err != nil {
		return nil, nil, err
	}
	names := []string{wf.Name}
	for _, p := range wf.Pipelines {
		names = append(names, p.Identifier)
	}
	return names, wf.Window.Location, nil
}

// ReadLedger reads the ledger at path, with a warning for each line it had to pass over.
func ReadLedger(path string) ([]v1.LedgerEvent, []string, error) { return ledger.Read(path) }

// Runs folds a ledger's events into runs, newest first: the last attempt of each, or every
// attempt.
func Runs(events []v1.LedgerEvent, attempts bool) []v1.RunSummary {
	return ledger.Summarize(events, attempts)
}

// Validate discovers and checks the spec files under paths, each once, following workflow
// tasks into the files they name.
func Validate(paths []string) (*schemas.Report, error) { return specs.Check(paths) }

// DbtRun is a run of a dbt project by itself (the flags of ldp dbt build|test): its first
// attempt, as a dbt task runs it, with its events in the project's own ledger (dbtLedger).
type DbtRun struct {
	Project, Command, Bin string
	Select, Exclude       []string
	Window                v1.LogicalWindow
	RunID                 string
}

// BuildDbt runs a dbt project by itself for a window, with the runner's log, clock and hook;
// the output's Status says how it ended.
func (r *Runner) BuildDbt(ctx context.Context, b DbtRun) (tasks.DbtOutput, error) {
	r.defaults()
	return tasks.BuildDbt(ctx, r.env(), tasks.DbtBuild{Project: b.Project, Command: b.Command, Bin: b.Bin, Select: b.Select, Exclude: b.Exclude,
		Window: b.Window, RunID: b.RunID, Attempt: 1, Ledger: dbtLedger(b.Project)})
}

// dbtLedger is the ledger of a dbt project run by itself (ldp dbt build|test).
func dbtLedger(project string) string {
	return ledger.PathFor(filepath.Join(project, v1.DbtConfigFile))
}

// DuckDBVersion is the version of the DuckDB ldp embeds.
func DuckDBVersion() string { return engine.Version() }
