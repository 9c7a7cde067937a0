package schemas_test

import (
	"os"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/schemas"
)

// FuzzValidate feeds Load and Validate arbitrary bytes, seeded with the samples and the
// invalid set. Neither may panic; every problem must have a position and a message; and a
// document Validate accepts must load, with a spec hash.
func FuzzValidate(f *testing.F) {
	for _, dir := range []string{samplesDir, invalidDir} {
		for _, p := range specFiles(f, dir) {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) > 64<<10 {
				continue
			}
			f.Add(data, v1.IsYAML(p))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, isYAML bool) {
		name := "fuzz.json"
		if isYAML {
			name = "fuzz.yaml"
		}
		r := schemas.Validate(data, name)
		for _, p := range r.Problems {
			if p.File != name || p.Line < 1 || p.Column < 1 || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if len(r.Problems) > 0 || r.Kind == "" {
			return
		}
		// Decode only what Validate accepts: most mutated inputs are rejected, and a YAML
		// decode builds a CUE context of its own, which is most of an execution.
		obj, err := specs.Decode(data, name)
		if err != nil {
			t.Fatalf("Validate accepts the document but Decode fails: %v", err)
		}
		if p, ok := obj.(*v1.Pipeline); ok {
			if _, err := p.SpecHash(); err != nil {
				t.Fatalf("valid Pipeline has no spec hash: %v", err)
			}
		}
	})
}
