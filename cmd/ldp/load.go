package main

import (
	"encoding/json"
	"io"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

// loadPipeline validates a spec file as ldp validate does and returns its Pipeline.
func loadPipeline(path string) (*v1.Pipeline, error) { return controllers.LoadPipeline(path) }

// writeJSON prints v as indented JSON: the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
