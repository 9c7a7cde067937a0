// Package engine is ldp's execution engine: an embedded DuckDB that reads sources, filters
// windows, runs transforms and quality checks as SQL, and writes Parquet. Iceberg tables reach
// it as the Parquet files package lake plans, because no DuckDB extension can be installed
// offline.
package engine

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// DB is one in-memory DuckDB database used through a single connection, so the temporary
// tables of a run live as long as the run.
type DB struct {
	db      *sql.DB
	conn    *sql.Conn
	tmpDir  string
	private bool
	// cols and counts are what Columns and Count found of each relation since the last
	// statement that could change it (Query and QueryRow only read): a run's extract, checks,
	// ledger payload and write each describe and count the same few views, and at 1-2 ms a
	// statement that was a fifth of a small window's time. Any Exec forgets them (a view
	// replaced, a file written that a glob reads).
	mu     sync.Mutex
	cols   map[string][]Column
	counts map[string]int64
	// pinned and pinnedCounts are the columns and row counts of relations no statement of the
	// session changes until it is reset (Pin, PinCount): they outlive forget.
	pinned       map[string][]Column
	pinnedCounts map[string]int64
	// dirty is set by a statement that may leave something in the session (all but SELECT
	// and DESCRIBE): a database that ran none goes back to the pool without the query that
	// lists what to drop, a statement a backfill window read with its batch would take only
	// for that.
	dirty atomic.Bool
}

// ran counts a statement of d and notes whether it may have changed the session.
func (d *DB) ran(query string) {
	statements.Add(1)
	head := strings.TrimLeft(query, " \t\r\n")
	head = strings.ToUpper(head[:min(len(head), 9)])
	if (!strings.HasPrefix(head, "SELECT ") && !strings.HasPrefix(head, "DESCRIBE ")) || strings.Contains(query, ";") {
		d.dirty.Store(true)
	}
}

// statements counts the statements every database of the process ran: a backfill window's
// cost is mostly DuckDB preparing statements, so how many a window takes is what tests bound.
var statements atomic.Int64

// Statements is how many statements the databases of the process have run (but those that
// start one).
func Statements() int64 { return statements.Load() }

// Pin records the columns of relation, which the caller vouches no later statement of the
// session changes (a view it made and does not replace, a file it wrote and does not rewrite):
// Columns answers from them without a DESCRIBE, whatever runs meanwhile, until the database
// goes back to the pool.
func (d *DB) Pin(relation string, cols []Column) {
	d.mu.Lock()
	if d.pinned == nil {
		d.pinned = map[string][]Column{}
	}
	d.pinned[relation] = slices.Clone(cols)
	d.mu.Unlock()
}

// PinCount records the row count of relation, on the same terms as Pin.
func (d *DB) PinCount(relation string, n int64) {
	d.mu.Lock()
	if d.pinnedCounts == nil {
		d.pinnedCounts = map[string]int64{}
	}
	d.pinnedCounts[relation] = n
	d.mu.Unlock()
}

// forget drops what Columns and Count remember: the relations may have changed.
func (d *DB) forget() {
	d.mu.Lock()
	clear(d.cols)
	clear(d.counts)
	d.mu.Unlock()
}

// Starting DuckDB is some 20 ms of a small window's run, so a closed database goes back to a
// pool of idle ones, emptied of its temporary tables, views and variables, and the next Open
// of the process takes it: a backfill or a watch starts DuckDB a few times, not once a window.
var idle struct {
	mu  sync.Mutex
	dbs []*DB
}

// maxIdle bounds the databases kept idle (an empty one holds a few MB). A backfill holds a
// database for each window written and waiting for its commit (lake.Group lets two batches
// of ten wait) and each being read (a CPU's worth): with fewer idle than that, windows kept
// closing databases that the next windows started again.
var maxIdle = 20 + min(runtime.GOMAXPROCS(0), 8)

// Open starts an in-memory DuckDB with UTC as its time zone (so ts::DATE agrees with Iceberg's
// day transform) and a private spill folder, so a source larger than memory still loads; or
// takes an idle one that was started the same way.
func Open(ctx context.Context) (*DB, error) {
	idle.mu.Lock()
	if n := len(idle.dbs); n > 0 {
		d := idle.dbs[n-1]
		idle.dbs = idle.dbs[:n-1]
		idle.mu.Unlock()
		return d, nil
	}
	idle.mu.Unlock()
	return open(ctx)
}

// OpenPrivate starts a database of its own that never goes back to the pool, for a caller
// whose session state (settings, attached files) must not reach another.
func OpenPrivate(ctx context.Context) (*DB, error) {
	d, err := open(ctx)
	if d != nil {
		d.private = true
	}
	return d, err
}

// OpenFile opens (creating) the DuckDB database file path, as a database of its own: what
// it holds outlives the process (the file a dbt project reads).
func OpenFile(ctx context.Context, path string) (*DB, error) {
	d, err := openPath(ctx, path)
	if d != nil {
		d.private = true
	}
	return d, err
}

func open(ctx context.Context) (*DB, error) { return openPath(ctx, "") }

