package tasks

import (
	"context"
	"errors"
	"io/fs"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/maintain"
	"github.com/ldp-dev/ldp/reconcile"
)

func init() { Register(v1.TaskMaintain, maintainKind{}) }

// maintainKind runs ldp maintain on the table of a dataset config. It has no key: it runs
// again every time its window runs.
type maintainKind struct{}

// MaintainOutput is what a maintenance did (or, unless applied, would do).
type MaintainOutput struct {
	Skip        bool   `json:"-"`
	Reason      string `json:"reason,omitempty"`
	Applied     bool   `json:"applied,omitempty"`
	Expire      int    `json:"expire,omitempty"`
	Orphans     int    `json:"orphans,omitempty"`
	OrphanBytes int64  `json:"orphan_bytes,omitempty"`
}

// Skipped: the table does not exist yet.
func (o MaintainOutput) Skipped() bool { return o.Skip }

// OptionsOf turns a maintain task's keys into maintenance options.
func OptionsOf(m *v1.MaintainTask) maintain.Options {
	o := maintain.Options{ExpireDays: m.Expire, Orphans: m.Orphans, Apply: m.Apply}
	if m.RetainLast != nil {
		o.RetainLast = *m.RetainLast
	}
	o.OrphanAgeHours = m.OrphanAgeHours
	o.Force = m.Force
	if m.KeepMetadataVersions != nil {
		o.KeepMetadataVersions = *m.KeepMetadataVersions
	}
	return o
}

// Evidence: maintenance is never done for a window; it runs whenever its window does and
// decides nothing of the window's state.
func (maintainKind) Evidence(Spec) reconcile.Evidence { return reconcile.Nothing }

// Reads: what the dataset config it maintains reads (as every task with a pipeline).
func (maintainKind) Reads(s Spec) []string { return pipelineReads(s.Pipeline) }

// Load reads the dataset config whose table the task maintains.
func (maintainKind) Load(fsys fs.FS, _ *v1.Workflow, path string, t v1.Task) (*v1.Pipeline, bool, error) {
	return readConfig(fsys, path, t.Maintain.Config)
}

// RenameConfigs: maintain.config is the config's path.
func (maintainKind) RenameConfigs(task map[string]any, ref func(string) string) {
	if m, ok := task[string(v1.TaskMaintain)].(map[string]any); ok {
		if s, ok := m["config"].(string); ok {
			m["config"] = ref(s)
		}
	}
}

func (maintainKind) Plan(context.Context, Spec, v1.LogicalWindow) (Plan, error) { return Plan{}, nil }

func (maintainKind) Run(ctx context.Context, tc TaskContext) (Output, error) {
	p := tc.Pipeline
	if p == nil || !p.IsIceberg() {
		return nil, ldperr.Configf(tc.File, "task %s: maintain needs a dataset config with an ICEBERG target", tc.Task.ID)
	}
	notYet := MaintainOutput{Skip: true, Reason: "the table does not exist yet"}
	cat, err := lake.OpenExisting(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return nil, err
	}
	if cat == nil {
		return notYet, nil
	}
	defer cat.Close()
	rep, err := maintain.Run(ctx, cat, lake.RefOf(p.Metadata.Target), OptionsOf(tc.Task.Maintain))
	var nf *lake.NotFoundError
	if errors.As(err, &nf) {
		return notYet, nil
	}
	if err != nil {
		return nil, err
	}
	return MaintainOutput{Applied: rep.Applied, Expire: len(rep.Expire), Orphans: len(rep.Orphans), OrphanBytes: rep.OrphanBytes}, nil
}
