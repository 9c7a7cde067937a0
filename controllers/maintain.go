package controllers

import (
	"context"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/maintain"
	"github.com/ldp-dev/ldp/reconcile"
)

func init() { Register(v1.TaskMaintain, maintainKind{}) }

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

// maintainKind runs ldp maintain on the table of a dataset config. It has no key: it runs
// again every time its window runs.
type maintainKind struct{}

// Evidence: maintenance is never done for a window; it runs whenever its window does and
// decides nothing of the window's state.
func (maintainKind) Evidence(*Object, v1.Task) reconcile.Evidence { return reconcile.Nothing }

func (maintainKind) Run(ctx context.Context, tc TaskContext) (TaskOutput, error) {
	p := tc.Workflow.Pipelines[tc.Task.ID]
	if p == nil || !p.IsIceberg() {
		return TaskOutput{}, ldperr.Configf(tc.Workflow.File, "task %s: maintain needs a dataset config with an ICEBERG target", tc.Task.ID)
	}
	notYet := TaskOutput{Skipped: true, Reason: "the table does not exist yet"}
	cat, err := lake.OpenExisting(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return TaskOutput{}, err
	}
	if cat == nil {
		return notYet, nil
	}
	defer cat.Close()
	rep, err := maintain.Run(ctx, cat, lake.RefOf(p.Metadata.Target), OptionsOf(tc.Task.Maintain))
	var nf *lake.NotFoundError
	if asNotFound(err, &nf) {
		return notYet, nil
	}
	if err != nil {
		return TaskOutput{}, err
	}
	return TaskOutput{Applied: rep.Applied, Expire: len(rep.Expire), Orphans: len(rep.Orphans), OrphanBytes: rep.OrphanBytes}, nil
}
