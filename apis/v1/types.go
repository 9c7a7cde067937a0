package v1

import (
	"encoding/json"
	"fmt"
	"strings"
)

// APIVersion is the only apiVersion this ldp reads.
const APIVersion = "ldp/v1"

// The kinds of object a spec file can hold.
const (
	KindPipeline = "Pipeline"
	KindWorkflow = "Workflow"
)

// Pipeline is a dataset config: load one source into one target, checked by quality rules, one
// window at a time. The JSON field names are the contract's, so a Python ldp config loads as is.
type Pipeline struct {
	APIVersion  string           `json:"apiVersion,omitempty"`
	Kind        string           `json:"kind,omitempty"`
	Identifier  string           `json:"identifier"`
	Description string           `json:"description,omitempty"`
	Who         string           `json:"who,omitempty"`
	What        string           `json:"what,omitempty"`
	Where       string           `json:"where,omitempty"`
	When        string           `json:"when,omitempty"`
	How         string           `json:"how,omitempty"`
	Metadata    PipelineMetadata `json:"metadata"`

	// Path is the file the spec was loaded from; BaseDir is its folder, against which every
	// relative path in the spec resolves. Neither is part of the spec.
	Path    string `json:"-"`
	BaseDir string `json:"-"`
}

// PipelineMetadata is everything a Pipeline does, under the contract's "metadata" key.
type PipelineMetadata struct {
	Source        Source         `json:"source"`
	Target        Target         `json:"target"`
	Quality       *Quality       `json:"quality,omitempty"`
	Transform     *Transform     `json:"transform,omitempty"`
	Docs          *Docs          `json:"docs,omitempty"`
	Schedule      string         `json:"schedule,omitempty"`
	Window        *Window        `json:"window,omitempty"`
	Retries       *Retries       `json:"retries,omitempty"`
	Observability *Observability `json:"observability,omitempty"`
	// Env publishes every window of the pipeline into that environment (an Iceberg branch
	// beside main, docs/environments.md) instead of main: what --env does, written in the spec
	// (so that a Kubernetes object can live in an environment). A name matches EnvNamePattern.
	Env string `json:"env,omitempty"`
	// Upstream lists the dataset configs whose windows a window of this one waits for: every
	// window of theirs that overlaps it must be published first, whatever their window size.
	Upstream []Upstream `json:"upstream,omitempty"`
}

// Upstream is one dependency across objects: a dataset config (by path, relative to the folder
// of the spec that names it) whose windows overlapping a window must be published before that
// window runs. Its windows may be of another size and zone (an hourly config under a daily
// one, a daily one under a weekly one, or the day an hour lies in).
type Upstream struct {
	Pipeline string `json:"pipeline"`
}

// EnvNamePattern is the rule of an environment's name (docs/environments.md): a lowercase
// letter followed by up to 39 lowercase letters, digits, '_' or '-'. "main" is production, not
// an environment. internal/lake checks names with it, and the CUE schema is made from it.
const EnvNamePattern = `^[a-z][a-z0-9_-]{0,39}$`

// Source is where a pipeline reads from.
type Source struct {
	Name        string       `json:"name,omitempty"`
	Format      Format       `json:"format"`
	Path        string       `json:"path,omitempty"`
	Catalog     *Catalog     `json:"catalog,omitempty"`
	SnapshotID  int64        `json:"snapshot_id,omitempty"`
	Engine      string       `json:"engine,omitempty"`
	Credentials *Credentials `json:"credentials,omitempty"`
	Options     *ReadOptions `json:"options,omitempty"`
	// Repository (owner/name), State, BaseURL (GitHub Enterprise) and TokenEnv (the variable
	// holding the token; GITHUB_TOKEN when empty) are a GITHUB source's.
	Repository string `json:"repository,omitempty"`
	State      string `json:"state,omitempty"`
	BaseURL    string `json:"base_url,omitempty"`
	TokenEnv   string `json:"token_env,omitempty"`
	// AllowEmpty says an empty window is valid: it publishes under its key with no rows (an
	// overwrite removes the window's old rows), instead of failing.
	AllowEmpty bool `json:"allow_empty,omitempty"`
	// Query and Inputs are set on the pipeline a workflow's sql task becomes (format SQL): the
	// SELECT, and the tables it reads under each name. Specs do not write them.
	Query  string              `json:"query,omitempty"`
	Inputs map[string]TableRef `json:"inputs,omitempty"`
}

// ReadOptions tune how a source file is read.
type ReadOptions struct {
	Delimiter string `json:"delimiter,omitempty"`
	Header    *bool  `json:"header,omitempty"`
}