func openPath(ctx context.Context, path string) (*DB, error) {
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("start DuckDB: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("start DuckDB: %w", err)
	}
	// The spill folder is named, not made: DuckDB creates it only when it spills, so a
	// database the process never closes leaves nothing behind.
	d := &DB{db: db, conn: conn, tmpDir: filepath.Join(os.TempDir(), "ldp-duckdb-"+uuid.NewString())}
	// One statement, not counted in Statements: starting a database is the pool's cost to
	// bound, and a run's statements are what tests bound, whether its database was idle or not.
	if _, err := conn.ExecContext(ctx, "SET TimeZone = 'UTC'; SET temp_directory = "+Lit(d.tmpDir)+
		"; SET autoinstall_known_extensions = false; SET autoload_known_extensions = false"); err != nil {
		d.closeNow()
		return nil, fmt.Errorf("start DuckDB: %w", err)
	}
	return d, nil
}

// Close hands the database back to the pool, empty, or closes it when the pool is full or it
// cannot be emptied.
func (d *DB) Close() error {
	if d == nil {
		return nil
	}
	if !d.private && d.reset() == nil {
		idle.mu.Lock()
		if len(idle.dbs) < maxIdle {
			idle.dbs = append(idle.dbs, d)
			idle.mu.Unlock()
			return nil
		}
		idle.mu.Unlock()
	}
	return d.closeNow()
}

// reset drops what a run left in the session: temporary tables and views, variables and
// attached databases.
func (d *DB) reset() error {
	d.forget()
	d.mu.Lock()
	clear(d.pinned)
	clear(d.pinnedCounts)
	d.mu.Unlock()
	if !d.dirty.Swap(false) {
		return nil
	}
	ctx := context.Background()
	_, objs, err := d.Rows(ctx, `SELECT 'TABLE', table_name FROM duckdb_tables() WHERE temporary
		UNION ALL SELECT 'VIEW', view_name FROM duckdb_views() WHERE temporary AND NOT internal
		UNION ALL SELECT 'VARIABLE', name FROM duckdb_variables()
		UNION ALL SELECT 'DATABASE', database_name FROM duckdb_databases() WHERE NOT internal AND database_name NOT IN ('memory', 'temp', 'system')`)
	if err != nil {
		return err
	}
	for _, o := range objs {
		kind, name := o[0].(string), o[1].(string)
		q := "DROP " + kind + " IF EXISTS temp.main." + Ident(name)
		switch kind {
		case "VARIABLE":
			q = "RESET VARIABLE " + Ident(name)
		case "DATABASE":
			q = "DETACH " + Ident(name)
		}
		if err := d.Exec(ctx, q); err != nil {
			return err
		}
	}
	d.dirty.Store(false)
	return nil
}

func (d *DB) closeNow() error {
	err := d.conn.Close()
	if e := d.db.Close(); err == nil {
		err = e
	}
	os.RemoveAll(d.tmpDir)
	return err
}

// Exec runs a statement.
func (d *DB) Exec(ctx context.Context, query string, args ...any) error {
	d.ran(query)
	d.forget()
	if _, err := d.conn.ExecContext(ctx, query, args...); err != nil {
		return &Error{Query: query, Err: err}
	}
	return nil
}

// ExecCount runs a statement and returns the rows it changed (for COPY, the rows written).
func (d *DB) ExecCount(ctx context.Context, query string, args ...any) (int64, error) {
	d.ran(query)
	d.forget()
	res, err := d.conn.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, &Error{Query: query, Err: err}
	}
	return res.RowsAffected()
}

// Query runs a query.
func (d *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.ran(query)
	rows, err := d.conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, &Error{Query: query, Err: err}
	}
	return rows, nil
}

// QueryRow runs a query that returns one row and scans it into dest.
func (d *DB) QueryRow(ctx context.Context, query string, dest ...any) error {
	d.ran(query)
	if err := d.conn.QueryRowContext(ctx, query).Scan(dest...); err != nil {
		return &Error{Query: query, Err: err}
	}
	return nil
}

// Rows runs a query and returns its column names and every row, each value as the driver
// scans it into an interface (nil for NULL). For results small enough to print.
func (d *DB) Rows(ctx context.Context, query string) ([]string, [][]any, error) {
	return d.all(ctx, query, false)
}

// Count returns the number of rows of a relation.
func (d *DB) Count(ctx context.Context, relation string) (int64, error) {
	return remembered(d, relation, &d.pinnedCounts, &d.counts, func(n int64) int64 { return n }, func() (int64, error) {
		var n int64
		if err := d.QueryRow(ctx, "SELECT count(*) FROM "+relation, &n); err != nil {
			return 0, err
		}
		return n, nil
	})
}

