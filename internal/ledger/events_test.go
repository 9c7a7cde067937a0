package ledger

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// roundTrip records p in a ledger file, reads the file back and decodes the one event as P.
func roundTrip[P Payload](t *testing.T, p P) (P, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	rec := NewRecorder("run", 1, []Sink{&FileSink{File: File{Path: path}}}, nil)
	rec.Record(context.Background(), p)
	rec.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	events, warns, err := Read(path)
	if err != nil || len(warns) > 0 || len(events) != 1 {
		t.Fatalf("read %d events, warnings %v, error %v", len(events), warns, err)
	}
	got, ok := As[P](events[0])
	if !ok {
		t.Fatalf("%s does not decode as %T: %s", events[0].Type, p, raw)
	}
	return got, string(raw)
}

// TestPayloadsRoundTrip: every event type's payload struct, written to a ledger file and read
// back, is what was written, under the type docs/ledger.md names.
func TestPayloadsRoundTrip(t *testing.T) {
	retry := time.Date(2026, 8, 2, 3, 4, 5, 600, time.UTC)
	win := Window{Start: "2026-08-01T00:00:00Z", End: "2026-08-02T00:00:00Z"}
	yes, two := true, 2
	check := func(t *testing.T, want, got any, raw, typ string) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back %+v, want %+v", got, want)
		}
		if !strings.Contains(raw, `"type":"`+typ+`"`) {
			t.Errorf("line %s is not a %s", raw, typ)
		}
	}
	cases := []struct {
		name string
		typ  string
		run  func(t *testing.T) (want, got any, raw string)
	}{
		{"run.started", RunStarted, func(t *testing.T) (any, any, string) {
			p := RunStartedPayload{Pipeline: "orders", Spec: "orders.json", Mode: "append", PublishMode: "staged", IdempotencyKey: "k", SpecHash: "h",
				Source: Dataset{Format: "CSV", Namespace: "file", Name: "/in/orders.csv", PathTemplate: "in/{date}.csv"},
				Target: Dataset{Format: "ICEBERG", Namespace: "iceberg+file:///w", Name: "shop.orders"}, LdpVersion: "dev", Window: &win}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.extracted", RunExtracted, func(t *testing.T) (any, any, string) {
			p := RunExtractedPayload{RowsRead: 5, RowsKept: 4, RowsOutside: 1, Schema: []Column{{Name: "id", Type: "BIGINT"}}, SourcePath: "/in/orders.csv"}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"quality.evaluated", QualityEvaluated, func(t *testing.T) (any, any, string) {
			p := QualityEvaluatedPayload{Rows: 4, NullCounts: map[string]int64{"id": 0}, OnFailure: "block",
				Checks: []CheckResult{{Name: "ids", Check: "not_null", Passed: true, Metrics: map[string]float64{"rows": 4}, Column: "id"}, {Name: "n", Check: "row_count", FailingRows: 3, Metrics: map[string]float64{}}}}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.published", RunPublished, func(t *testing.T) (any, any, string) {
			p := RunPublishedPayload{RowsWritten: 4, SnapshotID: 4680872402827869008, IdempotencyKey: "k", WriteResult: json.RawMessage(`{"rows_written":4,"snapshot_id":"4680872402827869008"}`)}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.skipped_duplicate", RunSkippedDuplicate, func(t *testing.T) (any, any, string) {
			p := RunSkippedDuplicatePayload{IdempotencyKey: "k", SnapshotID: 7}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.blocked_quality", RunBlockedQuality, func(t *testing.T) (any, any, string) {
			p := RunBlockedQualityPayload{Failures: []Failure{{Name: "n", Check: "row_count", Details: "3 rows, want 5", FailingRows: 3}}}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.failed", RunFailed, func(t *testing.T) (any, any, string) {
			p := RunFailedPayload{Stage: "extract", ErrorType: "DataError", Message: "orders.csv:2: column \"amount\""}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"run.finished", RunFinished, func(t *testing.T) (any, any, string) {
			p := RunFinishedPayload{Status: "published", DurationS: 0.5, RowsRead: 5, RowsKept: 4, RowsWritten: 4, SnapshotID: 4680872402827869008, IdempotencyKey: "k",
				Pipeline: "orders", Window: &win, QualityPassed: &yes, ChecksPassed: &two, ChecksFailed: new(0)}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"workflow.started", WorkflowStarted, func(t *testing.T) (any, any, string) {
			p := WorkflowStartedPayload{Workflow: "daily", File: "daily.json", Window: win, Tasks: []string{"load", "summary"}, Replace: true, Evidence: "sha256:x"}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"task.started", TaskStarted, func(t *testing.T) (any, any, string) {
			p := TaskStartedPayload{Task: "load", Kind: v1.TaskPipeline, TaskRunID: "run/load", TaskAttempt: 2}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"task.finished", TaskFinished, func(t *testing.T) (any, any, string) {
			p := TaskFinishedPayload{Task: "load", Kind: v1.TaskPipeline, Status: v1.Blocked, Attempts: 2, TaskRunID: "run/load", Error: "a check failed",
				TaskAttempt: 3, Retriable: new(false), FailedChecks: []string{"n"}, RetryAt: &retry, Fingerprint: "f"}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"workflow.finished", WorkflowFinished, func(t *testing.T) (any, any, string) {
			p := WorkflowFinishedPayload{Workflow: "daily", Window: win, Status: v1.Blocked, Tasks: map[string]v1.Outcome{"load": v1.Blocked, "summary": v1.UpstreamFailed}}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
		{"runs.forgotten", RunsForgotten, func(t *testing.T) (any, any, string) {
			p := RunsForgottenPayload{Workflow: "daily", From: "2026-08-01", To: "2026-08-03", RunIDs: []string{"a", "b"}}
			got, raw := roundTrip(t, p)
			return p, got, raw
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, got, raw := c.run(t)
			check(t, want, got, raw, c.typ)
		})
	}
}

// TestWindowIsWrittenAsAnObject: a workflow event's window is the object run events carry,
// with the keys' spelling of the bounds, and the optional fields stay out when unset.
func TestWindowIsWrittenAsAnObject(t *testing.T) {
	w := v1.LogicalWindow{Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}
	_, raw := roundTrip(t, WorkflowStartedPayload{Workflow: "daily", File: "daily.json", Window: WindowOf(w), Tasks: []string{"load"}})
	if !strings.Contains(raw, `"logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"}`) {
		t.Errorf("workflow.started line %s: want the window as an object", raw)
	}
	if strings.Contains(raw, "evidence") {
		t.Errorf("workflow.started line %s: an unset evidence is written", raw)
	}
	_, raw = roundTrip(t, TaskFinishedPayload{Task: "load", Status: v1.Succeeded, Attempts: 1})
	for _, k := range []string{"retriable", "retry_at", "failed_checks", "fingerprint", "task_attempt"} {
		if strings.Contains(raw, `"`+k+`"`) {
			t.Errorf("task.finished line %s: an unset %s is written", raw, k)
		}
	}
}

// TestReadsTheOldStringWindow: ledgers written before issue 30 carry a workflow event's window
// as "START/END" (and run.finished's still does); they read as the same window as the
// object of newer lines.
func TestReadsTheOldStringWindow(t *testing.T) {
	events, warns, err := Read(filepath.Join("testdata", "old-windows.jsonl"))
	if err != nil || len(warns) > 0 {
		t.Fatalf("read: %v %v", err, warns)
	}
	want := "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z"
	var got []string
	for _, e := range events {
		var w Window
		switch e.Type {
		case WorkflowStarted:
			p, ok := As[WorkflowStartedPayload](e)
			if !ok {
				t.Fatalf("workflow.started does not decode: %v", e.Payload)
			}
			w = p.Window
		case WorkflowFinished:
			p, _ := As[WorkflowFinishedPayload](e)
			w = p.Window
		case RunStarted:
			p, _ := As[RunStartedPayload](e)
			w = *p.Window
		case RunFinished:
			p, _ := As[RunFinishedPayload](e)
			w = *p.Window
		default:
			continue
		}
		got = append(got, e.Type+" "+w.String())
	}
	wantAll := []string{"workflow.started " + want, "run.started " + want, "run.finished " + want, "workflow.finished " + want, "workflow.started " + want, "workflow.finished " + want}
	if !reflect.DeepEqual(got, wantAll) {
		t.Errorf("windows read\n%v\nwant\n%v", got, wantAll)
	}
	var w Window
	if err := json.Unmarshal([]byte(`"2026-08-01"`), &w); err == nil {
		t.Errorf("a window with no end reads as %+v, want an error", w)
	}
}