// Credentials names a key file; its contents are never read into a spec or a log.
type Credentials struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path"`
}

// Target is where a pipeline writes to: an Iceberg table or a file.
type Target struct {
	Name        string           `json:"name"`
	Format      Format           `json:"format"`
	Path        string           `json:"path,omitempty"`
	Catalog     *Catalog         `json:"catalog,omitempty"`
	WriteMode   WriteMode        `json:"write_mode,omitempty"`
	JoinCols    []string         `json:"join_cols,omitempty"`
	PartitionBy []PartitionField `json:"partition_by,omitempty"`
}

// Catalog says which Iceberg catalog holds the target table.
type Catalog struct {
	// Type is local (the default: a SQLite catalog in the warehouse folder), sql (a
	// PostgreSQL or SQLite database at URI, which several ldp processes can share) or rest (an
	// Iceberg REST catalog server at URI).
	Type CatalogType `json:"type,omitempty"`
	// URI is a sql catalog's database: postgres://USER@HOST:PORT/DB, or a SQLite file. A
	// password is never written here: PostgreSQL's client reads PGPASSWORD.
	URI        string `json:"uri,omitempty"`
	Identifier string `json:"identifier"`
	Namespace  string `json:"namespace,omitempty"`
	// WarehousePath is a folder, or an object-store location (s3://bucket/path) for a shared
	// catalog.
	WarehousePath string `json:"warehouse_path,omitempty"`
	// Warehouse is a rest catalog's warehouse: the name or location its server knows it by.
	Warehouse string `json:"warehouse,omitempty"`
	// TokenEnv and CredentialEnv name the environment variables that hold a rest catalog's
	// bearer token and OAuth2 client credential (id:secret): the values never go in a spec.
	TokenEnv      string `json:"token_env,omitempty"`
	CredentialEnv string `json:"credential_env,omitempty"`
	// Properties pass through to the catalog and its storage (s3.endpoint, s3.region). A secret
	// is never one of them: keys come from the environment (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY), and a rest catalog's token from the variable TokenEnv names.
	Properties map[string]string `json:"properties,omitempty"`
}

// NamespaceName is the Iceberg namespace of the table: catalog.namespace, else the identifier.
func (c *Catalog) NamespaceName() string {
	if c == nil {
		return ""
	}
	if c.Namespace != "" {
		return c.Namespace
	}
	return c.Identifier
}

// PartitionField is one field of a partition spec.
type PartitionField struct {
	Column    string `json:"column"`
	Transform string `json:"transform"`
	Name      string `json:"name,omitempty"`
}

// FieldName is the name of the partition field: Name, else the column's name followed by the
// transform's (the column itself for identity).
func (f PartitionField) FieldName() string {
	if f.Name != "" {
		return f.Name
	}
	t := strings.ToLower(f.Transform)
	switch {
	case t == "identity":
		return f.Column
	case strings.HasPrefix(t, "truncate["):
		return f.Column + "_trunc"
	case strings.HasPrefix(t, "bucket["):
		return f.Column + "_bucket"
	}
	return f.Column + "_" + t
}

