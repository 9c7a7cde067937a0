// Package pipeline runs one Pipeline: extract the source into DuckDB, apply the optional SQL
// transform, run the quality checks, and write the batch to its target only if they pass.
// Routes (source format to target format) are a registry, so a new format is one registration.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/formats"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/quality"
	"github.com/ldp-dev/ldp/internal/sources"
	"github.com/ldp-dev/ldp/internal/window"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Route is a source format and a target format.
type Route struct {
	Source v1.Format `json:"source"`
	Target v1.Format `json:"target"`
}

func (r Route) String() string { return string(r.Source) + " -> " + string(r.Target) }

// writer writes a checked batch (the relation "ldp_batch") to the target of a run.
type writer func(ctx context.Context, r *run) error

var routes = map[Route]writer{}

func register(src, tgt v1.Format, w writer) { routes[Route{Source: src, Target: tgt}] = w }

// The routes are every source format a spec may give into every target format, but an
// Iceberg table into an Iceberg table (schemas refuses it too): a new format in apis/v1's
// lists is a route once internal/formats reads or writes it.
func init() {
	for _, src := range v1.SourceFormats {
		for _, tgt := range v1.TargetFormats {
			switch {
			case src == v1.FormatIceberg && tgt == v1.FormatIceberg:
			case tgt == v1.FormatIceberg:
				register(src, tgt, writeIceberg)
			default:
				register(src, tgt, writeFile)
			}
		}
	}
}

// SQL is the source format of the pipeline a workflow's sql task becomes: a SELECT over
// Iceberg tables. No spec writes it, so it is not among the routes a spec can take.
const SQL v1.Format = "SQL"

// DBT is the source format of the pipeline that publishes a dbt model: a table of the DuckDB
// file dbt built (Path, relative to the project) named Name (schema.table).
const DBT v1.Format = "DBT"

var modelRoutes = map[Route]writer{{Source: SQL, Target: v1.FormatIceberg}: writeIceberg, {Source: DBT, Target: v1.FormatIceberg}: writeIceberg}

