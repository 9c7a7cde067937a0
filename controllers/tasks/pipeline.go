package tasks

import (
	"context"
	"io/fs"
	"path/filepath"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/reconcile"
)

func init() { Register(v1.TaskPipeline, pipelineKind{}) }

// pipelineKind runs a dataset config for the window of the run, under its key.
type pipelineKind struct{}

// PublishOutput is what a run of a pipeline did: its status, its key, snapshot and rows.
type PublishOutput struct {
	Skip        bool   `json:"-"`
	Status      string `json:"status,omitempty"`
	Key         string `json:"idempotency_key,omitempty"`
	SnapshotID  int64  `json:"snapshot_id,string,omitempty"`
	RowsWritten int64  `json:"rows_written,omitempty"`
}

// Skipped: the window's key was on main already.
func (o PublishOutput) Skipped() bool { return o.Skip }

// Rows are the rows the run wrote.
func (o PublishOutput) Rows() int64 { return o.RowsWritten }

// Evidence: a load into an Iceberg table is vouched for by its key on main; a file export
// only by its last run.
func (pipelineKind) Evidence(s Spec) reconcile.Evidence { return publishEvidence(s) }

func publishEvidence(s Spec) reconcile.Evidence {
	if s.Pipeline != nil && s.Pipeline.IsIceberg() {
		return reconcile.ByKey
	}
	return reconcile.ByLastRun
}

// Load reads the dataset config the task names.
func (pipelineKind) Load(fsys fs.FS, _ *v1.Workflow, path string, t v1.Task) (*v1.Pipeline, bool, error) {
	return readConfig(fsys, path, t.Pipeline)
}

// readConfig reads the dataset config ref of fsys, relative to the workflow's file path.
func readConfig(fsys fs.FS, path, ref string) (*v1.Pipeline, bool, error) {
	if ref == "" {
		return nil, false, nil
	}
	p, err := specs.ReadPipelineFS(fsys, filepath.Join(filepath.Dir(path), ref))
	return p, p != nil, err
}

// RenameConfigs: "pipeline" is the config's path.
func (pipelineKind) RenameConfigs(task map[string]any, ref func(string) string) {
	if s, ok := task[string(v1.TaskPipeline)].(string); ok {
		task[string(v1.TaskPipeline)] = ref(s)
	}
}

func (pipelineKind) Reads(s Spec) []string { return pipelineReads(s.Pipeline) }

func (pipelineKind) Plan(context.Context, Spec, v1.LogicalWindow) (Plan, error) { return Plan{}, nil }

func (pipelineKind) Run(ctx context.Context, tc TaskContext) (Output, error) { return publish(ctx, tc) }

// publish runs the task's pipeline for the window, under its key (a replace under the key of
// the spec's hash, by overwrite; a stale window's re-run under that key made with the upstream
// keys it consumes).
func publish(ctx context.Context, tc TaskContext) (Output, error) {
	p := tc.Pipeline
	if p == nil {
		return nil, ldperr.Configf(tc.File, "task %s: its pipeline was not loaded", tc.Task.ID)
	}
	sinks := []ledger.Sink{tc.LedgerSink}
	if tc.LedgerSink == nil {
		sinks[0] = &ledger.FileSink{File: ledger.File{Path: tc.Ledger}}
	}
	if tc.Sinks != nil {
		sinks = append(sinks, tc.Sinks(p)...)
	}
	opts := pipeline.Options{Window: tc.Window, RunID: tc.RunID, Attempt: tc.Attempt, Log: tc.Log, Hook: tc.Hook,
		Sinks: sinks, Version: tc.Version, Warn: tc.Warn, Now: tc.Now, Group: tc.Group, Sniffs: tc.Sniffs, Env: tc.Environment}
	if tc.Window.IsZero() {
		opts.RunID = "" // a run with no window keeps the direct mode
	}
	if tc.Replace && p.IsIceberg() {
		hash, err := p.SpecHash()
		if err != nil {
			return nil, err
		}
		opts.Key = v1.ReplaceKey(p.IdempotencyKey(tc.Window), hash)
		if len(tc.StaleConsumed) > 0 {
			opts.Key = v1.StaleReplaceKey(p.IdempotencyKey(tc.Window), hash, tc.StaleConsumed)
		}
		opts.Mode = v1.WriteOverwrite
	}
	res, err := pipeline.Run(ctx, p, opts)
	if res == nil {
		return nil, err
	}
	out := PublishOutput{Status: res.Status, RowsWritten: res.RowsWritten, Key: res.Key, SnapshotID: res.SnapshotID}
	if err != nil {
		return out, err
	}
	out.Skip = res.Status == v1.PipelineSkippedDuplicate
	return out, nil
}