// ValidPartitionName reports whether name can name a partition field. Each manifest holds
// the partition as an Avro record, whose field names are [A-Za-z_][A-Za-z0-9_]*: a table
// partitioned by "a.b" is created, and then no write to it can ever be committed.
func ValidPartitionName(name string) bool {
	for i, c := range name {
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return name != ""
}

// PartitionNameHint says how to fix a partition field whose name cannot be used.
func PartitionNameHint(f PartitionField) string {
	fix := strings.Map(func(r rune) rune {
		if r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, f.FieldName())
	if fix == "" || fix[0] >= '0' && fix[0] <= '9' {
		fix = "_" + fix
	}
	fixIt := fmt.Sprintf("add \"name\": %q to this partition_by entry", fix)
	if f.Name != "" {
		fixIt = fmt.Sprintf("change its name to %q", fix)
	}
	return fmt.Sprintf("partition field name %q cannot be stored in Iceberg's manifests (letters, digits and _ only, not first a digit): %s", f.FieldName(), fixIt)
}

// Transform is a DuckDB SELECT over the extracted rows, exposed as the relation "source".
type Transform struct {
	SQL string `json:"sql"`
}

// Docs is the contract of a table; it is written into the table and left out of the spec hash.
type Docs struct {
	Layer       string            `json:"layer,omitempty"`
	Description string            `json:"description,omitempty"`
	Owner       string            `json:"owner,omitempty"`
	Grain       string            `json:"grain,omitempty"`
	PrimaryKey  []string          `json:"primary_key,omitempty"`
	Columns     map[string]string `json:"columns,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Refresh     string            `json:"refresh,omitempty"`
}

// Retries say how a failed run is tried again. Zero values mean "not set" so that a task's
// retries can override a workflow's key by key.
type Retries struct {
	MaxAttempts *int     `json:"max_attempts,omitempty"`
	DelayS      *float64 `json:"delay_s,omitempty"`
	Backoff     *float64 `json:"backoff,omitempty"`
}

// Observability lists the sinks that receive run events besides the ledger.
type Observability struct {
	Sinks []Sink `json:"sinks,omitempty"`
}

// Sink is one destination of run events.
type Sink struct {
	Type      string   `json:"type"`
	Path      string   `json:"path,omitempty"`
	URL       string   `json:"url,omitempty"`
	APIKeyEnv string   `json:"api_key_env,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	TimeoutS  *float64 `json:"timeout_s,omitempty"`
}

// Window says how runs are windowed: "none", or a size with an optional row column and zone.
// It decodes from either form.
type Window struct {
	None     bool   `json:"-"`
	Size     string `json:"size,omitempty"`
	Column   string `json:"column,omitempty"`
	Timezone string `json:"timezone,omitempty"`
	// NullRows is what a run does with rows whose column holds no value (they are in no
	// window): NullRowsFail ("", the default) or NullRowsDrop.
	NullRows string `json:"null_rows,omitempty"`
	// OutsideRows is what a run does with rows of other windows: OutsideRowsLeave ("", the
	// default: they load in their own windows) or OutsideRowsFail.
	OutsideRows string `json:"outside_rows,omitempty"`
	// Delay is how long after its end a window waits for late rows before it may run (a Go
	// duration such as "2h"; "" is none): like Airflow's data interval end, a window is
	// finished only at its end plus the delay, and is published under its key only then.
	Delay string `json:"delay,omitempty"`
}

// What a run does with the rows its window filter drops (metadata.window.null_rows and
// outside_rows). A default is stored as "", so a spec that spells it out hashes as one that
// does not.
const (
	NullRowsFail     = "fail"
	NullRowsDrop     = "drop"
	OutsideRowsLeave = "leave"
	OutsideRowsFail  = "fail"
)

// FailsNullRows reports whether rows with no window value hold the batch back.
func (w *Window) FailsNullRows() bool { return w != nil && w.NullRows != NullRowsDrop }

// FailsOutsideRows reports whether rows of other windows hold the batch back.
func (w *Window) FailsOutsideRows() bool { return w != nil && w.OutsideRows == OutsideRowsFail }

// UnmarshalJSON reads "none" or an object.
func (w *Window) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != "none" {
			return fmt.Errorf("window: want \"none\" or an object, got %q", s)
		}
		*w = Window{None: true}
		return nil
	}
	type plain Window
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*w = Window(p)
	return nil
}

// MarshalJSON writes "none" or the object.
func (w Window) MarshalJSON() ([]byte, error) {
	if w.None {
		return []byte(`"none"`), nil
	}
	type plain Window
	return json.Marshal(plain(w))
}

// Quality is the normalised form of metadata.quality, which may also be written as a bare list
// of checks (on_failure then defaults to "fail").
type Quality struct {
	OnFailure string  `json:"on_failure,omitempty"`
	Checks    []Check `json:"checks"`
}

// UnmarshalJSON reads the list form and the object form.
func (q *Quality) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "[") {
		var cs []Check
		if err := json.Unmarshal(b, &cs); err != nil {
			return err
		}
		*q = Quality{Checks: cs}
		return nil
	}
	type plain Quality
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*q = Quality(p)
	return nil
}

