package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

func TestAppendReadDedupeAndTornLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ldp", "events.jsonl")
	f := File{Path: path}
	rec := NewRecorder("run-1", 1, []Sink{&FileSink{File: f}}, nil)
	ctx := context.Background()
	rec.emit(ctx, RunStarted, map[string]any{"pipeline": "p", "idempotency_key": "k", "logical_window": map[string]any{"start": "a", "end": "b"}})
	rec.emit(ctx, RunFinished, map[string]any{"status": "published", "snapshot_id": int64(4680872402827869008), "rows_written": 3, "duration_s": 0.5})
	rec.Close()
	raw, _ := os.ReadFile(path)
	// A replayed line (same run, attempt and seq) and a torn last line.
	lines := strings.SplitAfter(string(raw), "\n")
	os.WriteFile(path, []byte(string(raw)+lines[1]+`{"event_id": "x", "type": "run.fin`), 0o644)
	// The next append ends the torn line first, so its own line stays whole.
	rec2 := NewRecorder("run-2", 1, []Sink{&FileSink{File: f}}, nil)
	rec2.emit(ctx, RunStarted, map[string]any{"pipeline": "p"})
	events, warns, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || len(warns) != 1 || !strings.Contains(warns[0], ":4: skipped a line") {
		t.Fatalf("%d events, warnings %v; want 3 events and the torn line 4 skipped", len(events), warns)
	}
	runs := Summarize(events, false)
	if len(runs) != 2 || runs[1].SnapshotID != 4680872402827869008 || runs[1].Status != "published" || runs[1].Window != "a/b" || runs[0].Status != StatusUnfinished {
		t.Errorf("summaries %+v", runs)
	}
	if missing, _, err := Read(filepath.Join(t.TempDir(), "none.jsonl")); missing != nil || err != nil {
		t.Errorf("a ledger that does not exist: %v %v", missing, err)
	}
}

func TestSummarizeKeepsTheLastAttempt(t *testing.T) {
	ev := func(run string, attempt, seq int, typ, status string) v1.LedgerEvent {
		return v1.LedgerEvent{RunID: run, Attempt: attempt, Seq: seq, Type: typ, Payload: map[string]any{"status": status}}
	}
	events := []v1.LedgerEvent{ev("r", 1, 0, RunStarted, ""), ev("r", 1, 1, RunFinished, "failed"), ev("r", 2, 0, RunStarted, ""), ev("r", 2, 1, RunFinished, "published")}
	if s := Summarize(events, false); len(s) != 1 || s[0].Attempt != 2 || s[0].Status != "published" {
		t.Errorf("last attempts %+v", s)
	}
	if s := Summarize(events, true); len(s) != 2 {
		t.Errorf("all attempts %+v", s)
	}
}

func TestEndpointAndRunUUID(t *testing.T) {
	for in, want := range map[string]string{"http://127.0.0.1:5000": "http://127.0.0.1:5000/api/v1/lineage", "http://h/": "http://h/api/v1/lineage", "https://h/custom": "https://h/custom"} {
		if got, _ := EndpointURL(in); got != want {
			t.Errorf("EndpointURL(%q) = %q, want %q", in, got, want)
		}
	}
	if u := runUUID("airflow:dag:run:task"); len(u) != 36 || u != runUUID("airflow:dag:run:task") {
		t.Errorf("runUUID is not a stable UUID: %q", u)
	}
	if u := runUUID("01a22a87-2bd1-7c00-8061-ff3c4cf16693"); u != "01a22a87-2bd1-7c00-8061-ff3c4cf16693" {
		t.Errorf("a UUID run id changed: %q", u)
	}
}

// TestReadLeavesForgottenRunsOut: a runs.forgotten event hides the events of the runs it
// names and of their tasks' runs, wherever they are in the file; other runs stay.
func TestReadLeavesForgottenRunsOut(t *testing.T) {
	lines := strings.Join([]string{
		`{"type":"workflow.started","run_id":"a","attempt":1,"seq":0,"payload":{}}`,
		`{"type":"run.failed","run_id":"a/orders","attempt":1,"seq":1,"payload":{}}`,
		`{"type":"workflow.started","run_id":"b","attempt":1,"seq":0,"payload":{}}`,
		`{"type":"runs.forgotten","run_id":"f","attempt":0,"seq":0,"payload":{"run_ids":["a"]}}`,
		`{"type":"workflow.finished","run_id":"a","attempt":2,"seq":0,"payload":{}}`,
	}, "\n")
	events, _, err := ReadFrom(strings.NewReader(lines), "events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.RunID+" "+e.Type)
	}
	want := []string{"b workflow.started", "f runs.forgotten"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events = %v, want %v", got, want)
	}
}

// TestHeldSinkWritesARunsLinesAtFlush: the recorders of a window's run (its workflow's and its
// task's) share a HeldSink; nothing reaches the file until Flush, and then every line does, in
// the order recorded, after a torn line a killed writer left, which is ended first.
func TestHeldSinkWritesARunsLinesAtFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".ldp", "events.jsonl")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(`{"event_id": "x", "type": "run.fin`), 0o644)
	held := &HeldSink{File: File{Path: path}}
	ctx := context.Background()
	wf := NewRecorder("wf", 1, []Sink{held}, nil)
	task := NewRecorder("wf/t", 1, []Sink{held}, nil)
	wf.emit(ctx, "workflow.started", map[string]any{"workflow": "w"})
	task.emit(ctx, RunStarted, map[string]any{"pipeline": "p"})
	task.emit(ctx, RunFinished, map[string]any{"status": "published"})
	task.Close()
	wf.emit(ctx, "workflow.finished", map[string]any{"status": "succeeded"})
	wf.Close()
	if raw, _ := os.ReadFile(path); string(raw) != `{"event_id": "x", "type": "run.fin` {
		t.Fatalf("before Flush the file holds %q, want only the torn line", raw)
	}
	if err := held.Flush(); err != nil {
		t.Fatal(err)
	}
	events, warns, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.RunID+" "+e.Type)
	}
	want := []string{"wf workflow.started", "wf/t run.started", "wf/t run.finished", "wf workflow.finished"}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(warns) != 1 {
		t.Errorf("events %q (warnings %v), want %q and the torn line skipped", got, warns, want)
	}
	if err := held.Flush(); err != nil {
		t.Fatal(err)
	}
	if again, _, _ := Read(path); len(again) != len(events) {
		t.Errorf("a second Flush wrote %d more events, want none", len(again)-len(events))
	}
}
