package tasks

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/reconcile"
)

func init() { Register(v1.TaskSQL, sqlKind{}) }

// sqlKind runs a sql task: the pipeline SQLPipeline makes of it, keyed, checked and published
// as a load is. Its output is a load's (PublishOutput).
type sqlKind struct{}

func (sqlKind) Evidence(s Spec) reconcile.Evidence { return publishEvidence(s) }

func (sqlKind) Reads(s Spec) []string { return pipelineReads(s.Pipeline) }

// Plan binds the query against the columns of its inputs (nothing is read), so a typo fails
// at plan time; an input with no table yet is a warning.
func (sqlKind) Plan(ctx context.Context, s Spec, w v1.LogicalWindow) (Plan, error) {
	missing, err := pipeline.CheckModel(ctx, s.Pipeline, w)
	if err != nil || len(missing) == 0 {
		return Plan{}, err
	}
	return Plan{Warnings: []string{fmt.Sprintf("task %s: the query is checked when it runs: input %s has no table yet", s.Task.ID, strings.Join(missing, ", "))}}, nil
}

// Load makes the task's pipeline of its query, inputs and target.
func (sqlKind) Load(fsys fs.FS, wf *v1.Workflow, path string, t v1.Task) (*v1.Pipeline, bool, error) {
	p, err := SQLPipeline(fsys, wf, path, t)
	return p, false, err
}

// RenameConfigs: an input is a config's path, or namespace.table in the target's catalog.
func (sqlKind) RenameConfigs(task map[string]any, ref func(string) string) {
	m, _ := task[string(v1.TaskSQL)].(map[string]any)
	inputs, _ := m["inputs"].(map[string]any)
	for view, v := range inputs {
		if s, ok := v.(string); ok && !isTableName(s) {
			inputs[view] = ref(s)
		}
	}
}

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$`)

func isTableName(s string) bool {
	return tableName.MatchString(s) && !strings.HasSuffix(s, ".json") && !strings.HasSuffix(s, ".yaml") && !strings.HasSuffix(s, ".yml")
}

func (sqlKind) Run(ctx context.Context, tc TaskContext) (Output, error) { return publish(ctx, tc) }

// SQLPipeline is the pipeline a sql task runs as: its source is the query over its inputs
// (format SQL), its identity the workflow's and the task's, its window the workflow's with the
// task's window column. From there a model is keyed, checked, published, skipped, retried,
// backfilled and replaced exactly as a load is. Its query file and inputs are read from fsys
// (the operating system's files when nil).
func SQLPipeline(fsys fs.FS, wf *v1.Workflow, path string, t v1.Task) (*v1.Pipeline, error) {
	fsys = orOS(fsys)
	base := filepath.Dir(path)
	st := t.SQL
	query := st.Query
	if st.QueryFile != "" {
		b, err := fs.ReadFile(fsys, filepath.Join(base, st.QueryFile))
		if err != nil {
			return nil, ldperr.Configf(path, "task %s: cannot read query_file %s: %v", t.ID, st.QueryFile, err)
		}
		query = string(b)
	}
	inputs := map[string]v1.TableRef{}
	for name, ref := range st.Inputs {
		in, err := sqlInput(fsys, base, st.Target.Catalog, ref)
		if err != nil {
			return nil, ldperr.Configf(path, "task %s: input %s: %v", t.ID, name, err)
		}
		inputs[name] = in
	}
	var win *v1.Window
	if w := wf.Metadata.Window; w != nil && !w.None {
		c := *w
		c.Column = st.WindowColumn
		win = &c
	}
	target := st.Target
	if target.Catalog != nil {
		c := *target.Catalog
		target.Catalog = &c
	}
	p := &v1.Pipeline{APIVersion: v1.APIVersion, Kind: v1.KindPipeline, Identifier: wf.Identifier + "." + t.ID,
		Metadata: v1.PipelineMetadata{
			Source:  v1.Source{Name: t.ID, Format: pipeline.SQL, Path: st.QueryFile, Query: query, Inputs: inputs},
			Target:  target,
			Quality: st.Quality,
			Window:  win,
		}, Path: path, BaseDir: base}
	p.Default()
	return p, nil
}

// orOS is fsys, or the operating system's files when it is nil.
func orOS(fsys fs.FS) fs.FS {
	if fsys == nil {
		return specs.OS
	}
	return fsys
}

// sqlInput resolves an input: a dataset config names its Iceberg target; "namespace.table"
// is a table of the model's own catalog. A warehouse path is kept relative to the workflow's
// folder, so the spec hash does not depend on where the project is checked out.
func sqlInput(fsys fs.FS, base string, own *v1.Catalog, ref string) (v1.TableRef, error) {
	if specs.IsSpecPath(ref) {
		p, err := specs.ReadPipelineFS(fsys, filepath.Join(base, ref))
		if err != nil {
			return v1.TableRef{}, err
		}
		p.Default()
		if !p.IsIceberg() || p.Metadata.Target.Catalog == nil {
			return v1.TableRef{}, ldperr.Configf(p.Path, "writes a %s file, not an Iceberg table a query can read", p.Metadata.Target.Format)
		}
		c := *p.Metadata.Target.Catalog
		if rel, err := filepath.Rel(base, lake.WarehouseDir(&c, p.BaseDir)); err == nil {
			c.WarehousePath = rel
		}
		return v1.TableRef{Catalog: &c, Name: p.Metadata.Target.Name}, nil
	}
	ns, name, ok := strings.Cut(ref, ".")
	if !ok || own == nil {
		return v1.TableRef{}, ldperr.Configf("", "%q is neither a dataset config (.json, .yaml) nor namespace.table", ref)
	}
	c := *own
	c.Namespace = ns
	return v1.TableRef{Catalog: &c, Name: name}, nil
}
