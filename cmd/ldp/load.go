package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/specs"
)

// loadPipeline validates a spec file as ldp validate does and returns its Pipeline.
func loadPipeline(path string) (*v1.Pipeline, error) {
	obj, err := specs.Load(path)
	if err != nil {
		return nil, err
	}
	p, ok := obj.(*v1.Pipeline)
	if !ok {
		return nil, ldperr.Configf(path, "is a %s; this command takes a Pipeline (a dataset config)", obj.ObjectKind())
	}
	return p, nil
}

// loadTargetTable validates a spec and loads its Iceberg target table; what names the
// command's subject in the error for a file target ("snapshots", "commits").
func loadTargetTable(ctx context.Context, path, what string) (*v1.Pipeline, *table.Table, error) {
	p, err := loadPipeline(path)
	if err != nil {
		return nil, nil, err
	}
	if !p.IsIceberg() {
		return nil, nil, ldperr.Configf(path, "writes a %s file, which has no %s; %s are for ICEBERG targets", p.Metadata.Target.Format, what, what)
	}
	cat, err := lake.OpenReadOnly(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return nil, nil, err
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, lake.RefOf(p.Metadata.Target))
	return p, tbl, err
}

// sinksFor returns a pipeline's event sinks: its ledger and the sinks its spec declares.
func sinksFor(p *v1.Pipeline, getenv func(string) string) []ledger.Sink {
	var specs []ledger.SinkSpec
	if o := p.Metadata.Observability; o != nil {
		for _, s := range o.Sinks {
			ss := ledger.SinkSpec{Type: s.Type, Path: s.Path, URL: s.URL, APIKeyEnv: s.APIKeyEnv, Namespace: s.Namespace}
			if s.TimeoutS != nil {
				ss.TimeoutS = *s.TimeoutS
			}
			specs = append(specs, ss)
		}
	}
	return ledger.SinksFor(p.Path, specs, version, getenv)
}

// writeJSON prints v as indented JSON: the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
