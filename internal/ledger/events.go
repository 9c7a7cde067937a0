package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// The payloads of the ledger's events, one struct per event type. Writers record them
// (Recorder.Record) and readers decode them (As), so a field is named once, here, and
// docs/ledger.md is their reference. A reader ignores fields it does not know, and a field
// added later is optional (omitempty) so that older lines still decode.

// Payload is the payload of one event type.
type Payload interface {
	EventType() string
}

// As decodes e's payload into P when e is an event of P's type; ok is false for an event of
// another type, or a payload that does not fit P (a line from a future ldp may differ).
func As[P Payload](e v1.LedgerEvent) (p P, ok bool) {
	if e.Type != p.EventType() {
		return p, false
	}
	if err := e.Decode(&p); err != nil {
		return p, false
	}
	return p, true
}

// Window is a logical window as events carry it: {"start": START, "end": END}, each an
// instant in UTC as the idempotency keys write it. Workflow events written before issue 30
// carried it as one string, "START/END": both shapes are read, the object is written.
type Window struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Key is the window's key, START/END, or "" for no window.
func (w Window) Key() v1.WindowKey { return v1.KeyOf(w.Start, w.End) }

// String is START/END, or "" for no window.
func (w Window) String() string { return string(w.Key()) }

// IsZero reports whether this is "no window".
func (w Window) IsZero() bool { return w.Start == "" && w.End == "" }

// UnmarshalJSON reads both shapes: the object, and the "START/END" string of older lines.
func (w *Window) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*w = Window{}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		start, end, ok := v1.WindowKey(s).Bounds()
		if s != "" && !ok {
			return fmt.Errorf("logical_window %q is not START/END", s)
		}
		*w = Window{Start: start, End: end}
		return nil
	}
	type plain Window // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Window(p)
	return nil
}

// Dataset names a run's source or target as OpenLineage does.
type Dataset struct {
	Format       string `json:"format"`
	Namespace    string `json:"namespace"`
	Name         string `json:"name"`
	PathTemplate string `json:"path_template,omitempty"`
}

// RunStartedPayload begins a pipeline run.
type RunStartedPayload struct {
	Pipeline       string  `json:"pipeline"`
	Spec           string  `json:"spec"`
	Mode           string  `json:"mode"`
	PublishMode    string  `json:"publish_mode"`
	IdempotencyKey string  `json:"idempotency_key"`
	SpecHash       string  `json:"spec_hash"`
	Source         Dataset `json:"source"`
	Target         Dataset `json:"target"`
	LdpVersion     string  `json:"ldp_version"`
	Window         *Window `json:"logical_window,omitempty"`
	// Env is the environment the run published into; "" is main.
	Env string `json:"env,omitempty"`
}

// Column is one column of an extracted schema.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// RunExtractedPayload is what the extract read of the source.
type RunExtractedPayload struct {
	RowsRead          int64    `json:"rows_read"`
	RowsKept          int64    `json:"rows_kept"`
	RowsOutside       int64    `json:"rows_outside_window"`
	RowsNoWindowValue int64    `json:"rows_no_window_value"`
	Schema            []Column `json:"schema"`
	SourcePath        string   `json:"source_path"`
}

// CheckResult is one quality check's verdict.
type CheckResult struct {
	Name        string             `json:"name"`
	Check       string             `json:"check"`
	Passed      bool               `json:"passed"`
	FailingRows int64              `json:"failing_rows"`
	Metrics     map[string]float64 `json:"metrics"`
	Column      string             `json:"column,omitempty"`
}

// QualityEvaluatedPayload is the checks' verdicts on a run's rows.
type QualityEvaluatedPayload struct {
	Rows       int64            `json:"rows"`
	NullCounts map[string]int64 `json:"null_counts"`
	Passed     bool             `json:"passed"`
	OnFailure  string           `json:"on_failure"`
	Checks     []CheckResult    `json:"checks"`
}

// RunPublishedPayload is a publish to the target.
type RunPublishedPayload struct {
	RowsWritten    int64           `json:"rows_written"`
	SnapshotID     int64           `json:"snapshot_id"`
	IdempotencyKey string          `json:"idempotency_key"`
	WriteResult    json.RawMessage `json:"write_result,omitempty"`
}

// RunSkippedDuplicatePayload is a run whose key was already on main.
type RunSkippedDuplicatePayload struct {
	IdempotencyKey string `json:"idempotency_key"`
	SnapshotID     int64  `json:"snapshot_id"`
}

// Failure is one failed check of a blocked run.
type Failure struct {
	Name        string `json:"name"`
	Check       string `json:"check"`
	Details     string `json:"details"`
	FailingRows int64  `json:"failing_rows"`
}

// RunBlockedQualityPayload is a run a data gate held back.
type RunBlockedQualityPayload struct {
	Failures []Failure `json:"failures"`
}

