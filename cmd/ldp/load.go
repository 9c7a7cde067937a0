package main

import (
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
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