// Routes lists the registered routes, sorted.
func Routes() []Route {
	out := make([]Route, 0, len(routes))
	for r := range routes {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// RouteOf is the route a pipeline takes; an unknown pair is a config error listing the routes.
func RouteOf(p *v1.Pipeline) (Route, error) {
	r := Route{Source: v1.ParseFormat(string(p.Metadata.Source.Format)), Target: v1.ParseFormat(string(p.Metadata.Target.Format))}
	if _, ok := routes[r]; ok {
		return r, nil
	}
	if _, ok := modelRoutes[r]; ok {
		return r, nil
	}
	var names []string
	for _, x := range Routes() {
		names = append(names, x.String())
	}
	return r, &ldperr.ConfigError{File: p.Path, Msg: fmt.Sprintf("no pipeline for %s; the routes are: %s", r, strings.Join(names, ", "))}
}

// Options change how a run goes.
type Options struct {
	// Mode overrides the spec's write mode.
	Mode v1.WriteMode
	// Window is the logical window of the run; zero is none.
	Window v1.LogicalWindow
	// RunID and Attempt identify the run; with a window or a run id, an Iceberg target is
	// published exactly once through the staged protocol. Attempt 0 is 1.
	RunID   string
	Attempt int
	// Key overrides the idempotency key of the window (to redo a window on purpose).
	Key string
	// Now is the clock freshness checks read when a check has no now of its own.
	Now func() time.Time
	// Log receives one line per quality check and the run's warnings (stderr in the CLI).
	Log io.Writer
	// Hook is passed to the publish (a test seam; nil in production).
	Hook func(point string)
	// Sinks receive the run's events; Warn their failures. Version is ldp's, for the events.
	Sinks   []ledger.Sink
	Warn    func(string)
	Version string
	// Group, when set, publishes a first-attempt append in one commit with the windows of
	// other runs of the process (a backfill).
	Group *lake.Group
	// Sniffs, when set, are the CSV layouts shared by the windows of a backfill.
	Sniffs *Sniffs
	// LockTimeout bounds the wait for the table's lock; 0 is v1.DefaultLockTimeout.
	LockTimeout time.Duration
	// Env, when set, publishes into that environment's branch of the target (lake.EnvBranch)
	// and reads each Iceberg source and SQL input from that environment where it has written
	// the table, from main elsewhere.
	Env string
}

// staged reports whether a run publishes through the exactly-once protocol.
func (o Options) staged() bool { return !o.Window.IsZero() || o.RunID != "" || o.Key != "" }

// EnvOf is the environment a run of p asked for env publishes into: env, or the spec's
// metadata.env when env is "". A spec that names an environment runs in no other (as kubectl
// refuses a namespace other than the manifest's): a *ldperr.ConfigError saying so.
func EnvOf(p *v1.Pipeline, env string) (string, error) {
	own := p.Metadata.Env
	switch {
	case own == "" || env == own:
		return env, nil
	case env == "":
		return own, nil
	}
	return "", &ldperr.ConfigError{File: p.Path, Msg: fmt.Sprintf("metadata.env is %s, so its windows publish into environment %s only; it was asked to publish into %s: drop --env, or change metadata.env", own, own, env)}
}

// run is the state of one run.
type run struct {
	p    *v1.Pipeline
	opts Options
	db   *engine.DB
	res  *v1.PipelineResult
	win  window.Spec
	// colType is the DuckDB type of the window column, once the source is read.
	colType string
	// skipped is set when the key was found on main (before the run, or at publish).
	skipped bool
	rec     *ledger.Recorder
	isKeyed bool
	// cleanup removes what the run staged on disk, when it ends.
	cleanup []func()
	// localSource is the file DuckDB reads for a file source: the spec's, or a copy of an
	// object-store source.
	localSource string
	// staged is the Parquet file (or folder of files split by stagedParts) a file source was
	// read into ("" for an Iceberg source).
	staged      string
	stagedParts []string
	// inputs are the snapshots a SQL model read, by input name.
	inputs map[string]int64
	// cols are the extracted columns (those of "source" too).
	cols []engine.Column
	// readExpr is what DuckDB read a file source through, and where the window's condition on
	// its rows: with them a refused value is found again in the file.
	readExpr, where string
	// err is how the run ended, for its events' public message.
	err error
	// cat is the target's catalog, once opened (targetCatalog).
	cat *lake.Catalog
	// sniff is how a CSV source was read with the backfill's shared sniffs (nil: as a window
	// alone reads it).
	sniff *sniffing
	// batch is the run's share of its group's read (nil: read alone), and rel the relation
	// its batch is then read through instead of the view ldp_batch ("" for that view).
	batch *windowRead
	rel   string
}

// batchRel is the relation the checks and the write read the run's batch from.
func (r *run) batchRel() string {
	if r.rel != "" {
		return r.rel
	}
	return "ldp_batch"
}

// stagingDir is a scratch folder of the run: in the target's warehouse for an Iceberg target
// (so the extracted file can become the table's data file by a link), else a temporary one.
func (r *run) stagingDir() (string, error) {
	if t := r.p.Metadata.Target; r.toIceberg() && t.Catalog != nil {
		return lake.StagingDir(t.Catalog, r.p.BaseDir)
	}
	return os.MkdirTemp("", "ldp-extract-")
}

// stage writes the rows of SELECT sel FROM from to Parquet in dir and returns what reads them.
// For an append to a partitioned Iceberg table the files are split as the table's are, so
// they can become its data files as they are (see prewritten).
func (r *run) stage(ctx context.Context, dir, sel, from string, cols []engine.Column) (string, int64, error) {
	t := r.p.Metadata.Target
	if r.toIceberg() && len(t.PartitionBy) > 0 && r.res.Mode == v1.WriteAppend && r.p.Metadata.Transform == nil {
		cast := make([]engine.Column, len(cols))
		for i, c := range cols {
			cast[i] = c
			if ct := engine.IcebergCast(c.Type); ct != "" {
				cast[i].Type = ct
			}
		}
		if exprs, ok := lake.PartitionExprs(cast, t.PartitionBy); ok {
			var keys, aliases []string
			for i, e := range exprs {
				a := "__ldp_p" + strconv.Itoa(i)
				keys, aliases = append(keys, e+" AS "+a), append(aliases, a)
			}
			out := filepath.Join(dir, "extract")
			n, err := r.db.ExecCount(ctx, fmt.Sprintf("COPY (SELECT %s, %s FROM %s) TO %s (FORMAT parquet, COMPRESSION snappy, PARTITION_BY (%s), FILENAME_PATTERN 'part-{i}')",
				sel, strings.Join(keys, ", "), from, engine.Lit(out), strings.Join(aliases, ", ")))
			if err != nil {
				return "", 0, r.readError(err)
			}
			if n > 0 {
				r.staged, r.stagedParts = out, exprs
				return fmt.Sprintf("read_parquet(%s, hive_partitioning = false)", engine.Lit(filepath.Join(out, "**", "*.parquet"))), n, nil
			}
			os.RemoveAll(out) // no rows: no files to read back; stage one empty file instead
		}
	}
	r.staged = filepath.Join(dir, "extract.parquet")
	n, err := r.db.ExecCount(ctx, fmt.Sprintf("COPY (SELECT %s FROM %s) TO %s (FORMAT parquet, COMPRESSION snappy)", sel, from, engine.Lit(r.staged)))
	if err != nil {
		return "", 0, r.readError(err)
	}
	return fmt.Sprintf("read_parquet(%s)", engine.Lit(r.staged)), n, nil
}

// prewritten is the extracted file when it holds exactly the batch: no transform changed the
// rows and the window kept every row read.
func (r *run) prewritten() string {
	if r.staged == "" || r.p.Metadata.Transform != nil || r.res.RowsKept != r.res.RowsRead {
		return ""
	}
	return r.staged
}

// Stages of a run, as failures name them.
const (
	StageExtract   = "extract"
	StageTransform = "transform"
	StageValidate  = "validate"
	StageWrite     = "write"
)

// StageError is a run that failed in one stage.
type StageError struct {
	Stage string
	Err   error
}

func (e *StageError) Error() string { return e.Err.Error() }
func (e *StageError) Unwrap() error { return e.Err }

// Run runs a pipeline once. With a window, a run id or a key, an Iceberg target is published
// exactly once through the staged protocol; otherwise it is written directly. The result is
// returned with the error too, so a blocked or failed run still reports what it read and
// checked. Every run leaves its events in opts.Sinks (the ledger, and the spec's sinks).
func Run(ctx context.Context, p *v1.Pipeline, opts Options) (*v1.PipelineResult, error) {
	start := time.Now()
	route, err := RouteOf(p)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Attempt < 1 {
		opts.Attempt = 1
	}
	staged := opts.staged() && p.IsIceberg() // decided before a run id is made up
	env, err := EnvOf(p, opts.Env)
	if err != nil {
		return nil, err
	}
	opts.Env = env
	if opts.Env != "" {
		if err := lake.CheckEnvName(opts.Env); err != nil {
			return nil, &ldperr.ConfigError{File: p.Path, Err: err}
		}
		if !staged {
			return nil, &ldperr.ConfigError{File: p.Path, Msg: fmt.Sprintf("environment %s: only a keyed publish to an Iceberg table goes into an environment; give the run a --window (or --run-id), and an Iceberg target", opts.Env)}
		}
	}
	if opts.RunID == "" {
		opts.RunID = uuid.Must(uuid.NewV7()).String()
	}
	mode := v1.ParseWriteMode(string(opts.Mode))
	if mode == "" {
		mode = p.Metadata.Target.WriteMode
	}
	win, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return nil, &ldperr.ConfigError{File: p.Path, Err: err}
	}
	r := &run{p: p, opts: opts, win: win, isKeyed: staged, res: &v1.PipelineResult{Pipeline: p.Identifier, Route: route.String(), Target: targetName(p),
		Mode: mode, Window: opts.Window.String(), Env: opts.Env, RunID: opts.RunID, Attempt: opts.Attempt}}
	if r.res.SpecHash, err = p.SpecHash(); err != nil {
		return nil, err
	}
	if r.keyed() {
		r.res.Key = opts.Key
		if r.res.Key == "" {
			r.res.Key = p.IdempotencyKey(opts.Window)
		}
	}
	r.rec = ledger.NewRecorder(opts.RunID, opts.Attempt, opts.Sinks, opts.Warn)
	defer r.rec.Close()
	r.rec.Record(ctx, r.startedPayload())
	write := routes[route]
	if write == nil {
		write = modelRoutes[route]
	}
	err = r.execute(ctx, write)
	for _, f := range r.cleanup {
		f()
	}
	r.res.DurationS = time.Since(start).Seconds()
	r.err = err
	switch {
	case err == nil && r.skipped:
		r.res.Status = v1.PipelineSkippedDuplicate
		r.rec.Record(ctx, ledger.RunSkippedDuplicatePayload{IdempotencyKey: r.res.Key, SnapshotID: r.res.SnapshotID})
	case err == nil:
		r.res.Status = v1.PipelinePublished
		if r.sniff != nil && !r.sniff.shared {
			// Only a layout that published is shared: a window that read a bad value as text
			// must not make the next windows read theirs so.
			r.opts.Sniffs.put(r.sniff.key, r.sniff.sniffed)
		}
		r.rec.Record(ctx, r.publishedPayload())
	case ldperr.IsDataGate(err):
		r.res.Status = v1.PipelineBlocked
		r.res.Error = err.Error()
		var fails []ledger.Failure
		if r.res.Quality != nil {
			for _, f := range r.res.Quality.Failures() {
				fails = append(fails, ledger.Failure{Name: f.Name, Check: f.Check, Details: f.Details, FailingRows: f.FailingRows})
			}
		}
		r.rec.Record(ctx, ledger.RunBlockedQualityPayload{Failures: fails})
	default:
		r.res.Status = v1.PipelineFailed
		r.res.Error = err.Error()
		var se *StageError
		stage := ""
		if errors.As(err, &se) {
			stage = se.Stage
		}
		r.res.Stage = stage
		r.rec.Record(ctx, ledger.RunFailedPayload{Stage: stage, ErrorType: errorType(err), Message: ldperr.Public(err)})
	}
	r.rec.Record(ctx, r.finishedPayload())
	return r.res, err
}

// keyed reports whether the run publishes through the exactly-once protocol.
func (r *run) keyed() bool { return r.isKeyed }

// execute checks for the key, then runs the stages in one DuckDB session.
func (r *run) execute(ctx context.Context, write writer) error {
	// A window already published is done: nothing is read.
	if r.keyed() {
		done, err := r.published(ctx)
		if err != nil {
			return &StageError{Stage: StageWrite, Err: err}
		}
		if done {
			r.skipped = true
			return nil
		}
	}
	db, err := engine.Open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	r.db = db
	return r.stages(ctx, write)
}

func (r *run) stages(ctx context.Context, write writer) error {
	if err := r.extract(ctx); err != nil {
		return &StageError{Stage: StageExtract, Err: err}
	}
	if r.opts.Hook != nil {
		r.opts.Hook("extracted")
	}
	schema := make([]ledger.Column, len(r.cols))
	for i, c := range r.cols {
		schema[i] = ledger.Column{Name: c.Name, Type: c.Type}
	}
	r.rec.Record(ctx, ledger.RunExtractedPayload{RowsRead: r.res.RowsRead, RowsKept: r.res.RowsKept,
		RowsOutside: r.res.RowsOutside, RowsNoWindowValue: r.res.RowsNoWindow, Schema: schema, SourcePath: r.res.SourcePath})
	if err := r.transform(ctx); err != nil {
		return &StageError{Stage: StageTransform, Err: err}
	}
	if err := r.validate(ctx); err != nil {
		return &StageError{Stage: StageValidate, Err: err}
	}
	if err := write(ctx, r); err != nil {
		return &StageError{Stage: StageWrite, Err: err}
	}
	return nil
}

// resolve makes a spec path absolute against the spec's folder.
func (r *run) resolve(p string) string { return resolvePath(r.p.BaseDir, p) }

// resolvePath is p against base: a path relative to the spec's folder is joined to it; an
// absolute path or a URL (s3://) stands as it is.
func resolvePath(base, p string) string {
	if filepath.IsAbs(p) || strings.Contains(p, "://") {
		return p
	}
	return filepath.Join(base, p)
}

func (r *run) toIceberg() bool { return r.p.Metadata.Target.Format == v1.FormatIceberg }

// extract reads the source and makes the view "source" of the rows the run keeps.
func (r *run) extract(ctx context.Context) error {
	src := r.p.Metadata.Source
	var from string
	var cols []engine.Column
	if src.Format == v1.FormatIceberg {
		cat, err := lake.Open(ctx, src.Catalog, r.p.BaseDir)
		if err != nil {
			return err
		}
		defer cat.Close()
		tbl, err := cat.Load(ctx, lake.RefOfSource(src))
		if err != nil {
			return err
		}
		if src.SnapshotID == 0 {
			if tbl, _, err = lake.OnEnv(tbl, r.opts.Env); err != nil {
				return err
			}
		}
		if err := lake.RegisterView(ctx, r.db, "ldp_source", tbl, src.SnapshotID); err != nil {
			return err
		}
		from = "ldp_source"
	} else if src.Format == SQL {
		if err := r.registerInputs(ctx); err != nil {
			return err
		}
		from = subquery(src.Query)
	} else if src.Format == DBT {
		if err := r.db.Exec(ctx, fmt.Sprintf("ATTACH %s AS ldp_dbt (READ_ONLY)", engine.Lit(r.resolve(src.Path)))); err != nil {
			return err
		}
		schema, table, _ := strings.Cut(src.Name, ".")
		from = "ldp_dbt." + engine.Ident(schema) + "." + engine.Ident(table)
	} else if sources.Is(src) {
		dir, err := os.MkdirTemp("", "ldp-source-")
		if err != nil {
			return err
		}
		r.cleanup = append(r.cleanup, func() { os.RemoveAll(dir) })
		in := sources.Input{Window: r.opts.Window, RunID: r.opts.RunID, Attempt: r.opts.Attempt, Dir: dir, BaseDir: r.p.BaseDir, SpecFile: r.p.Path}
		if from, err = sources.Extract(ctx, src, in); err != nil {
			return err
		}
	} else {
		path, err := window.FillPath(src.Path, r.opts.Window, r.win.Location)
		if err != nil {
			return &ldperr.ConfigError{File: r.p.Path, Err: err}
		}
		r.res.SourcePath = path
		full := r.resolve(path)
		if lake.IsRemote(full) {
			if full, err = r.download(ctx, full); err != nil {
				return err
			}
		}
		r.localSource = full
		if _, err := formats.Source(src.Format, full, src.Options); err != nil {
			return err // before any sniff: a missing file says so
		}
		if wr := r.fromBatch(ctx); wr != nil {
			r.takeBatch(wr)
			return nil
		}
		if fast, sn, ok := r.fastCSV(ctx, full); ok {
			from, cols, r.sniff = fast, sn.sniffed.Cols, sn
		} else if from, cols, err = r.readFile(ctx); err != nil {
			return err
		}
		r.readExpr = from
	}
	sel, cols, err := r.selectOf(ctx, from, cols)
	if err != nil {
		return err
	}
	// A file source is read once, streaming, into a Parquet file of the run; everything after
	// reads that file through views. Nothing is held whole in memory (a 10 M-row CSV took 4
	// times DuckDB's own peak when it was a temporary table), the checks read only the columns
	// they need, and the run sees one version of a file even if it is replaced meanwhile.
	n := int64(-1) // the rows staged, which COPY counted; unknown for a source read in place
	if from != "ldp_source" {
		dir, err := r.stagingDir()
		if err != nil {
			return err
		}
		r.cleanup = append(r.cleanup, func() { os.RemoveAll(dir) })
		staged, rows, err := r.stage(ctx, dir, sel, from, cols)
		if r.sniff != nil && (err != nil || rows == 0) {
			// Read with a sniff of its own, as a window alone reads it: what failed (or kept
			// no row) fails (or is empty) as it always was, in the types and words it was.
			r.sniff = nil
			os.RemoveAll(filepath.Join(dir, "extract"))
			if from, cols, err = r.readFile(ctx); err != nil {
				return err
			}
			r.readExpr = from
			if sel, cols, err = r.selectOf(ctx, from, cols); err != nil {
				return err
			}
			staged, rows, err = r.stage(ctx, dir, sel, from, cols)
		}
		if err != nil {
			return err
		}
		from, n, sel = staged, rows, "*"
	}
	if err := r.db.Exec(ctx, fmt.Sprintf("CREATE TEMP VIEW ldp_extract AS SELECT %s FROM %s", sel, from)); err != nil {
		return r.readError(err)
	}
	if n < 0 {
		if n, err = r.db.Count(ctx, "ldp_extract"); err != nil {
			return err
		}
	}
	r.res.RowsRead = n
	// The views over the extract are the run's own and never replaced, and the staged file is
	// never rewritten, so their columns are described once and pinned: the checks, the key
	// checks and the write (which describes the staged file to link it) ask again, and each
	// DESCRIBE of a view chain was a few ms of a small window.
	if sel == "*" {
		if r.cols = stagedAs(r.sniff, r.toIceberg()); r.cols == nil {
			if r.cols, err = r.db.Columns(ctx, from); err != nil {
				return err
			}
		}
		r.db.Pin(from, r.cols)
	} else if r.cols, err = r.db.Columns(ctx, "ldp_extract"); err != nil {
		return err
	}
	r.db.Pin("ldp_extract", r.cols)
	// With a window and a window column, only the window's rows go on, right after the
	// extract, so the transform and the checks see only them.
	where := "true"
	c := r.win.Column
	if c != "" && !r.opts.Window.IsZero() {
		for _, col := range r.cols {
			if strings.EqualFold(col.Name, c) { // names resolve without case, as the table's do
				r.colType = col.Type
			}
		}
		if r.colType == "" {
			if err := windowColumnError(r.p, r.cols); err != nil {
				return err
			}
			return &ldperr.ConfigError{File: r.p.Path, Msg: fmt.Sprintf("window column %q is not in the source", c)}
		}
		// A source of no rows (a header-only drop) gives its columns no types: it keeps no
		// rows whatever the window, and is reported as an empty window, not a bad column.
		if n > 0 {
			if where, err = window.Filter(c, r.colType, r.opts.Window, r.win.Location); err != nil {
				if bad := r.badTimestamp(ctx, c); bad != nil {
					return bad
				}
				return &ldperr.ConfigError{File: r.p.Path, Err: err}
			}
		}
	}
	r.where = where
	if r.p.Metadata.Transform != nil { // with none, ldp_batch is this view (transform)
		if err := r.db.Exec(ctx, "CREATE TEMP VIEW source AS SELECT * FROM ldp_extract WHERE "+where); err != nil {
			return err
		}
		r.db.Pin("source", r.cols)
	}
	if where == "true" {
		r.res.RowsKept = n // no window filter: every row read is kept
		return nil
	}
	// The rows kept and those with no window value in one pass, the statement that counted
	// the rows kept before: what the window leaves out is never silent (issue 33), and a
	// backfill's windows take no extra statement.
	var kept, nulls int64
	if err := r.db.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FILTER (WHERE %s), count(*) FILTER (WHERE %s IS NULL) FROM ldp_extract",
		where, engine.Ident(c)), &kept, &nulls); err != nil {
		return err
	}
	r.res.RowsKept, r.res.RowsNoWindow, r.res.RowsOutside = kept, nulls, n-kept-nulls
	return nil
}

