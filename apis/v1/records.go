package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The records ldp writes and prints: pure data, defined here, below every package that fills
// them, so that the command line prints them without reaching the data plane (issue 30: no
// alias of an internal type in controllers). The ledger's payloads stay with the ledger.

// LedgerEvent is one line of the run ledger (.ldp/events.jsonl); internal/ledger writes and
// reads them.
type LedgerEvent struct {
	EventID       string         `json:"event_id"`
	Type          string         `json:"type"`
	SchemaVersion int            `json:"schema_version"`
	TS            time.Time      `json:"ts"`
	RunID         string         `json:"run_id"`
	Attempt       int            `json:"attempt"`
	Seq           int            `json:"seq"`
	TableUUID     string         `json:"table_uuid,omitempty"`
	Payload       map[string]any `json:"payload"`
}

// Decode reads e's payload into v, a payload struct; numbers stay exact (json.Number).
func (e LedgerEvent) Decode(v any) error {
	b, err := json.Marshal(e.Payload)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// RunSummary is one attempt of one run, as ldp runs shows it, folded from its ledger events.
type RunSummary struct {
	RunID        string    `json:"run_id"`
	Attempt      int       `json:"attempt"`
	Pipeline     string    `json:"pipeline"`
	Window       string    `json:"logical_window,omitempty"`
	Status       string    `json:"status"`
	Started      time.Time `json:"started"`
	DurationS    float64   `json:"duration_s"`
	RowsRead     int64     `json:"rows_read"`
	RowsWritten  int64     `json:"rows_written"`
	ChecksPassed int       `json:"checks_passed"`
	ChecksFailed int       `json:"checks_failed"`
	SnapshotID   int64     `json:"snapshot_id,string,omitempty"`
	Key          string    `json:"idempotency_key,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// Status values of a pipeline run (PipelineResult.Status).
const (
	PipelinePublished        = "published"
	PipelineSkippedDuplicate = "skipped_duplicate"
	PipelineBlocked          = string(Blocked)
	PipelineFailed           = "failed"
)

// PipelineResult is what one run of a Pipeline did (ldp run; a pipeline task's output).
type PipelineResult struct {
	Pipeline    string         `json:"pipeline"`
	Route       string         `json:"route"`
	Target      string         `json:"target"`
	Mode        WriteMode      `json:"mode"`
	Status      string         `json:"status"`
	Window      string         `json:"logical_window,omitempty"`
	Env         string         `json:"env,omitempty"`
	Key         string         `json:"idempotency_key,omitempty"`
	RunID       string         `json:"run_id,omitempty"`
	Attempt     int            `json:"attempt,omitempty"`
	SpecHash    string         `json:"spec_hash,omitempty"`
	SourcePath  string         `json:"source_path,omitempty"`
	SnapshotID  int64          `json:"snapshot_id,string,omitempty"`
	RowsRead    int64          `json:"rows_read"`
	RowsKept    int64          `json:"rows_kept"`
	RowsWritten int64          `json:"rows_written"`
	Write       *WriteResult   `json:"write,omitempty"`
	Quality     *QualityReport `json:"quality,omitempty"`
	DurationS   float64        `json:"duration_s"`
	Stage       string         `json:"stage,omitempty"`
	Error       string         `json:"error,omitempty"`

	// RowsOutside are the rows read that belong to other windows (left for them), and
	// RowsNoWindow those whose window column holds no value (in no window): with RowsKept they
	// add up to RowsRead.
	RowsOutside  int64 `json:"rows_outside_window"`
	RowsNoWindow int64 `json:"rows_no_window_value"`
}

// PipelinePlan is what a run of a Pipeline for a window would do, computed without running it
// (ldp plan).
type PipelinePlan struct {
	Pipeline     string    `json:"pipeline"`
	Route        string    `json:"route"`
	SpecHash     string    `json:"spec_hash"`
	Schedule     string    `json:"schedule,omitempty"`
	ScheduleFrom string    `json:"schedule_from,omitempty"`
	Window       string    `json:"logical_window,omitempty"`
	WindowLocal  string    `json:"logical_window_local,omitempty"`
	SourcePath   string    `json:"source_path,omitempty"`
	SourceExists bool      `json:"source_exists"`
	Target       string    `json:"target"`
	Mode         WriteMode `json:"mode"`
	Key          string    `json:"idempotency_key,omitempty"`
	Notes        []string  `json:"notes"`
	Warnings     []string  `json:"warnings"`
	Errors       []string  `json:"errors"`
}

// WriteResult says what a write to a table did.
type WriteResult struct {
	Table       string    `json:"table"`
	Mode        WriteMode `json:"mode"`
	RowsWritten int64     `json:"rows_written"`
	RowsBefore  int64     `json:"rows_before"`
	RowsAfter   int64     `json:"rows_after"`
	SnapshotID  int64     `json:"snapshot_id,string"`
}

// CheckResult is the verdict of one quality check.
type CheckResult struct {
	Name        string             `json:"name"`
	Check       string             `json:"check"`
	Passed      bool               `json:"passed"`
	Details     string             `json:"details"`
	FailingRows int64              `json:"failing_rows"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

// QualityReport is the verdict of every check of a batch.
type QualityReport struct {
	OnFailure string        `json:"on_failure"`
	Rows      int64         `json:"rows"`
	Results   []CheckResult `json:"results"`
	// NullCounts are the nulls of each column of the batch, counted in the checks' pass for
	// the ledger's quality event.
	NullCounts map[string]int64 `json:"-"`
}

// Passed reports whether every check passed.
func (r *QualityReport) Passed() bool { return len(r.Failures()) == 0 }

// Failures are the checks that failed.
func (r *QualityReport) Failures() []CheckResult {
	var out []CheckResult
	for _, res := range r.Results {
		if !res.Passed {
			out = append(out, res)
		}
	}
	return out
}

// Counts returns how many checks passed and failed.
func (r *QualityReport) Counts() (passed, failed int) {
	for _, res := range r.Results {
		if res.Passed {
			passed++
		} else {
			failed++
		}
	}
	return
}

// Lines is one line per check, for stderr.
func (r *QualityReport) Lines() []string {
	out := make([]string, len(r.Results))
	for i, res := range r.Results {
		verdict := "passed"
		if !res.Passed {
			verdict = "FAILED"
		}
		out[i] = fmt.Sprintf("check %s: %s: %s", res.Name, verdict, res.Details)
	}
	return out
}