// remembered is the one lookup of what Columns and Count know of a relation: its pinned value,
// else what was found since the session last changed, else find's answer, kept until the
// session changes (an error is not kept). cp copies a value out of and into the maps, so a
// caller can change what it was given.
func remembered[V any](d *DB, relation string, pinned, found *map[string]V, cp func(V) V, find func() (V, error)) (V, error) {
	d.mu.Lock()
	v, ok := (*pinned)[relation]
	if !ok {
		v, ok = (*found)[relation]
	}
	d.mu.Unlock()
	if ok {
		return cp(v), nil
	}
	v, err := find()
	if err == nil {
		d.mu.Lock()
		if *found == nil {
			*found = map[string]V{}
		}
		(*found)[relation] = cp(v)
		d.mu.Unlock()
	}
	return v, err
}

// Column is a column of a relation as DuckDB types it.
type Column struct {
	Name string
	Type string
}

// Columns describes a relation or a query (anything that can follow FROM).
func (d *DB) Columns(ctx context.Context, relation string) ([]Column, error) {
	return remembered(d, relation, &d.pinned, &d.cols, slices.Clone, func() ([]Column, error) { return d.describe(ctx, relation) })
}

func (d *DB) describe(ctx context.Context, relation string) ([]Column, error) {
	rows, err := d.Query(ctx, "DESCRIBE SELECT * FROM "+relation)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []Column
	for rows.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
			return nil, err
		}
		cols = append(cols, Column{Name: name, Type: typ})
	}
	return cols, rows.Err()
}

// Error is a failed DuckDB statement. Its message is DuckDB's, which names the file and line
// of a malformed CSV row; the query is kept for -v logs, not shown by default.
type Error struct {
	Query string
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Public is DuckDB's message without the row values it may quote (a CSV row's "Original
// Line", the string a cast could not convert, the value after ValueFollows): what an event
// may carry (ldperr.Publicer). The statement DuckDB quotes after it (LINE 1: ...) goes too.
func (e *Error) Public() string {
	msg := duckQuery.ReplaceAllString(e.Err.Error(), "")
	msg = duckRowLine.ReplaceAllString(msg, "")
	msg = duckConvert.ReplaceAllString(msg, "${1}"+valueMask)
	return duckValue.ReplaceAllString(msg, "${1}"+valueMask)
}

// ValueFollows ends the message of an error() a query raises about a row's value, the value
// after it: Public masks what follows it.
const ValueFollows = "; the value: "

const valueMask = "(a value)"

var (
	duckQuery   = regexp.MustCompile(`(?s)\s*\nLINE \d+:.*$`)
	duckRowLine = regexp.MustCompile(`(?m)^[ \t]*Original Line:.*(\n|$)`)
	duckConvert = regexp.MustCompile(`(?i)(convert string )("(?:[^"]|"")*"|'(?:[^']|'')*')`)
	duckValue   = regexp.MustCompile(`(` + regexp.QuoteMeta(ValueFollows) + `).*`)
)

// Ident quotes an identifier.
func Ident(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Lit quotes a string literal.
func Lit(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// LitList writes a list literal of strings: ['a', 'b'].
func LitList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = Lit(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// IcebergCast returns the type a column must be cast to before it is written to Parquet for an
// Iceberg table, or "" when its type maps as it is. Iceberg has no unsigned or small integers,
// no nanosecond timestamps, and no intervals.
func IcebergCast(duckType string) string {
	t := strings.ToUpper(duckType)
	switch t {
	case "TINYINT", "SMALLINT", "UTINYINT", "USMALLINT":
		return "INTEGER"
	case "UINTEGER":
		return "BIGINT"
	case "UBIGINT", "HUGEINT", "UHUGEINT":
		return "DECIMAL(38,0)"
	case "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S", "TIMESTAMP WITH TIME ZONE_NS":
		return "TIMESTAMP"
	case "INTERVAL", "JSON", "BIT", "TIME WITH TIME ZONE", "UUID", "VARINT", "BIGNUM":
		return "VARCHAR"
	}
	if strings.HasPrefix(t, "ENUM(") {
		return "VARCHAR"
	}
	return ""
}

// IcebergSelect writes a select list that casts every column to an Iceberg-compatible type.
func IcebergSelect(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if cast := IcebergCast(c.Type); cast != "" {
			parts[i] = fmt.Sprintf("CAST(%s AS %s) AS %s", Ident(c.Name), cast, Ident(c.Name))
		} else {
			parts[i] = Ident(c.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// Bounded runs f with the database's memory limit at what it holds now plus budget bytes, and
// restores the default limit after. DuckDB sizes a large aggregate by its limit: under the
// default (80% of RAM) a GROUP BY over millions of keys grows one hash table that outruns the
// CPU's caches, while under a small limit it partitions early and spills what does not fit
// (measured here, a unique check over 50 M keys: 2.5 GB and 15.7 s by default, 0.4 GB and 4.3 s
// with 256 MB).
func (d *DB) Bounded(ctx context.Context, budget int64, f func() error) error {
	var used int64
	if err := d.QueryRow(ctx, "SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()", &used); err != nil {
		return f() // no reading: the default limit stays
	}
	if err := d.Exec(ctx, fmt.Sprintf("SET memory_limit = '%dB'", used+budget)); err != nil {
		return f()
	}
	defer d.Exec(context.WithoutCancel(ctx), "RESET memory_limit")
	return f()
}