// stagedAs are the columns of the Parquet file a CSV file read with a sniff's types was staged
// in, when Parquet keeps each of those types as it is (so no DESCRIBE need ask); nil otherwise.
func stagedAs(sn *sniffing, toIceberg bool) []engine.Column {
	if sn == nil {
		return nil
	}
	out := make([]engine.Column, len(sn.sniffed.Cols))
	for i, c := range sn.sniffed.Cols {
		out[i] = c
		if ct := engine.IcebergCast(c.Type); toIceberg && ct != "" {
			out[i].Type = ct
		}
		switch out[i].Type {
		case "BOOLEAN", "BIGINT", "DATE", "TIMESTAMP", "VARCHAR":
		default:
			return nil
		}
	}
	return out
}

// readFile reads the run's file source as DuckDB sniffs it: the expression that reads it, and
// its columns when that expression is the plain read (nil when they need describing).
func (r *run) readFile(ctx context.Context) (string, []engine.Column, error) {
	src := r.p.Metadata.Source
	expr, err := formats.Source(src.Format, r.localSource, src.Options)
	if err != nil {
		return "", nil, err
	}
	sniffed, err := r.db.Columns(ctx, expr)
	if err != nil {
		return "", nil, r.readError(err)
	}
	from, err := formats.Read(ctx, r.db, src.Format, r.localSource, src.Options, sniffed, r.win.Location)
	if err != nil {
		return "", nil, err
	}
	if from != expr {
		sniffed = nil
	}
	return from, sniffed, nil
}

