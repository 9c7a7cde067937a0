package tables

import (
	"context"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/maintain"
	"github.com/ldp-dev/ldp/internal/specs"
)

// MaintainReport is what ldp maintain found and did.
type MaintainReport = maintain.Report

// Maintain runs maintenance on the table of the spec at path, as a maintain task m says.
func Maintain(ctx context.Context, path string, m *v1.MaintainTask) (*MaintainReport, error) {
	p, _, err := targetTable(ctx, path, "maintenance")
	if err != nil {
		return nil, err
	}
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	return maintain.Run(ctx, cat, lake.RefOf(p.Metadata.Target), tasks.OptionsOf(m))
}

// CatalogStep is one step of ldp catalog test.
type CatalogStep = lake.Step

// CatalogTest walks what ldp needs of the catalog of the spec at path (its target's, or its
// Iceberg source's): connect, list namespaces, create and drop a scratch table. It returns the
// catalog's identifier and the steps, each ok or what failed.
func CatalogTest(ctx context.Context, path string) (string, []CatalogStep, error) {
	p, err := specs.LoadPipeline(path)
	if err != nil {
		return "", nil, err
	}
	c := p.Metadata.Target.Catalog
	if c == nil {
		c = p.Metadata.Source.Catalog
	}
	if c == nil {
		return "", nil, ldperr.Configf(p.Path, "it reads and writes files (%s to %s): there is no catalog to test", p.Metadata.Source.Format, p.Metadata.Target.Format)
	}
	steps := []CatalogStep{{What: "connect to catalog " + c.Identifier}}
	cat, err := lake.Open(ctx, c, p.BaseDir)
	if err != nil {
		steps[0].Error = err.Error()
		return c.Identifier, steps, nil
	}
	defer cat.Close()
	return c.Identifier, append(steps, cat.Check(ctx, c.NamespaceName())...), nil
}

// CatalogRegister puts the target table of the spec at path back in its catalog (lake's
// Register), and says which table, in which catalog, at which metadata file.
func CatalogRegister(ctx context.Context, path, metadata string) (table, catalog, file string, err error) {
	p, err := specs.LoadPipeline(path)
	if err != nil {
		return "", "", "", err
	}
	if !p.IsIceberg() {
		return "", "", "", ldperr.Configf(p.Path, "its target is a %s file: there is no table to register", p.Metadata.Target.Format)
	}
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return "", "", "", err
	}
	defer cat.Close()
	ref := lake.RefOf(p.Metadata.Target)
	loc, err := cat.Register(ctx, ref, metadata)
	return ref.String(), cat.Identifier, loc, err
}

// ReindexResult is what ldp catalog reindex built.
type ReindexResult = lake.ReindexResult

// CatalogReindex builds the key index of the spec's target table (carrying a readable one
// forward, rebuilding a broken one from the summaries of its main branch) and attaches it to
// main's head, leaving the data as it is. It returns the table and what was built.
func CatalogReindex(ctx context.Context, path string) (string, *ReindexResult, error) {
	p, err := specs.LoadPipeline(path)
	if err != nil {
		return "", nil, err
	}
	if !p.IsIceberg() {
		return "", nil, ldperr.Configf(p.Path, "its target is a %s file: there is no table to index", p.Metadata.Target.Format)
	}
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return "", nil, err
	}
	defer cat.Close()
	ref := lake.RefOf(p.Metadata.Target)
	res, err := cat.Reindex(ctx, ref)
	return ref.String(), res, err
}
