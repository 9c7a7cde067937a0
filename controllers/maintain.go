package controllers

import (
	"context"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/maintain"
)

func init() { Register("maintain", maintainKind{}) }

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

func (maintainKind) Run(ctx context.Context, tc TaskContext) (bool, map[string]any, error) {
	p := tc.Workflow.Pipelines[tc.Task.ID]
	if p == nil || !p.IsIceberg() {
		return false, nil, ldperr.Configf(tc.Workflow.File, "task %s: maintain needs a dataset config with an ICEBERG target", tc.Task.ID)
	}
	cat, err := lake.OpenExisting(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return false, nil, err
	}
	if cat == nil {
		return true, map[string]any{"reason": "the table does not exist yet"}, nil
	}
	defer cat.Close()
	rep, err := maintain.Run(ctx, cat, lake.RefOf(p.Metadata.Target), OptionsOf(tc.Task.Maintain))
	var nf *lake.NotFoundError
	if asNotFound(err, &nf) {
		return true, map[string]any{"reason": "the table does not exist yet"}, nil
	}
	if err != nil {
		return false, nil, err
	}
	return false, map[string]any{"applied": rep.Applied, "expire": len(rep.Expire), "orphans": len(rep.Orphans), "orphan_bytes": rep.OrphanBytes}, nil
}