// selectOf is the select list that stages the rows of from (whose columns are cols, or nil to
// describe them), cast to Iceberg's types for an Iceberg target.
func (r *run) selectOf(ctx context.Context, from string, cols []engine.Column) (string, []engine.Column, error) {
	if cols == nil {
		var err error
		if cols, err = r.db.Columns(ctx, from); err != nil {
			return "", nil, r.readError(err)
		}
	}
	if r.toIceberg() {
		return engine.IcebergSelect(cols), cols, nil
	}
	return "*", cols, nil
}

// sourceName names the source in what a run says of its rows: the file read, or the table.
func (r *run) sourceName() string {
	src := r.p.Metadata.Source
	switch {
	case r.res.SourcePath != "":
		return r.res.SourcePath
	case src.Format == v1.FormatIceberg:
		return lake.RefOfSource(src).String()
	case src.Format == SQL:
		return "the query of " + src.Name
	}
	return sources.Name(src)
}

// windowRules are the rules of metadata.window over the rows the window filter dropped, as
// checks: rows with no window value fail the batch unless null_rows is "drop", rows of other
// windows only when outside_rows is "fail". A rule that holds adds no check; what it let go
// is said in notes, for the run's log.
func (r *run) windowRules() (failed []v1.CheckResult, notes []string) {
	w, c, src := r.p.Metadata.Window, r.win.Column, r.sourceName()
	if n := r.res.RowsNoWindow; n > 0 {
		if w.FailsNullRows() {
			fix := `fill the column at the source, or set "null_rows": "drop" in metadata.window to load the window without them`
			if r.p.Metadata.Source.Format == SQL {
				fix = "leave them out in the query" // a workflow's sql task has no metadata.window
			}
			failed = append(failed, v1.CheckResult{Name: "null_rows(" + c + ")", Check: "null_rows", FailingRows: n, Metrics: map[string]float64{"rows": float64(n)},
				Details: fmt.Sprintf("%s of %s %s no %s, so %s in no window; %s", rowsOf(n), src, verb(n, "has", "have"), c, verb(n, "it is", "they are"), fix)})
		} else {
			notes = append(notes, fmt.Sprintf(`%s of %s with no %s dropped (metadata.window.null_rows is "drop")`, rowsOf(n), src, c))
		}
	}
	if n := r.res.RowsOutside; n > 0 {
		if w.FailsOutsideRows() {
			failed = append(failed, v1.CheckResult{Name: "outside_rows(" + c + ")", Check: "outside_rows", FailingRows: n, Metrics: map[string]float64{"rows": float64(n)},
				Details: fmt.Sprintf(`%s of %s %s outside the window %s; fix the source, or set "outside_rows": "leave" in metadata.window to leave them for their own windows`,
					rowsOf(n), src, verb(n, "is", "are"), r.opts.Window)})
		} else {
			notes = append(notes, fmt.Sprintf("%s of %s outside the window %s left for %s", rowsOf(n), src, verb(n, "was", "were"), verb(n, "its own window", "their own windows")))
		}
	}
	return failed, notes
}

