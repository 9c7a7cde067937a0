package specs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSpecHashSameMeaning: specs that mean the same, in JSON or YAML, with keys in any order,
// defaults written out or left to the loader, hash the same; a change of meaning changes it.
func TestSpecHashSameMeaning(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("a.json", `{"identifier": "orders", "who": "me",
	  "metadata": {"source": {"format": "csv", "path": "./data/../data/o.csv"},
	    "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop", "warehouse_path": "warehouse"}},
	    "quality": [{"check": "row_count", "min": 1}],
	    "window": {"size": "day", "column": "ts"}, "schedule": "5 2 * * *"}}`)
	same := []string{
		write("b.yaml", "kind: Pipeline\napiVersion: ldp/v1\nidentifier: orders\nwho: someone else\nmetadata:\n  schedule: '@daily'\n  window: {size: day, column: ts, timezone: UTC}\n  quality: {on_failure: fail, checks: [{check: row_count, min: 1}]}\n  target: {name: orders, format: iceberg, write_mode: APPEND, catalog: {identifier: shop}}\n  source: {format: CSV, path: data/o.csv}\n"),
		write("c.json", `{"identifier": "orders", "metadata": {"retries": {"max_attempts": 3}, "observability": {"sinks": [{"type": "null"}]}, "docs": {"owner": "x"},
		  "source": {"format": "CSV", "path": "`+filepath.Join(dir, "data", "o.csv")+`"},
		  "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		  "quality": {"checks": [{"check": "row_count", "min": 1}]}, "window": {"column": "ts", "size": "day"}}}`),
	}
	different := []string{
		write("d.json", `{"identifier": "orders", "metadata": {"source": {"format": "CSV", "path": "data/o.csv"},
		  "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		  "quality": [{"check": "row_count", "min": 1}], "window": {"size": "day", "column": "other_ts"}}}`),
		write("e.json", `{"identifier": "orders", "metadata": {"source": {"format": "CSV", "path": "data/o.csv"},
		  "target": {"name": "orders", "format": "ICEBERG", "write_mode": "overwrite", "catalog": {"identifier": "shop"}},
		  "quality": [{"check": "row_count", "min": 1}], "window": {"size": "day", "column": "ts"}}}`),
	}
	hash := func(path string) string {
		p, err := ReadPipeline(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := p.SpecHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := hash(base)
	for _, p := range same {
		if got := hash(p); got != want {
			t.Errorf("%s: spec hash %s, want %s (same meaning as a.json)", filepath.Base(p), got, want)
		}
	}
	for _, p := range different {
		if got := hash(p); got == want {
			t.Errorf("%s: spec hash equals a.json's but the spec does something else", filepath.Base(p))
		}
	}
}
