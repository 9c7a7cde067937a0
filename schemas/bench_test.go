package schemas

import (
	"os"
	"testing"
)

// BenchmarkValidate is the cost of checking one spec: what ldp validate, diff and every tick
// pay per file.
func BenchmarkValidate(b *testing.B) {
	data, err := os.ReadFile("../config/samples/nyc_taxi.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r := Validate(data, "nyc_taxi.json"); len(r.Problems) > 0 {
			b.Fatal(r.Problems)
		}
	}
}
