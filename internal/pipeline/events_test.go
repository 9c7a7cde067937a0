package pipeline

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// eventsOf runs p with a ledger in its folder and returns the types of the events it wrote.
func eventsOf(t *testing.T, dir string, body string, opts Options) ([]v1.LedgerEvent, string) {
	t.Helper()
	p := spec(t, dir, body)
	path := filepath.Join(dir, "ledger-"+strings.ReplaceAll(t.Name(), "/", "_")+".jsonl")
	opts.Sinks = []ledger.Sink{&ledger.FileSink{File: ledger.File{Path: path}}}
	Run(context.Background(), p, opts)
	events, warns, err := ledger.Read(path)
	if err != nil || len(warns) > 0 {
		t.Fatalf("read ledger: %v %v", err, warns)
	}
	var types []string
	for i, e := range events {
		types = append(types, e.Type)
		if e.Seq != i || e.SchemaVersion != 1 || e.EventID == "" || e.RunID == "" || e.Attempt < 1 || e.TS.IsZero() {
			t.Errorf("event %d envelope %+v", i, e)
		}
	}
	return events, strings.Join(types, " ")
}

func TestEventSequenceOfEachOutcome(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), ridesCSV)
	ok := icebergSpec(`[{"check": "row_count", "min": 1}]`)
	win := day(t, "2026-09-01", time.UTC)
	cases := []struct {
		name, body string
		opts       Options
		want       string
		last       map[string]string // payload of the outcome event
	}{
		{"published", ok, Options{Window: win}, "run.started run.extracted quality.evaluated run.published run.finished", map[string]string{"status": "published"}},
		{"skipped_duplicate", ok, Options{Window: win}, "run.started run.skipped_duplicate run.finished", map[string]string{"status": "skipped_duplicate"}},
		{"blocked", icebergSpec(`[{"check": "row_count", "min": 100}]`), Options{}, "run.started run.extracted quality.evaluated run.blocked_quality run.finished", map[string]string{"status": "blocked"}},
		{"failed extract", strings.Replace(ok, "rides.csv", "missing.csv", 1), Options{}, "run.started run.failed run.finished", map[string]string{"stage": "extract", "error_type": "SourceMissingError"}},
		{"failed transform", strings.Replace(ok, `"quality"`, `"transform": {"sql": "SELECT nope FROM source"}, "quality"`, 1), Options{}, "run.started run.extracted run.failed run.finished", map[string]string{"stage": "transform"}},
		{"failed write", strings.Replace(strings.Replace(ok, `"append"`, `"upsert", "join_cols": ["city"]`, 1), "[{", "[{", 1), Options{}, "run.started run.extracted quality.evaluated run.failed run.finished", map[string]string{"stage": "write"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			events, got := eventsOf(t, dir, c.body, c.opts)
			if got != c.want {
				t.Fatalf("events %q, want %q", got, c.want)
			}
			outcome := events[len(events)-2].Payload
			finished := events[len(events)-1].Payload
			for k, v := range c.last {
				if k == "status" {
					if finished["status"] != v {
						t.Errorf("run.finished status %v, want %s", finished["status"], v)
					}
					continue
				}
				if outcome[k] != v {
					t.Errorf("%s %s = %v, want %s", events[len(events)-2].Type, k, outcome[k], v)
				}
			}
			started := events[0].Payload
			for _, k := range []string{"pipeline", "mode", "publish_mode", "spec_hash", "source", "target"} {
				if started[k] == nil || started[k] == "" {
					t.Errorf("run.started lacks %s: %v", k, started)
				}
			}
		})
	}
}

// TestEventsCarryNoRowValues: the quality event has counts and numeric metrics, never values.
func TestEventsCarryNoRowValues(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), "ride_id,city,fare\n1,Secretville,12.5\n1,Hiddenham,7\n")
	events, _ := eventsOf(t, dir, icebergSpec(`[{"check": "unique", "columns": ["ride_id"]}, {"check": "accepted_values", "column": "city", "values": ["NYC"]}]`), Options{})
	for _, e := range events {
		b := ledgerLine(t, e)
		if strings.Contains(b, "Secretville") || strings.Contains(b, "Hiddenham") {
			t.Errorf("event %s carries a row's value: %s", e.Type, b)
		}
	}
	q := events[2]
	if q.Type != ledger.QualityEvaluated {
		t.Fatalf("third event is %s", q.Type)
	}
	nulls, _ := q.Payload["null_counts"].(map[string]any)
	if len(nulls) != 3 {
		t.Errorf("null counts %v, want one per column", q.Payload["null_counts"])
	}
}

func ledgerLine(t *testing.T, e v1.LedgerEvent) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