func rowsOf(n int64) string { return fmt.Sprintf("%d %s", n, verb(n, "row", "rows")) }

func verb(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// badTimestamp explains a CSV window column read as text: the file, the line and the first
// value that is neither a date nor a timestamp (a column of timestamps with one bad value is
// sniffed as VARCHAR). Nil when no such value is found.
func (r *run) badTimestamp(ctx context.Context, column string) error {
	if r.p.Metadata.Source.Format != v1.FormatCSV || !strings.EqualFold(r.colType, "VARCHAR") || r.localSource == "" {
		return nil
	}
	expr, err := formats.Source(v1.FormatCSV, r.localSource, r.p.Metadata.Source.Options)
	if err != nil {
		return nil
	}
	c := engine.Ident(column)
	q := fmt.Sprintf(`SELECT n, v FROM (SELECT row_number() OVER () AS n, %[1]s AS v FROM %[2]s)
		WHERE v IS NOT NULL AND trim(v) <> '' AND TRY_CAST(v AS TIMESTAMP) IS NULL AND TRY_CAST(v AS TIMESTAMPTZ) IS NULL
			AND NOT (length(trim(v)) = 10 AND TRY_CAST(v AS DATE) IS NOT NULL)
		ORDER BY n LIMIT 1`, c, expr)
	var n int64
	var v string
	if err := r.db.QueryRow(ctx, q, &n, &v); err != nil {
		return nil
	}
	line := n
	if h := r.p.Metadata.Source.Options; h == nil || h.Header == nil || *h.Header {
		line++ // the header is line 1
	}
	return &formats.ReadFailedError{Path: r.res.SourcePath, Line: strconv.FormatInt(line, 10),
		Msg: fmt.Sprintf("window column %q holds %q, which is neither a date nor a timestamp; fix the value, or read the column in metadata.transform.sql", column, v)}
}

// published opens the target and reports whether the run's key is already on main.
func (r *run) published(ctx context.Context) (bool, error) {
	t := r.p.Metadata.Target
	cat, err := r.targetCatalog(ctx)
	if err != nil {
		return false, err
	}
	tbl, err := cat.Load(ctx, lake.RefOf(t))
	var nf *lake.NotFoundError
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s, findErr := r.findPublished(tbl)
	// A zombie that wakes after a later attempt began reads nothing: it is fenced.
	if err := lake.CheckFence(tbl, r.opts.RunID, r.opts.Attempt); err != nil && s == nil {
		return false, err
	}
	if findErr != nil || s == nil {
		return false, findErr
	}
	r.res.SnapshotID = s.SnapshotID
	return true, nil
}

// findPublished is the snapshot on main that vouches for the run's window: one under the run's
// key or, for a run under the window's own key, under one of its replace keys (a window that a
// replace loaded first is done). A run under a key of its own (a replace, --idempotency-key)
// looks for that key only.
func (r *run) findPublished(tbl *table.Table) (*table.Snapshot, error) {
	keys := v1.WindowKeys(r.res.Key, nil)
	if r.opts.Key == "" {
		keys = v1.WindowKeys(r.res.Key, lake.SpecHashes(tbl))
	}
	for k := range keys {
		if s, err := lake.FindEnvKey(context.Background(), tbl, r.opts.Env, k, time.Now()); err != nil || s != nil {
			return s, err
		}
	}
	return nil, nil
}

func (r *run) readError(err error) error {
	src := r.p.Metadata.Source
	switch {
	case src.Format == SQL:
		return &ldperr.ConfigError{File: r.p.Path, Msg: fmt.Sprintf("task %s: the query failed: %v", src.Name, err)}
	case src.Format == DBT:
		return fmt.Errorf("read model %s from dbt's database: %w", src.Name, err)
	case src.Format == v1.FormatIceberg:
		return err
	}
	return formats.ReadError(src.Format, r.localSource, src.Options, err)
}

// objectProps are the storage settings for a file source or target in an object store: the
// properties of the spec's catalog, if it has one; the environment gives the rest.
func objectProps(p *v1.Pipeline) map[string]string {
	for _, c := range []*v1.Catalog{p.Metadata.Target.Catalog, p.Metadata.Source.Catalog} {
		if c != nil {
			return c.Properties
		}
	}
	return nil
}

// download copies a source object to a scratch file of the run, for DuckDB to read.
func (r *run) download(ctx context.Context, loc string) (string, error) {
	dir, err := os.MkdirTemp("", "ldp-source-")
	if err != nil {
		return "", err
	}
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(dir) })
	local := filepath.Join(dir, path.Base(loc))
	if err := lake.Download(ctx, loc, local, objectProps(r.p)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &formats.SourceMissingError{Path: loc}
		}
		return "", fmt.Errorf("read source %s: %w", loc, err)
	}
	return local, nil
}

