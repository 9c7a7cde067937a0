package controllers

import (
	"context"
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

// Evidence: nothing on main vouches for a dbt build, only its last run.
func (dbtKind) Evidence(*Object, v1.Task) reconcile.Evidence { return reconcile.ByLastRun }

func (dbtKind) Run(ctx context.Context, tc TaskContext) (TaskOutput, error) {
	d := tc.Task.Dbt
	skipUnchanged := d.SkipUnchanged == nil || *d.SkipUnchanged
	b := DbtBuild{Project: filepath.Join(filepath.Dir(tc.Workflow.File), d.Project), Command: d.Command, Select: d.Select,
		Exclude: d.Exclude, Vars: d.Vars, Bin: d.DbtBin, Window: tc.Window, RunID: tc.RunID, Attempt: tc.Attempt,
		Workflow: tc.Workflow.Name, Ledger: tc.Workflow.Ledger}
	if skipUnchanged && !tc.UpstreamWrote && !tc.Replace {
		b.SkipIfBuilt = tc.Task.ID
	}
	return tc.Runner.BuildDbt(ctx, b)
}

// DbtBuild is one run of a dbt project for a window.
type DbtBuild struct {
	Project, Command, Bin string
	Select, Exclude       []string
	Vars                  map[string]any
	Window                v1.LogicalWindow
	RunID                 string
	Attempt               int
	// Workflow and Ledger find the last build of the window; SkipIfBuilt, the task id, asks
	// to skip when that build succeeded with the same fingerprint.
	Workflow, Ledger, SkipIfBuilt string
}

// BuildDbt registers the project's sources, runs dbt with the window as variables, and
// publishes the models marked ldp_publish through the quality gate and the staged commit. It
// returns whether it skipped an unchanged build, what it did, and an error that is a data gate
// when only tests (or a published model's checks) failed.
func (r *Runner) BuildDbt(ctx context.Context, b DbtBuild) (TaskOutput, error) {
	r.defaults()
	cfg, err := dbt.Load(b.Project)
	if err != nil {
		return TaskOutput{}, err
	}
	if b.Command == "" {
		b.Command = v1.DefaultDbtCommand
	}
	vars := dbtVars(b.Vars, b.Window)
	t := dbt.Task{Project: b.Project, Command: b.Command, Select: b.Select, Exclude: b.Exclude, Vars: vars, Bin: b.Bin}
	fp, err := dbt.Fingerprint(t, cfg)
	if err != nil {
		return TaskOutput{}, err
	}
	detail := TaskOutput{Fingerprint: fp, Vars: vars}
	if b.SkipIfBuilt != "" && lastBuild(b.Ledger, b.Workflow, b.Window.String(), b.SkipIfBuilt) == fp {
		detail.Skipped = true
		detail.Reason = "the last build of this window succeeded with the same project, command, selection and variables"
		return detail, nil
	}
	if err := dbt.RegisterSources(ctx, b.Project, cfg); err != nil {
		return detail, err
	}
	if err := dbt.Exec(ctx, t, r.Log); err != nil {
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
		opts := pipeline.Options{Window: b.Window, RunID: b.RunID + "/" + n.Name, Attempt: b.Attempt, Log: r.Log, Hook: r.Hook,
			Sinks: []ledger.Sink{&ledger.FileSink{File: ledger.File{Path: b.Ledger}}}, Version: r.Version, Warn: r.warn, Now: r.Now,
			// A new build of a window (a changed project) publishes again; the same build is
			// found on main and skipped.
			Key: v1.ReplaceKey(p.IdempotencyKey(b.Window), fp)}
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

// DbtPlan is what the plan shows of a dbt task for a window.
type DbtPlan struct {
	Fingerprint string
	Vars        map[string]any
	Warnings    []string
}

// PlanDbt checks a dbt task's project and finds dbt, without running anything.
func PlanDbt(wf *Object, t v1.Task, w v1.LogicalWindow) (*DbtPlan, error) {
	d := t.Dbt
	project := filepath.Join(filepath.Dir(wf.File), d.Project)
	cfg, err := dbt.Load(project)
	if err != nil {
		return nil, err
	}
	vars := dbtVars(d.Vars, w)
	cmd := d.Command
	if cmd == "" {
		cmd = v1.DefaultDbtCommand
	}
	fp, err := dbt.Fingerprint(dbt.Task{Project: project, Command: cmd, Select: d.Select, Exclude: d.Exclude, Vars: vars}, cfg)
	if err != nil {
		return nil, err
	}
	plan := &DbtPlan{Fingerprint: fp, Vars: vars}
	bin := d.DbtBin
	if bin == "" {
		bin = "dbt"
	}
	if _, err := exec.LookPath(bin); err != nil {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("task %s: dbt_bin %q is not on the PATH: the task fails until it is", t.ID, bin))
	}
	return plan, nil
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

// dbtReads are the tables a dbt task's project reads (the sources of its ldp_dbt.json), as
// target identities; none when the project cannot be read (the plan reports that itself).
func dbtReads(wf *Object, t v1.Task) []string {
	cfg, err := dbt.Load(filepath.Join(filepath.Dir(wf.File), t.Dbt.Project))
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
	return out
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
		}, Path: filepath.Join(project, dbt.ConfigFile), BaseDir: project}
	p.Default()
	return p
}

// lastBuild is the fingerprint of the last build of task for window in the ledger, when it
// succeeded; "" otherwise.
func lastBuild(path, workflow, window, task string) string {
	st, err := new(Observer).ledger(path)
	if err != nil {
		return ""
	}
	return st.fold.lastBuild(workflow, window, task)
}
