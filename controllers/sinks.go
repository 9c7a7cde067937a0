package controllers

import (
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/specs"
)

// LoadPipeline validates a spec file as ldp validate does and returns its Pipeline.
func LoadPipeline(path string) (*v1.Pipeline, error) { return specs.LoadPipeline(path) }

// SinksFor returns a pipeline's event sinks: its ledger and the sinks its spec declares.
func SinksFor(p *v1.Pipeline, version string, getenv func(string) string) []ledger.Sink {
	var ss []ledger.SinkSpec
	if o := p.Metadata.Observability; o != nil {
		for _, s := range o.Sinks {
			spec := ledger.SinkSpec{Type: s.Type, Path: s.Path, URL: s.URL, APIKeyEnv: s.APIKeyEnv, Namespace: s.Namespace}
			if s.TimeoutS != nil {
				spec.TimeoutS = *s.TimeoutS
			}
			ss = append(ss, spec)
		}
	}
	return ledger.SinksFor(p.Path, ss, version, getenv)
}

// FlushEvents waits, at most a sink's timeout, for the events still on their way to the
// OpenLineage endpoints, and returns the warnings of those that failed: what a command does
// before it exits.
func FlushEvents() []string { return ledger.Flush() }