// transform runs metadata.transform.sql over "source" into "ldp_batch", or makes "ldp_batch"
// the extracted rows.
func (r *run) transform(ctx context.Context) error {
	t := r.p.Metadata.Transform
	if r.batch != nil {
		if _, ok := r.batchReport(); ok {
			return nil // read through r.rel: no view to make, none to drop
		}
		// Checked alone (quality.Grouped.Report): over the view the checks read.
		if err := r.db.Exec(ctx, "CREATE TEMP VIEW ldp_batch AS SELECT * FROM "+r.rel); err != nil {
			return err
		}
		r.rel = ""
		r.db.Pin("ldp_batch", r.cols)
		r.db.PinCount("ldp_batch", r.res.RowsKept)
		return nil
	}
	if t == nil {
		if err := r.db.Exec(ctx, "CREATE TEMP VIEW ldp_batch AS SELECT * FROM ldp_extract WHERE "+r.where); err != nil {
			return err
		}
		r.db.Pin("ldp_batch", r.cols)
		r.db.PinCount("ldp_batch", r.res.RowsKept) // the write counts it too
		return nil
	}
	q := subquery(t.SQL)
	sel := "*"
	if r.toIceberg() {
		cols, err := r.db.Columns(ctx, q)
		if err != nil {
			return fmt.Errorf("metadata.transform.sql: %w", err)
		}
		sel = engine.IcebergSelect(cols)
	}
	if err := r.db.Exec(ctx, fmt.Sprintf("CREATE TEMP TABLE ldp_batch AS SELECT %s FROM %s", sel, q)); err != nil {
		return fmt.Errorf("metadata.transform.sql: %w", err)
	}
	return nil
}

