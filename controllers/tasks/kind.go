// Package tasks holds the task kinds of a workflow (pipeline, sql, dbt, maintain), one file
// each, and the one registry the runner, the planner and validation read. A kind sees only what
// its TaskContext gives it, never the runner, so a new kind is its own file plus its spec's
// field (apis/v1), its name in v1.TaskKinds and its schema (schemas/workflow.cue).
package tasks

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/reconcile"
)

// Kind is one kind of task: what can vouch that its work is done, what it reads, what its plan
// shows, and how one attempt of it runs.
type Kind interface {
	// Evidence says what can vouch that the task did its work for a window: planning reads
	// it, and never a kind's name. ByKey needs s.Pipeline, an Iceberg table, to hold the key.
	Evidence(s Spec) reconcile.Evidence
	// Reads are the tables the task reads, as target identities ("iceberg:ns.name"): a task
	// that reads what another writes must depend on it.
	Reads(s Spec) []string
	// Plan is what the plan shows of the task for window w (nothing is run).
	Plan(ctx context.Context, s Spec, w v1.LogicalWindow) (Plan, error)
	// Run runs one attempt. An error is a failure, or a data gate (ldperr.IsDataGate); the
	// output is the kind's own, nil when the attempt did nothing to report.
	Run(ctx context.Context, tc TaskContext) (Output, error)
}

// Spec is a task as its workflow loaded it.
type Spec struct {
	Task v1.Task
	// Pipeline is the dataset config the task names, or the pipeline a sql task becomes; nil
	// for a kind that runs none.
	Pipeline *v1.Pipeline
	// File is the workflow's file: a task's paths are relative to its folder.
	File string
}

// TaskContext is what a kind gets for one attempt: its task, the window and run, and the
// runner's services it may use (not the runner).
type TaskContext struct {
	Spec
	Workflow string // the workflow's name
	Ledger   string // the workflow's ledger file
	Window   v1.LogicalWindow
	RunID    string
	Attempt  int
	Replace  bool
	// StaleConsumed, on the re-run of a stale window (Replace, ldp apply --stale), are the
	// upstream keys the run consumes: its replace key is made with them (v1.StaleReplaceKey).
	StaleConsumed []string
	// Group, when set, lets the task's publish share a catalog commit with other windows.
	Group *lake.Group
	// Sniffs, when set, are the CSV layouts the windows of a backfill share.
	Sniffs *pipeline.Sniffs
	// LedgerSink, when set, is where the task's events for Ledger go instead of a FileSink of
	// their own: the run's ledger.HeldSink, which writes a grouped window's lines at its end.
	LedgerSink ledger.Sink
	// UpstreamWrote is set when a task that ran earlier in this run wrote data.
	UpstreamWrote bool
	// Environment, when set, is the environment the task publishes into and reads Iceberg
	// tables from where it has written them (docs/environments.md).
	Environment string
	Env
	// LastFingerprint is the fingerprint (Fingerprinted) the task's last finish for this
	// window recorded, when that finish succeeded; "" otherwise.
	LastFingerprint func() string
}

// Env is the runner's services a kind may use.
type Env struct {
	Log     io.Writer
	Warn    func(string)
	Now     func() time.Time
	Version string
	// Hook is passed to each publish (a test seam).
	Hook func(string)
	// Sinks are the sinks of a pipeline's events besides the workflow's ledger.
	Sinks func(*v1.Pipeline) []ledger.Sink
}

// Output is what one attempt of a task did: each kind has its own struct, which the runner
// shows as the task's detail (its JSON) and never reads field by field.
type Output interface {
	// Skipped reports whether the attempt found its work done already.
	Skipped() bool
}

// Fingerprinted is an output that fingerprints its build: the runner records the fingerprint
// in the task's event and gives it back as TaskContext.LastFingerprint.
type Fingerprinted interface{ Fingerprint() string }

// RowCounter is an output that wrote rows: the runner counts them in its metrics.
type RowCounter interface{ Rows() int64 }

// Loader is a kind whose task runs a pipeline: a dataset config it names, or one it makes of
// its own keys. The workflow's loader asks it once, at load.
type Loader interface {
	// Load is the pipeline of task t of workflow wf, read from the file path of fsys (the
	// files it names beside it); named is set when it is a dataset config the task names (the
	// workflow's windows wait for its window's delay). A nil pipeline is none.
	Load(fsys fs.FS, wf *v1.Workflow, path string, t v1.Task) (p *v1.Pipeline, named bool, err error)
}

// ConfigNamer is a kind whose task names dataset configs by path: ldp export k8s renames each
// to the Pipeline object it makes of it, in the task as written.
type ConfigNamer interface {
	// RenameConfigs replaces each config path task (a task as written) names with ref(path).
	RenameConfigs(task map[string]any, ref func(string) string)
}

// RenameConfigs renames the configs task names, by its kind.
func RenameConfigs(task map[string]any, ref func(string) string) {
	for _, n := range Registered() {
		if c, ok := kinds[n].(ConfigNamer); ok {
			c.RenameConfigs(task, ref)
		}
	}
}

// Skip is the output of a task skipped without running: the plan found its work done.
type Skip struct {
	Reason string `json:"reason,omitempty"`
}

// Skipped is true: the task did not run.
func (Skip) Skipped() bool { return true }

// Plan is what the plan of a workflow shows of one task beyond its key.
type Plan struct {
	// Detail, when set, is shown with the task: its fields join the task's line of the
	// plan's JSON, and Line says them in words.
	Detail PlanDetail
	// Warnings are what may make the task fail when it runs.
	Warnings []string
}

// PlanDetail is a kind's own part of a task's plan.
type PlanDetail interface {
	// Line is the detail as the plan's text shows it after the task.
	Line() string
}

var kinds = map[v1.TaskKind]Kind{}

// Register adds a kind under its name, which must be one of v1.TaskKinds (the schema's list,
// which validation reads). Each kind's file registers its own; registering a name again
// replaces its kind (a test's fake).
func Register(name v1.TaskKind, k Kind) {
	if !slices.Contains(v1.TaskKinds, name) {
		panic(fmt.Sprintf("tasks: kind %q is not in v1.TaskKinds: add it there (and to the schema) first", name))
	}
	kinds[name] = k
}

// Lookup is the kind registered under name, or nil.
func Lookup(name v1.TaskKind) Kind { return kinds[name] }

// Registered lists the names of the registered kinds, sorted.
func Registered() []v1.TaskKind {
	out := make([]v1.TaskKind, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// pipelineReads is what the pipeline a task runs reads: its Iceberg source, and a sql model's
// inputs.
func pipelineReads(p *v1.Pipeline) []string {
	if p == nil {
		return nil
	}
	var reads []string
	if p.Metadata.Source.Format == v1.FormatIceberg && p.Metadata.Source.Catalog != nil {
		reads = append(reads, "iceberg:"+p.Metadata.Source.Catalog.NamespaceName()+"."+p.Metadata.Source.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Metadata.Source.Inputs)) {
		in := p.Metadata.Source.Inputs[name]
		reads = append(reads, "iceberg:"+in.Catalog.NamespaceName()+"."+in.Name)
	}
	return reads
}