// Check is one quality rule. Which fields apply depends on Check (the rule's name); the schema
// enforces that, so this type is the union of all of them.
type Check struct {
	Check       string   `json:"check"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Equals      any      `json:"equals,omitempty"`
	Columns     *Columns `json:"columns,omitempty"`
	Column      string   `json:"column,omitempty"`
	Values      []any    `json:"values,omitempty"`
	MaxAgeHours *float64 `json:"max_age_hours,omitempty"`
	Now         string   `json:"now,omitempty"`
}

// Columns is a list of column names, or (for the schema check) a map of name to type.
type Columns struct {
	Names []string
	Types map[string]string
}

// UnmarshalJSON reads a list of names or an object of name to type.
func (c *Columns) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		return json.Unmarshal(b, &c.Types)
	}
	return json.Unmarshal(b, &c.Names)
}

// MarshalJSON writes the form it was read in.
func (c Columns) MarshalJSON() ([]byte, error) {
	if c.Types != nil {
		return json.Marshal(c.Types)
	}
	return json.Marshal(c.Names)
}

// Workflow is a set of tasks run in dependency order for each window.
type Workflow struct {
	APIVersion  string           `json:"apiVersion,omitempty"`
	Kind        string           `json:"kind"`
	Identifier  string           `json:"identifier"`
	Description string           `json:"description,omitempty"`
	Metadata    WorkflowMetadata `json:"metadata"`
	Tasks       []Task           `json:"tasks"`

	Path    string `json:"-"`
	BaseDir string `json:"-"`
}

// WorkflowMetadata holds when a workflow runs and how its windows are laid.
type WorkflowMetadata struct {
	Schedule string  `json:"schedule,omitempty"`
	Window   *Window `json:"window,omitempty"`
	Catchup  bool    `json:"catchup,omitempty"`
	Start    string  `json:"start,omitempty"`
	// End, when set, ends the schedule: no window that ends after it is expected (the data
	// stops there), so the schedule runs none and status counts none as missing.
	End           string         `json:"end,omitempty"`
	Retries       *Retries       `json:"retries,omitempty"`
	Observability *Observability `json:"observability,omitempty"`
}

// Task is one step of a workflow; exactly one of its kinds is set.
type Task struct {
	ID        string   `json:"id"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Upstream are dataset configs outside the workflow whose windows overlapping a window of
	// the workflow must be published before the window runs (as a Pipeline's metadata.upstream).
	Upstream []Upstream    `json:"upstream,omitempty"`
	Retries  *Retries      `json:"retries,omitempty"`
	Pipeline string        `json:"pipeline,omitempty"`
	Maintain *MaintainTask `json:"maintain,omitempty"`
	Dbt      *DbtTask      `json:"dbt,omitempty"`
	SQL      *SQLTask      `json:"sql,omitempty"`
}

// Kind names the one kind the task has.
func (t Task) Kind() TaskKind {
	switch {
	case t.Pipeline != "":
		return TaskPipeline
	case t.Maintain != nil:
		return TaskMaintain
	case t.Dbt != nil:
		return TaskDbt
	case t.SQL != nil:
		return TaskSQL
	}
	return ""
}

// MaintainTask runs ldp maintain on the table of a dataset config; a dry run unless Apply.
type MaintainTask struct {
	Config               string   `json:"config"`
	Expire               *int     `json:"expire,omitempty"`
	RetainLast           *int     `json:"retain_last,omitempty"`
	Orphans              bool     `json:"orphans,omitempty"`
	OrphanAgeHours       *float64 `json:"orphan_age_hours,omitempty"`
	Force                bool     `json:"force,omitempty"`
	KeepMetadataVersions *int     `json:"keep_metadata_versions,omitempty"`
	Apply                bool     `json:"apply,omitempty"`
}

// DbtTask runs a dbt project for the window of the run.
type DbtTask struct {
	Project       string         `json:"project"`
	Command       string         `json:"command,omitempty"`
	Select        StringList     `json:"select,omitempty"`
	Exclude       StringList     `json:"exclude,omitempty"`
	Vars          map[string]any `json:"vars,omitempty"`
	SkipUnchanged *bool          `json:"skip_unchanged,omitempty"`
	DbtBin        string         `json:"dbt_bin,omitempty"`
}

// SQLTask builds an Iceberg table from tables with one SELECT, for each window of the
// workflow, published exactly once under its own key like a load.
type SQLTask struct {
	// Query is the SELECT; QueryFile a file holding it, relative to the workflow file.
	Query     string `json:"query,omitempty"`
	QueryFile string `json:"query_file,omitempty"`
	// Inputs name the views the query reads: a dataset config (its Iceberg target), relative
	// to the workflow file, or "namespace.table" in the target's catalog.
	Inputs  map[string]string `json:"inputs"`
	Target  Target            `json:"target"`
	Quality *Quality          `json:"quality,omitempty"`
	// WindowColumn holds each result row's time: an overwrite replaces only the window's rows,
	// and --replace needs it.
	WindowColumn string `json:"window_column,omitempty"`
}

// TableRef is an Iceberg table: its catalog and name.
type TableRef struct {
	Catalog *Catalog `json:"catalog"`
	Name    string   `json:"name"`
}

// StringList is a list of strings that may also be written as one string.
type StringList []string

// UnmarshalJSON reads a string or a list of strings.
func (l *StringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = StringList{s}
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return err
	}
	*l = ss
	return nil
}
