package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/dbt"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/reconcile"
)

func init() { Register(v1.TaskDbt, dbtKind{}) }

// dbtKind runs a dbt project for the window of the run (as ldp dbt build does).
type dbtKind struct{}

// DbtOutput is what a dbt build did: its fingerprint and variables, dbt's outcome, the models
// it published.
type DbtOutput struct {
	Skip       bool           `json:"-"`
	Reason     string         `json:"reason,omitempty"`
	Print      string         `json:"fingerprint,omitempty"`
	Vars       map[string]any `json:"vars,omitempty"`
	DbtOutcome string         `json:"outcome,omitempty"`
	Published  []string       `json:"published,omitempty"`
}

// Skipped: the last build of the window succeeded with the same fingerprint.
func (o DbtOutput) Skipped() bool { return o.Skip }

// Status is how a build ended, given its error, as ldp dbt build|test says it: skipped (the
// window's last build succeeded with the same fingerprint), blocked_quality (a data gate held
// it back: dbt's data tests, or a published model's checks), failed, or succeeded.
func (o DbtOutput) Status(err error) string {
	switch {
	case o.Skipped():
		return string(v1.Skipped)
	case err != nil && ldperr.IsDataGate(err):
		return dbt.BlockedQuality
	case err != nil:
		return string(v1.Failed)
	}
	return string(v1.Succeeded)
}

// Fingerprint is the build's: its project, command, selection and variables.
func (o DbtOutput) Fingerprint() string { return o.Print }

// Evidence: nothing on main vouches for a dbt build, only its last run.
func (dbtKind) Evidence(Spec) reconcile.Evidence { return reconcile.ByLastRun }

// Reads are the tables the project reads (the sources of its ldp_dbt.json), as target
// identities; none when the project cannot be read (the plan reports that itself).
func (dbtKind) Reads(s Spec) []string {
	cfg, err := dbt.Load(filepath.Join(filepath.Dir(s.File), s.Task.Dbt.Project))
	if err != nil {
		return nil
	}
	var out []string
	for _, views := range cfg.Sources {
		for _, ref := range views {
			ns, name, _ := strings.Cut(ref, ".")
			out = append(out, "iceberg:"+ns+"."+name)
		}
	}
	sort.Strings(out)
	return append(pipelineReads(s.Pipeline), out...)
}

// DbtPlan is what the plan shows of a dbt task for a window: what decides whether a build runs
// again.
type DbtPlan struct {
	Fingerprint string         `json:"fingerprint,omitempty"`
	Vars        map[string]any `json:"vars,omitempty"`
}

// Line: the fingerprint's first 12 characters and the variables.
func (p DbtPlan) Line() string {
	vars, err := json.Marshal(p.Vars)
	if err != nil {
		vars = []byte(fmt.Sprint(p.Vars))
	}
	return fmt.Sprintf("fingerprint %s vars %s", p.Fingerprint[:12], vars)
}

// Plan checks the task's project and finds dbt, without running anything.
func (dbtKind) Plan(_ context.Context, s Spec, w v1.LogicalWindow) (Plan, error) {
	d := s.Task.Dbt
	project := filepath.Join(filepath.Dir(s.File), d.Project)
	cfg, err := dbt.Load(project)
	if err != nil {
		return Plan{}, err
	}
	vars := dbtVars(d.Vars, w)
	cmd := d.Command
	if cmd == "" {
		cmd = v1.DefaultDbtCommand
	}
	fp, err := dbt.Fingerprint(dbt.Task{Project: project, Command: cmd, Select: d.Select, Exclude: d.Exclude, Vars: vars}, cfg)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Detail: DbtPlan{Fingerprint: fp, Vars: vars}}
	bin := d.DbtBin
	if bin == "" {
		bin = "dbt"
	}
	if _, err := exec.LookPath(bin); err != nil {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("task %s: dbt_bin %q is not on the PATH: the task fails until it is", s.Task.ID, bin))
	}
	return plan, nil
}

func (dbtKind) Run(ctx context.Context, tc TaskContext) (Output, error) {
	d := tc.Task.Dbt
	skipUnchanged := d.SkipUnchanged == nil || *d.SkipUnchanged
	b := DbtBuild{Project: filepath.Join(filepath.Dir(tc.File), d.Project), Command: d.Command, Select: d.Select,
		Exclude: d.Exclude, Vars: d.Vars, Bin: d.DbtBin, Window: tc.Window, RunID: tc.RunID, Attempt: tc.Attempt,
		Ledger: tc.Ledger, Environment: tc.Environment, StaleConsumed: tc.StaleConsumed}
	if skipUnchanged && !tc.UpstreamWrote && !tc.Replace {
		b.LastBuild = tc.LastFingerprint
	}
	return BuildDbt(ctx, tc.Env, b)
}

// DbtBuild is one run of a dbt project for a window.
type DbtBuild struct {
	Project, Command, Bin string
	Select, Exclude       []string
	Vars                  map[string]any
	Window                v1.LogicalWindow
	RunID                 string
	Attempt               int
	// Ledger is where the published models' events go.
	Ledger string
	// Environment, when set, is where the sources are read from (its branch of a table it has
	// written, main elsewhere) and the models published (docs/environments.md).
	Environment string
	// LastBuild, when set, is the fingerprint of the window's last build that succeeded: a
	// build with the same fingerprint is skipped.
	LastBuild func() string
	// StaleConsumed, on the re-run of a stale window (ldp apply --stale), are the upstream
	// keys the run consumes: the models publish under a key made with them, as a pipeline's
	// stale re-run does (TaskContext.StaleConsumed).
	StaleConsumed []string
}