// RunFailedPayload is a run that failed in a stage.
type RunFailedPayload struct {
	Stage     string `json:"stage"`
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// RunFinishedPayload is always a pipeline run's last event.
type RunFinishedPayload struct {
	Status            string  `json:"status"`
	DurationS         float64 `json:"duration_s"`
	RowsRead          int64   `json:"rows_read"`
	RowsKept          int64   `json:"rows_kept"`
	RowsOutside       int64   `json:"rows_outside_window"`
	RowsNoWindowValue int64   `json:"rows_no_window_value"`
	RowsWritten       int64   `json:"rows_written"`
	SnapshotID        int64   `json:"snapshot_id"`
	IdempotencyKey    string  `json:"idempotency_key"`
	Pipeline          string  `json:"pipeline"`
	Window            *Window `json:"logical_window,omitempty"`
	Error             string  `json:"error"`
	QualityPassed     *bool   `json:"quality_passed,omitempty"`
	ChecksPassed      *int    `json:"checks_passed,omitempty"`
	ChecksFailed      *int    `json:"checks_failed,omitempty"`
}

// WorkflowStartedPayload begins a workflow's run (a dataset config's run is one too).
type WorkflowStartedPayload struct {
	Workflow string   `json:"workflow"`
	File     string   `json:"file"`
	Window   Window   `json:"logical_window"`
	Tasks    []string `json:"tasks"`
	Replace  bool     `json:"replace"`
	// Evidence is what the run saw of its spec and sources; "" before issue 29.
	Evidence string `json:"evidence,omitempty"`
	// Env is the environment the run published into; "" is main. A run in an environment is
	// not a run of the window on main, nor one on main a run in an environment.
	Env string `json:"env,omitempty"`
	// Upstream are the keys of the upstream windows the run's window overlaps that were on
	// their tables' main when it was planned (metadata.upstream): the data it consumed. An
	// upstream window published later under a new key makes the window stale.
	Upstream []string `json:"upstream_keys,omitempty"`
}

// TaskStartedPayload begins one attempt of a task of a workflow's run.
type TaskStartedPayload struct {
	Task        string      `json:"task"`
	Kind        v1.TaskKind `json:"kind"`
	TaskRunID   string      `json:"task_run_id"`
	TaskAttempt int         `json:"task_attempt"`
}

// TaskFinishedPayload is how a task of a workflow's run ended.
type TaskFinishedPayload struct {
	Task      string      `json:"task"`
	Kind      v1.TaskKind `json:"kind"`
	Status    v1.Outcome  `json:"status"`
	Attempts  int         `json:"attempts"`
	TaskRunID string      `json:"task_run_id"`
	Error     string      `json:"error"`
	// TaskAttempt is the attempt the task's last try was, counted over the run's attempts;
	// 0 for a task that never started.
	TaskAttempt int `json:"task_attempt,omitempty"`
	// Retriable is false for a failure no retry can fix; absent otherwise.
	Retriable *bool `json:"retriable,omitempty"`
	// FailedChecks are the checks of a data gate that held the task back.
	FailedChecks []string `json:"failed_checks,omitempty"`
	// RetryAt is when a failed task is due again, when its run did not wait.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	// Fingerprint is a dbt build's.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// WorkflowFinishedPayload ends a workflow's run.
type WorkflowFinishedPayload struct {
	Workflow string                `json:"workflow"`
	Window   Window                `json:"logical_window"`
	Status   v1.Outcome            `json:"status"`
	Tasks    map[string]v1.Outcome `json:"tasks"`
	Env      string                `json:"env,omitempty"`
}

// RunsForgottenPayload names the runs ldp runs forget leaves out of every read.
type RunsForgottenPayload struct {
	Workflow string   `json:"workflow"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	RunIDs   []string `json:"run_ids"`
}

// Event types of a workflow's run.
const (
	WorkflowStarted  = "workflow.started"
	WorkflowFinished = "workflow.finished"
	TaskStarted      = "task.started"
	TaskFinished     = "task.finished"
)

func (RunStartedPayload) EventType() string          { return RunStarted }
func (RunExtractedPayload) EventType() string        { return RunExtracted }
func (QualityEvaluatedPayload) EventType() string    { return QualityEvaluated }
func (RunPublishedPayload) EventType() string        { return RunPublished }
func (RunSkippedDuplicatePayload) EventType() string { return RunSkippedDuplicate }
func (RunBlockedQualityPayload) EventType() string   { return RunBlockedQuality }
func (RunFailedPayload) EventType() string           { return RunFailed }
func (RunFinishedPayload) EventType() string         { return RunFinished }
func (WorkflowStartedPayload) EventType() string     { return WorkflowStarted }
func (TaskStartedPayload) EventType() string         { return TaskStarted }
func (TaskFinishedPayload) EventType() string        { return TaskFinished }
func (WorkflowFinishedPayload) EventType() string    { return WorkflowFinished }
func (RunsForgottenPayload) EventType() string       { return RunsForgotten }

// WindowOf is w as events carry it.
func WindowOf(w v1.LogicalWindow) Window {
	return Window{Start: v1.FormatInstant(w.Start), End: v1.FormatInstant(w.End)}
}
