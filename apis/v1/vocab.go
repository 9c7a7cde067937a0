package v1

import (
	"encoding/json"
	"strings"
)

// TaskKind is what a workflow task does. Each kind is registered once, in controllers/tasks,
// with how it runs and what can vouch that its work is done.
type TaskKind string

// Task kinds.
const (
	TaskPipeline TaskKind = "pipeline"
	TaskMaintain TaskKind = "maintain"
	TaskDbt      TaskKind = "dbt"
	TaskSQL      TaskKind = "sql"
)

// TaskKinds are the kinds a task may be, each the key of a task that names it: validation
// (schemas) reads this list, controllers/tasks registers a kind for each, and tests hold the
// schema's #Task and the registry equal to it.
var TaskKinds = []TaskKind{TaskPipeline, TaskMaintain, TaskDbt, TaskSQL}

// WindowState is what the world says of one window of an object: its keys on main and its
// last run.
type WindowState string

// Window states.
const (
	StatePublished WindowState = "published"
	StateFailed    WindowState = WindowState(Failed)
	StateBlocked   WindowState = WindowState(Blocked)
	StatePartial   WindowState = "partial"
	StateMissing   WindowState = "missing"
	// StateRunning is a window whose Job runs, on a cluster (ldp controller): the other
	// states are what the keys and the ledger say, this one what the cluster says.
	StateRunning WindowState = "running"
)

// Action is what a plan does with a window or a task.
type Action string

// Actions.
const (
	ActionSkip    Action = "skip"
	ActionRun     Action = "run"
	ActionResume  Action = "resume"
	ActionReplace Action = "replace"
	// ActionWait is a window whose last run failed and waits for its retry: a later reconcile
	// runs it as the next attempt when the retry is due.
	ActionWait Action = "wait"
	// ActionHold is a window the schedule leaves alone until something changes: a data gate
	// held its last run back, or its last run spent its attempts (reconcile.Hold says which).
	// ldp run --window, apply --window and backfill still run it when asked.
	ActionHold Action = "hold"
)

// Outcome is how a task ended, and, folded over its tasks, how a run of a window ended.
// Blocked (a data gate held the work back, nothing was written) is spelled once, here: every
// other vocabulary's "blocked" (a window's state, a page cell, a Job, a hold, a backfill
// window, a pipeline run's status) is this value converted, as they all mean the same fact.
type Outcome string

// Outcomes. A run's outcome is Succeeded, Blocked or Failed.
const (
	Succeeded      Outcome = "succeeded"
	Skipped        Outcome = "skipped"
	Failed         Outcome = "failed"
	Blocked        Outcome = "blocked"
	UpstreamFailed Outcome = "upstream_failed"
)

// Done reports whether the outcome leaves the task's work done: it succeeded, or found it done.
func (o Outcome) Done() bool { return o == Succeeded || o == Skipped }

// Holds reports whether the outcome stops the tasks that depend on it.
func (o Outcome) Holds() bool { return o == Failed || o == Blocked || o == UpstreamFailed }

// Format is the format of a source or a target. Specs write it in any case; it is read (and
// compared) upper-case, as ParseFormat puts it.
type Format string

// Formats.
const (
	FormatCSV     Format = "CSV"
	FormatParquet Format = "PARQUET"
	FormatJSON    Format = "JSON"
	FormatIceberg Format = "ICEBERG"
	// FormatGitHub is a repository's GitHub issues (internal/sources), a source only.
	FormatGitHub Format = "GITHUB"
)

// SourceFormats, TargetFormats and ModelTargetFormats are the formats a spec may give a
// source, a target and a sql task's target: the one list of each. The schema's patterns are
// made from them (schemas.vocabCUE; a sql task's is written in the schema, and a test holds it
// equal), and so are internal/pipeline's routes and ldp pipelines: a new source format is its
// name here and its reader in internal/formats.
var (
	SourceFormats      = []Format{FormatCSV, FormatParquet, FormatJSON, FormatIceberg, FormatGitHub}
	TargetFormats      = []Format{FormatIceberg, FormatCSV, FormatParquet}
	ModelTargetFormats = []Format{FormatIceberg}
)

// ParseFormat reads a format as a spec writes it, in any case.
func ParseFormat(s string) Format { return Format(strings.ToUpper(s)) }

// Lower is the format in lower case, as a file target's identity spells it.
func (f Format) Lower() string { return strings.ToLower(string(f)) }

// UnmarshalJSON reads a format in any case; the schema says which are allowed.
func (f *Format) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*f = ParseFormat(s)
	return nil
}

// WriteMode is how a run writes its batch into an Iceberg table. Specs write it in any case;
// it is read lower-case, as ParseWriteMode puts it.
type WriteMode string

// Write modes.
const (
	WriteAppend    WriteMode = "append"
	WriteOverwrite WriteMode = "overwrite"
	WriteUpsert    WriteMode = "upsert"
)

// WriteModes are the write modes a spec may give (the schema's #WriteMode; a test holds them
// equal).
var WriteModes = []WriteMode{WriteAppend, WriteOverwrite, WriteUpsert}

// ParseWriteMode reads a write mode as a spec or a flag writes it, in any case.
func ParseWriteMode(s string) WriteMode { return WriteMode(strings.ToLower(s)) }

// UnmarshalJSON reads a write mode in any case; the schema says which are allowed.
func (m *WriteMode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*m = ParseWriteMode(s)
	return nil
}

// CatalogType is the kind of Iceberg catalog a spec names. It is case-sensitive, as the schema
// is; "" is CatalogLocal.
type CatalogType string

// Catalog types.
const (
	CatalogLocal CatalogType = "local"
	CatalogSQL   CatalogType = "sql"
	CatalogREST  CatalogType = "rest"
)

// CatalogTypes are the catalog types a spec may give (the schema's #Catalog.type; a test holds
// them equal).
var CatalogTypes = []CatalogType{CatalogLocal, CatalogSQL, CatalogREST}

// ParseCatalogType reads a catalog type as a spec writes it: "" is local.
func ParseCatalogType(s string) CatalogType {
	if s == "" {
		return CatalogLocal
	}
	return CatalogType(s)
}

// Resolved is the type the catalog is: "" is local.
func (t CatalogType) Resolved() CatalogType { return ParseCatalogType(string(t)) }

// IsPostgresURI says whether a sql catalog's uri names a PostgreSQL server rather than a SQLite
// file. The prefixes are the ones the pgx driver reads as a URL; any other uri is a file path,
// which a cluster's pods cannot share (the admission webhook refuses it there).
func IsPostgresURI(uri string) bool {
	return strings.HasPrefix(uri, "postgres://") || strings.HasPrefix(uri, "postgresql://")
}

// Names spells a vocabulary's values as strings, in its order: a flag's choices, an error's
// options.
func Names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