// modelKey is the key a model of build b with fingerprint fp publishes under: a new build of
// a window (a changed project) publishes again, the same build is found on main and skipped;
// a stale re-run's key is also made with the upstream keys it consumes, since the build is
// the same but its sources are not, and under the build's own key it would be skipped as
// done without the new rows (issue 32).
func modelKey(b DbtBuild, p *v1.Pipeline, fp string) string {
	key := p.IdempotencyKey(b.Window)
	if len(b.StaleConsumed) > 0 {
		return v1.StaleReplaceKey(key, fp, b.StaleConsumed)
	}
	return v1.ReplaceKey(key, fp)
}

// BuildDbt registers the project's sources, runs dbt with the window as variables, and
// publishes the models marked ldp_publish through the quality gate and the staged commit. It
// returns what it did (whether it skipped an unchanged build), and an error that is a data
// gate when only tests (or a published model's checks) failed.
func BuildDbt(ctx context.Context, env Env, b DbtBuild) (DbtOutput, error) {
	cfg, err := dbt.Load(b.Project)
	if err != nil {
		return DbtOutput{}, err
	}
	if b.Command == "" {
		b.Command = v1.DefaultDbtCommand
	}
	vars := dbtVars(b.Vars, b.Window)
	t := dbt.Task{Project: b.Project, Command: b.Command, Select: b.Select, Exclude: b.Exclude, Vars: vars, Bin: b.Bin}
	fp, err := dbt.Fingerprint(t, cfg)
	if err != nil {
		return DbtOutput{}, err
	}
	detail := DbtOutput{Print: fp, Vars: vars}
	if b.LastBuild != nil && b.LastBuild() == fp {
		detail.Skip = true
		detail.Reason = "the last build of this window succeeded with the same project, command, selection and variables"
		return detail, nil
	}
	if err := dbt.RegisterSources(ctx, b.Project, cfg, b.Environment); err != nil {
		return detail, err
	}
	if err := dbt.Exec(ctx, t, env.Log); err != nil {
		return detail, err
	}
	res, err := dbt.ReadResult(b.Project)
	if err != nil {
		return detail, err
	}
	detail.DbtOutcome = res.Outcome
	switch res.Outcome {
	case dbt.Failed:
		return detail, errors.New(res.Reason)
	case dbt.BlockedQuality:
		return detail, &dbt.Gate{Reason: res.Reason}
	}
	if b.Command != "build" {
		return detail, nil // dbt test publishes nothing
	}
	var published []string
	for _, n := range res.Nodes {
		if n.ResourceType != "model" || !n.Publish || n.Status != "success" {
			continue
		}
		p := modelPipeline(b.Project, cfg, n)
		opts := pipeline.Options{Window: b.Window, RunID: b.RunID + "/" + n.Name, Attempt: b.Attempt, Log: env.Log, Hook: env.Hook,
			Sinks: []ledger.Sink{&ledger.FileSink{File: ledger.File{Path: b.Ledger}}}, Version: env.Version, Warn: env.Warn, Now: env.Now, Env: b.Environment,
			Key: modelKey(b, p, fp)}
		if _, err := pipeline.Run(ctx, p, opts); err != nil {
			if ldperr.IsDataGate(err) {
				detail.Published = published
				return detail, &dbt.Gate{Reason: fmt.Sprintf("model %s: %v", n.Name, err)}
			}
			return detail, fmt.Errorf("publish model %s: %w", n.Name, err)
		}
		published = append(published, p.TargetIdentity())
	}
	detail.Published = published
	return detail, nil
}

// dbtVars are the task's variables with the window's bounds as window_start and window_end.
func dbtVars(own map[string]any, w v1.LogicalWindow) map[string]any {
	vars := map[string]any{}
	for k, v := range own {
		vars[k] = v
	}
	if !w.IsZero() {
		vars["window_start"] = v1.FormatInstant(w.Start)
		vars["window_end"] = v1.FormatInstant(w.End)
	}
	return vars
}

// modelPipeline is the pipeline that publishes a dbt model: its table in dbt's DuckDB file to
// an Iceberg table of the model's alias, a table model by overwrite, an incremental one with a
// unique_key by upsert.
func modelPipeline(project string, cfg *dbt.Config, n dbt.Node) *v1.Pipeline {
	c := cfg.Catalog
	if cfg.Namespace != "" {
		c.Namespace = cfg.Namespace
	}
	mode, join := v1.WriteOverwrite, []string(nil)
	if n.Materialized == "incremental" && len(n.UniqueKey) > 0 {
		mode, join = v1.WriteUpsert, n.UniqueKey
	}
	p := &v1.Pipeline{APIVersion: v1.APIVersion, Kind: v1.KindPipeline, Identifier: "dbt." + filepath.Base(project) + "." + n.Name,
		Metadata: v1.PipelineMetadata{
			Source:  v1.Source{Format: pipeline.DBT, Path: cfg.DuckDB, Name: n.Schema + "." + n.Alias},
			Target:  v1.Target{Name: n.Alias, Format: v1.FormatIceberg, Catalog: &c, WriteMode: mode, JoinCols: join},
			Quality: n.Quality,
		}, Path: filepath.Join(project, v1.DbtConfigFile), BaseDir: project}
	p.Default()
	return p
}
