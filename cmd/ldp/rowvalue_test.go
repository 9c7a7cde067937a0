package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowValuesStayOffEvents: a value that does not fit the table's column (a number column,
// then a social security number) fails the run; the terminal shows the value, the ledger's
// run.failed and run.finished and the OpenLineage FAIL event do not (docs/ledger.md: never a
// row's values; issue 33, point 13).
func TestRowValuesStayOffEvents(t *testing.T) {
	const ssn = "123-45-6789"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "drops"), 0o755)
	os.WriteFile(filepath.Join(dir, "drops", "people_2026-08-01.csv"), []byte("id,ssn\n1,123456789\n2,987654321\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "drops", "people_2026-08-02.csv"), []byte("id,ssn\n3,"+ssn+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "people.json"), []byte(`{"identifier": "people", "metadata": {
		"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/people_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "people", "format": "ICEBERG", "catalog": {"identifier": "hr"}},
		"observability": {"sinks": [{"type": "openlineage", "path": "lineage.jsonl"}]}}}`), 0o644)
	if code, _, errs := runInProcess(t, dir, nil, "run", "people.json", "--window", "2026-08-01/2026-08-02"); code != 0 {
		t.Fatalf("day 1: exit %d\n%s", code, errs)
	}
	code, out, errs := runInProcess(t, dir, nil, "run", "people.json", "--window", "2026-08-02/2026-08-03")
	if code == 0 {
		t.Fatalf("day 2 loaded %s into a number column:\n%s", ssn, out)
	}
	if !strings.Contains(out+errs, ssn) {
		t.Errorf("the terminal does not show the value that failed the run:\n%s%s", out, errs)
	}
	ledgerText, _ := os.ReadFile(filepath.Join(dir, ".ldp", "events.jsonl"))
	lineage, _ := os.ReadFile(filepath.Join(dir, "lineage.jsonl"))
	for name, text := range map[string]string{"the ledger": string(ledgerText), "the OpenLineage events": string(lineage)} {
		if strings.Contains(text, ssn) {
			t.Errorf("%s hold the row's value %s:\n%s", name, ssn, text)
		}
	}
	for _, want := range []string{`"type":"run.failed"`, `"status":"failed"`} {
		if !strings.Contains(string(ledgerText), want) {
			t.Errorf("the ledger has no %s", want)
		}
	}
	if !strings.Contains(string(lineage), `"eventType":"FAIL"`) || !strings.Contains(string(lineage), `"errorMessage"`) {
		t.Errorf("no FAIL event with its error message:\n%s", lineage)
	}
}