// exactKeys refuses a join column of an upsert, or a column of a unique check, whose type is
// floating-point: two keys that print alike need not be equal, and a rounded key (as DOUBLE
// rounds integers past int64) makes an upsert replace another row.
func (r *run) exactKeys(ctx context.Context) error {
	keys := map[string]string{}
	if r.res.Mode == v1.WriteUpsert {
		for _, c := range r.p.Metadata.Target.JoinCols {
			keys[strings.ToLower(c)] = "join column"
		}
	}
	if q := r.p.Metadata.Quality; q != nil {
		for _, c := range q.Checks {
			if c.Check == "unique" && c.Columns != nil {
				for _, n := range c.Columns.Names {
					if keys[strings.ToLower(n)] == "" {
						keys[strings.ToLower(n)] = "unique column"
					}
				}
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	cols, err := r.db.Columns(ctx, r.batchRel())
	if err != nil {
		return err
	}
	for _, c := range cols {
		switch t, role := strings.ToUpper(c.Type), keys[strings.ToLower(c.Name)]; {
		case role == "":
		case t == "DOUBLE" || t == "FLOAT" || t == "REAL":
			return &ldperr.ConfigError{File: r.p.Path, Msg: fmt.Sprintf("%s %q is %s: a key must hold exact values; cast it in metadata.transform.sql (to DECIMAL or VARCHAR) or key on another column", role, c.Name, t)}
		}
	}
	return nil
}

// validate runs the quality checks; with on_failure "fail" a failure holds the batch back.
func (r *run) validate(ctx context.Context) error {
	if len(r.p.Metadata.Target.PartitionBy) > 0 || len(r.p.Metadata.Target.JoinCols) > 0 {
		cols, err := r.db.Columns(ctx, r.batchRel())
		if err != nil {
			return err
		}
		if err := targetColumnsError(r.p, cols); err != nil {
			return err
		}
	}
	if err := r.exactKeys(ctx); err != nil {
		return err
	}
	windowFailed, notes := r.windowRules()
	for _, n := range notes {
		fmt.Fprintln(r.opts.Log, "note: "+n)
	}
	q := r.p.Metadata.Quality
	if (q == nil || len(q.Checks) == 0) && len(windowFailed) == 0 {
		return nil
	}
	var rep *v1.QualityReport
	if q != nil && len(q.Checks) > 0 {
		// In a windowed run, freshness measures from the window's end, so a backfill of last
		// month passes the checks its first run passed.
		now := r.opts.Now()
		if !r.opts.Window.IsZero() {
			now = r.opts.Window.End
		}
		qc := quality.Context{SourceRows: r.res.RowsRead, Now: now, Location: r.win.Location}
		var ok bool
		if rep, ok = r.batchReportAt(qc); !ok {
			var err error
			if rep, err = quality.Run(ctx, r.db, r.batchRel(), q.Checks, qc, q.OnFailure); err != nil {
				return err
			}
		}
	} else {
		// Only a window rule failed: the batch is the window's rows (no check counted them).
		rep = &v1.QualityReport{OnFailure: v1.DefaultOnFailure, Rows: r.res.RowsKept}
	}
	rep.Results = append(rep.Results, windowFailed...)
	r.res.Quality = rep
	for _, l := range rep.Lines() {
		fmt.Fprintln(r.opts.Log, l)
	}
	r.rec.Record(ctx, r.qualityPayload(rep))
	// A window rule holds the batch back whatever on_failure says: its own field says so.
	if len(windowFailed) > 0 || (!rep.Passed() && rep.OnFailure != "warn") {
		return &quality.GateError{Target: r.res.Target, Report: rep}
	}
	return nil
}

// targetCatalog is the target's catalog, opened once a run: the key lookup before the run
// and the write after it used to open it each, a SQLite database opened twice a window.
func (r *run) targetCatalog(ctx context.Context) (*lake.Catalog, error) {
	if r.cat != nil {
		return r.cat, nil
	}
	cat, err := lake.Open(ctx, r.p.Metadata.Target.Catalog, r.p.BaseDir)
	if err != nil {
		return nil, err
	}
	r.cat = cat
	r.cleanup = append(r.cleanup, func() { cat.Close() })
	return cat, nil
}

func writeIceberg(ctx context.Context, r *run) error {
	t := r.p.Metadata.Target
	cat, err := r.targetCatalog(ctx)
	if err != nil {
		return err
	}
	wo := lake.WriteOptions{
		Mode: r.res.Mode, JoinCols: t.JoinCols, PartitionBy: t.PartitionBy, Prewritten: r.prewritten(), PrewrittenPartitions: r.stagedParts,
		SnapshotProps: map[string]string{"ldp.pipeline": r.p.Identifier},
		LockTimeout:   r.opts.LockTimeout, Notify: func(m string) { fmt.Fprintln(r.opts.Log, m) },
		Location: r.win.Location,
	}
	rows, err := r.batchRows(ctx)
	if err != nil {
		return err
	}
	if rows == 0 && (!r.keyed() || !r.p.Metadata.Source.AllowEmpty) {
		return r.emptyError()
	}
	if !r.keyed() {
		res, err := cat.Write(ctx, r.db, "ldp_batch", lake.RefOf(t), wo)
		if err != nil {
			return r.locate(ctx, err)
		}
		r.res.Write, r.res.RowsWritten, r.res.SnapshotID = res, res.RowsWritten, res.SnapshotID
		return nil
	}
	wo.SnapshotProps[lake.SpecHashProp] = r.res.SpecHash
	if q := r.res.Quality; q != nil && !q.Passed() {
		// Published under on_failure "warn": the verdict travels with the window, so a
		// promote of its environment can refuse it (lake.Promote).
		wo.SnapshotProps[lake.ChecksProp] = lake.ChecksFailed
	}
	wo.SnapshotProps[lake.WindowProp] = r.opts.Window.String()
	for name, id := range r.inputs {
		wo.SnapshotProps[lake.SourcePropStem+name] = strconv.FormatInt(id, 10)
	}
	if src := r.p.Metadata.Source; r.res.SourcePath != "" && src.Format != SQL && src.Format != DBT {
		name := src.Name
		if name == "" {
			name = "source"
		}
		wo.SnapshotProps[lake.SourcePropStem+name] = r.res.SourcePath
	}
	po := lake.PublishOptions{WriteOptions: wo, Key: r.res.Key, RunID: r.opts.RunID, Attempt: r.opts.Attempt, Hook: r.opts.Hook, Group: r.opts.Group, Env: r.opts.Env}
	if rows == 0 {
		po.AllowEmpty = true
		if why := r.secondPass(); why != "" {
			// Published empty (allow_empty), which is right, but a person looking for the
			// rows of that hour must learn where they went.
			fmt.Fprintf(r.opts.Log, "note: window %s keeps no rows: %s\n", r.opts.Window, why)
		}
	}
	// An overwrite with a window column replaces only the window's rows, found by the table's
	// type of the column (a drop's may differ, and an empty drop's columns have no types).
	if r.res.Mode == v1.WriteOverwrite && r.win.Column != "" && !r.opts.Window.IsZero() {
		po.ReplaceColumn = r.win.Column
		po.ReplaceWhere = func(colType string) (string, error) {
			return window.Filter(r.win.Column, colType, r.opts.Window, r.win.Location)
		}
	}
	res, err := cat.Publish(ctx, r.db, r.batchRel(), lake.RefOf(t), po)
	if err != nil {
		return r.locate(ctx, err)
	}
	r.res.Write = &res.WriteResult
	r.res.RowsWritten, r.res.SnapshotID = res.RowsWritten, res.SnapshotID
	r.skipped = res.Status == lake.SkippedDuplicate
	return nil
}

// locate names the source file and line of the value a *lake.MismatchError refused, when the
// batch holds the file's rows as read (no transform): the first row the window kept whose
// column reads as that value. It costs a second read of the file, on this failure only.
func (r *run) locate(ctx context.Context, err error) error {
	var me *lake.MismatchError
	if !errors.As(err, &me) || r.readExpr == "" || r.p.Metadata.Transform != nil {
		return err
	}
	me.Where = r.res.SourcePath
	q := fmt.Sprintf("SELECT n FROM (SELECT row_number() OVER () AS n, * FROM %s) WHERE (%s) AND CAST(%s AS VARCHAR) = %s ORDER BY n LIMIT 1",
		r.readExpr, r.where, engine.Ident(me.Column), engine.Lit(me.Value))
	var n int64
	if r.db.QueryRow(ctx, q, &n) != nil {
		return err
	}
	if src := r.p.Metadata.Source; src.Format == v1.FormatCSV {
		if h := src.Options; h == nil || h.Header == nil || *h.Header {
			n++ // the header is line 1
		}
		me.Where += ":" + strconv.FormatInt(n, 10)
	} else {
		me.Where += fmt.Sprintf(" (row %d)", n)
	}
	return err
}

// emptyError says that the run has nothing to publish: the window (or the source) kept no rows.
func (r *run) emptyError() error {
	what := "the batch holds no rows"
	if !r.opts.Window.IsZero() {
		what = "window " + r.opts.Window.String() + " kept no rows"
	}
	if r.res.SourcePath != "" {
		what += fmt.Sprintf(" of %s (%d read", r.res.SourcePath, r.res.RowsRead)
		if n := r.res.RowsOutside; n > 0 {
			what += fmt.Sprintf(", %d outside the window", n)
		}
		if n := r.res.RowsNoWindow; n > 0 {
			what += fmt.Sprintf(", %d with no %s", n, r.win.Column)
		}
		what += ")"
	}
	if why := r.secondPass(); why != "" {
		what += ": " + why
	}
	hint := `; if an empty window is valid, set "allow_empty": true in metadata.source (a keyed run then publishes it with no rows)`
	return fmt.Errorf("%w: %s, and an empty batch is not published%s, or add a row_count check with a min to hold it back as a data gate", lake.ErrNoData, what, hint)
}

// batchRows is the row count of ldp_batch. With no transform it is the view of the rows the
// window kept, which the extract counted: a second count(*) was a statement of every window.
func (r *run) batchRows(ctx context.Context) (int64, error) {
	if r.p.Metadata.Transform == nil {
		return r.res.RowsKept, nil
	}
	return r.db.Count(ctx, "ldp_batch")
}

// secondPass says why the run's window keeps no rows when it lies in the second pass of an
// hour the clock repeats and the window column has no zone (its times there are read as the
// first pass), else "".
func (r *run) secondPass() string {
	change, ok := window.SecondPass(r.opts.Window, r.win.Location)
	if !ok || r.win.Column == "" || strings.Contains(r.colType, "TIME ZONE") {
		return ""
	}
	return fmt.Sprintf("the window is in the second pass of the hour the clock repeats at %s in %s, and %s's times without a zone there were read as the first pass, so no row can fall in it (docs/data-plane.md, \"Timestamps without a zone\")",
		change.In(r.win.Location).Format("2006-01-02 15:04"), r.win.Location, r.win.Column)
}

func writeFile(ctx context.Context, r *run) error {
	n, err := r.batchRows(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return r.emptyError()
	}
	t := r.p.Metadata.Target
	dest := r.resolve(t.Path)
	local := dest
	if lake.IsRemote(dest) {
		// Written whole on this machine, then put as one object.
		dir, err := os.MkdirTemp("", "ldp-target-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		local = filepath.Join(dir, path.Base(dest))
	}
	written, err := formats.WriteFile(ctx, r.db, "SELECT * FROM ldp_batch", t.Format, local)
	if err != nil {
		return err
	}
	if local != dest {
		if err := lake.Upload(ctx, local, dest, objectProps(r.p)); err != nil {
			return fmt.Errorf("write %s: %w", dest, err)
		}
	}
	r.res.RowsWritten = written
	return nil
}

func targetName(p *v1.Pipeline) string {
	t := p.Metadata.Target
	if t.Format == v1.FormatIceberg && t.Catalog != nil {
		return lake.RefOf(t).String()
	}
	return t.Path
}
