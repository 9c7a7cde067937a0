package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Catalog is the Iceberg catalog a spec names.
type Catalog struct {
	// Identifier is the catalog's name; Warehouse its absolute folder or its object-store
	// location (s3://bucket/path).
	Identifier string
	Warehouse  string

	// props are the catalog's properties: where tables' files are and how to reach them.
	props iceberg.Properties

	cat catalog.Catalog
	// db is the database of a sql catalog, read directly for a table's metadata location and
	// for leases; nil for a rest catalog.
	db *sql.DB
	// postgres is set for a PostgreSQL database (its placeholders are $1, not ?).
	postgres bool
	// shared is set for a catalog other machines write to: no local lock applies.
	shared bool
}

// providers open a catalog of each type. Each type's file registers its opener, so a new
// type is one new file.
var providers = map[v1.CatalogType]func(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error){}

func init() { providers[v1.CatalogLocal] = openLocal }

// Open opens (creating on first use) the catalog c names; paths resolve against baseDir.
func Open(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error) {
	if c == nil {
		return nil, errors.New("no catalog: an ICEBERG target or source needs a catalog")
	}
	open, ok := providers[c.Type.Resolved()]
	if !ok {
		var known []string
		for t := range providers {
			known = append(known, string(t))
		}
		return nil, ldperr.Configf("", "catalog type %q is not known: use one of %s", c.Type, strings.Join(slices.Sorted(slices.Values(known)), ", "))
	}
	return open(ctx, c, baseDir)
}

// openLocal opens iceberg-go's SQL catalog on <warehouse>/<identifier>_catalog.db, with the
// warehouse folder resolved against baseDir.
func openLocal(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error) {
	if IsRemote(c.WarehousePath) {
		return nil, ldperr.Configf("", "catalog %s: a local catalog keeps its database in the warehouse folder, which %s cannot hold: use type sql (a PostgreSQL database) with this warehouse", c.Identifier, c.WarehousePath)
	}
	wh, err := makeWarehouse(c, baseDir)
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(wh, c.Identifier+"_catalog.db")
	// WAL lets readers run beside a writer; busy_timeout makes concurrent writers wait for each
	// other instead of failing; immediate transactions take the write lock up front, so two
	// writers never deadlock upgrading a read lock.
	// SQLite reads the name as a URI too: '#', '?' and '%' in the path are escaped by
	// fileLocation, or it opens a database at the path cut short.
	dsn := fileLocation(dbPath) + fmt.Sprintf("?_pragma=busy_timeout(%d)", busyTimeout().Milliseconds()) + "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	// Several processes opening a new catalog at once: switching the file to WAL and creating
	// the catalog's tables can fail with SQLITE_BUSY at once, without the busy handler (seen
	// with six processes).
	cat, err := openSQL(ctx, Catalog{Identifier: c.Identifier, Warehouse: wh, props: iceberg.Properties{"warehouse": warehouseLocation(wh)}}, sqlOpener("sqlite", dsn), sqlcat.SQLite, isBusy)
	if err != nil {
		if isBusy(err) {
			err = &BusyError{Path: dbPath, Holder: lockHolder(dbPath), Err: err}
		}
		return nil, fmt.Errorf("open catalog %s: %w", dbPath, err)
	}
	cat.cat = busyCatalog{Catalog: cat.cat, path: dbPath}
	return cat, nil
}

// OpenReadOnly opens the catalog c names for reading only: a local catalog's database is
// opened read-only, and creates nothing, so the read commands (snapshots, commits, query) work
// on a warehouse they cannot write (a read-only mount, another user's folder). On a
// read-only file system SQLite cannot keep the shared memory of its write-ahead log, so the
// database is then read as immutable: what the last writer checkpointed when it closed.
func OpenReadOnly(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error) {
	if c == nil || c.Type.Resolved() != v1.CatalogLocal {
		return Open(ctx, c, baseDir)
	}
	wh, err := filepath.Abs(WarehouseDir(c, baseDir))
	if err != nil {
		return nil, err
	}
	dbPath := filepath.Join(wh, c.Identifier+"_catalog.db")
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		return Open(ctx, c, baseDir) // nothing to read yet: the catalog is made, as by a write
	}
	base := Catalog{Identifier: c.Identifier, Warehouse: wh, props: iceberg.Properties{"warehouse": warehouseLocation(wh), "init_catalog_tables": "false"}}
	var cat *Catalog
	for _, mode := range []string{"mode=ro", "mode=ro&immutable=1"} {
		dsn := fileLocation(dbPath) + "?" + mode + fmt.Sprintf("&_pragma=busy_timeout(%d)", busyTimeout().Milliseconds())
		if cat, err = openSQL(ctx, base, sqlOpener("sqlite", dsn), sqlcat.SQLite, func(error) bool { return false }); err == nil {
			if _, err = cat.metadataLocation(ctx, Ref{}); err == nil || errors.Is(err, sql.ErrNoRows) {
				cat.cat = busyCatalog{Catalog: cat.cat, path: dbPath}
				return cat, nil
			}
			cat.Close()
			if strings.Contains(err.Error(), "no such table") {
				// A catalog another process is creating right now: nothing to read yet.
				return Open(ctx, c, baseDir)
			}
		}
	}
	return nil, fmt.Errorf("open catalog %s to read: %w", dbPath, err)
}

// makeWarehouse resolves the warehouse folder of c to an absolute path and creates it. An
// object-store warehouse is its location; its local mirror is created.
func makeWarehouse(c *v1.Catalog, baseDir string) (string, error) {
	if IsRemote(c.WarehousePath) {
		mirror := WarehouseDir(c, baseDir)
		if err := os.MkdirAll(mirror, 0o755); err != nil {
			return "", fmt.Errorf("create the local mirror of %s: %w", c.WarehousePath, err)
		}
		pruneMirror(mirror)
		return strings.TrimSuffix(c.WarehousePath, "/"), nil
	}
	wh, err := filepath.Abs(WarehouseDir(c, baseDir))
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(wh, 0o755); err != nil {
		return "", fmt.Errorf("create warehouse %s: %w", wh, err)
	}
	return wh, nil
}

// warehouseLocation is the warehouse as iceberg-go takes it: a folder as a file:// URL, an
// object-store location as it is.
func warehouseLocation(wh string) string {
	if IsRemote(wh) {
		return wh
	}
	return fileLocation(wh)
}

// openSQL opens iceberg-go's SQL catalog in the database open opens, for base's identifier
// and warehouse. An open that failed in a way retry says changed nothing (several processes
// creating the catalog's tables at once) is tried again for up to a minute. iceberg-go creates
// the catalog's tables without a context, so the open runs aside and ctx (a SIGTERM) ends the
// wait for it: a server that stalls must not hold the process.
func openSQL(ctx context.Context, base Catalog, open func() (*sql.DB, error), dialect sqlcat.SupportedDialect, retry func(error) bool) (*Catalog, error) {
	deadline := time.Now().Add(2 * busyTimeout())
	for try := 0; ; try++ {
		db, err := open()
		if err != nil {
			return nil, err
		}
		type opened struct {
			cat *sqlcat.Catalog
			err error
		}
		done := make(chan opened, 1)
		go func() {
			cat, err := sqlcat.NewCatalog(base.Identifier, db, dialect, base.props)
			done <- opened{cat, err}
		}()
		var o opened
		select {
		case o = <-done:
		case <-ctx.Done():
			// Closing the database waits for the statement in flight: leave that to the open,
			// which its own timeouts end.
			go func() { <-done; db.Close() }()
			return nil, fmt.Errorf("stopped waiting for the catalog database: %w", context.Cause(ctx))
		}
		if o.err == nil {
			c := &base
			c.cat, c.db = casCatalog{Catalog: o.cat, c: c}, db
			return c, nil
		}
		db.Close()
		if !retry(o.err) || time.Now().After(deadline) || ctx.Err() != nil {
			return nil, o.err
		}
		time.Sleep(time.Duration(rand.Int64N(int64(20*time.Millisecond)*int64(min(try+1, 10))) + 1))
	}
}

// sqlOpener opens the database at dsn with driver.
func sqlOpener(driver, dsn string) func() (*sql.DB, error) {
	return func() (*sql.DB, error) { return sql.Open(driver, dsn) }
}

// WarehouseDir is the warehouse folder of c, resolved against baseDir (the spec's folder); for
// an object-store warehouse, its local mirror.
func WarehouseDir(c *v1.Catalog, baseDir string) string {
	wp := c.WarehousePath
	if IsRemote(wp) {
		return mirrorPath(strings.TrimSuffix(wp, "/"))
	}
	if c.Type == v1.CatalogREST {
		// The server places the tables; this is where their files are staged and mirrored.
		return filepath.Join(CacheDir(), "rest", c.Identifier)
	}
	if wp == "" {
		wp = v1.DefaultWarehousePath
	}
	if !filepath.IsAbs(wp) {
		wp = filepath.Join(baseDir, wp)
	}
	return filepath.Clean(wp)
}

// isBusy reports whether SQLite refused because another connection held the lock.
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// OpenExisting opens the catalog of c only if its database exists; it creates nothing, so
// planning never leaves a catalog behind. A catalog that does not exist yet is nil.
func OpenExisting(ctx context.Context, vc *v1.Catalog, baseDir string) (*Catalog, error) {
	if vc == nil {
		return nil, errors.New("no catalog")
	}
	if vc.Type.Resolved() != v1.CatalogLocal {
		return Open(ctx, vc, baseDir) // a shared catalog is a server: there is nothing to create
	}
	if _, err := os.Stat(filepath.Join(WarehouseDir(vc, baseDir), vc.Identifier+"_catalog.db")); err != nil {
		return nil, nil
	}
	return Open(ctx, vc, baseDir)
}

// Close releases the catalog database.
func (c *Catalog) Close() error {
	if c == nil || c.db == nil {
		return nil
	}
	return c.db.Close()
}

// Ref names a table: namespace and name.
type Ref struct {
	Namespace string
	Name      string
}

// RefOf is the table a pipeline's target names.
func RefOf(t v1.Target) Ref {
	return Ref{Namespace: t.Catalog.NamespaceName(), Name: t.Name}
}

// RefOfSource is the table an ICEBERG source names.
func RefOfSource(s v1.Source) Ref {
	return Ref{Namespace: s.Catalog.NamespaceName(), Name: s.Name}
}

func (r Ref) String() string { return r.Namespace + "." + r.Name }

func (r Ref) ident() table.Identifier { return table.Identifier{r.Namespace, r.Name} }

// NotFoundError is a table that does not exist (yet).
type NotFoundError struct{ Ref Ref }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("table %s does not exist yet: nothing has been written to it", e.Ref)
}

// Load loads a table; a table that does not exist is a *NotFoundError.
//
// A metadata file never changes once written (each commit writes a new one), so a parsed one
// is reused for as long as the catalog points at it: parsing is most of a load (some 45 ms at
// 1,000 snapshots), and a backfill loads the same version many times.
func (c *Catalog) Load(ctx context.Context, r Ref) (*table.Table, error) {
	if loc, err := c.metadataLocation(ctx, r); err == nil && loc != "" {
		if meta, ok := metadataCache.get(loc); ok && meta != nil {
			return table.New(r.ident(), meta, loc, icebergio.LoadFSFunc(c.props, loc), c.cat), nil
		}
	}
	t, err := c.cat.LoadTable(ctx, r.ident())
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace) {
			return nil, &NotFoundError{Ref: r}
		}
		if bad := c.unreadableMetadata(ctx, r, err); bad != nil {
			return nil, bad
		}
		if c.postgres {
			err = stallHint(err)
		}
		return nil, storageHint(fmt.Errorf("load table %s: %w", r, err))
	}
	metadataCache.put(t.MetadataLocation(), t.Metadata())
	// iceberg-go's table commits through the catalog that loaded it; ldp's commits go
	// through c.cat (casCatalog, busyCatalog).
	return table.New(r.ident(), t.Metadata(), t.MetadataLocation(), t.FS, c.cat), nil
}

// metadataLocation reads where the catalog points r now, from the catalog's own table (one
// indexed row). "" when the table is not there.
func (c *Catalog) metadataLocation(ctx context.Context, r Ref) (string, error) {
	if c.db == nil {
		return "", nil
	}
	var loc sql.NullString
	q := `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`
	if c.postgres {
		q = `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3`
	}
	err := c.db.QueryRowContext(ctx, q, c.Identifier, r.Namespace, r.Name).Scan(&loc)
	if err != nil {
		return "", err
	}
	return loc.String, nil
}

// recent holds the last few values derived from something that never changes under its key:
// a metadata file by its location (a commit writes a new one, never changes one), a Parquet
// schema by the column list it was probed for.
type recent[V any] struct {
	// size is how many it keeps.
	size  int
	mu    sync.Mutex
	byKey map[string]V
	order []string
}

// metadataCache holds parsed metadata: a load finds the head it or a commit of this process
// parsed last. Metadata is not mutated after parsing (iceberg-go's builders copy it), so
// sharing one between tables is safe.
var metadataCache = &recent[table.Metadata]{size: 4}

func (m *recent[V]) get(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byKey[key]
	return v, ok
}

func (m *recent[V]) put(key string, v V) {
	if key == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[key]; ok {
		return
	}
	if m.byKey == nil {
		m.byKey = map[string]V{}
	}
	m.byKey[key] = v
	m.order = append(m.order, key)
	if len(m.order) > m.size {
		delete(m.byKey, m.order[0])
		m.order = m.order[1:]
	}
}

// LockPath is the file that serialises the read-modify-write of overwrite and upsert on a table
// of the local catalog.
func (c *Catalog) LockPath(r Ref) string {
	return filepath.Join(c.Warehouse, ".ldp", "locks", r.String()+".lock")
}

func (c *Catalog) ensureNamespace(ctx context.Context, ns string) error {
	err := c.cat.CreateNamespace(ctx, table.Identifier{ns}, nil)
	if err == nil || errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return nil
	}
	// Two writers creating it at once: the loser may see the database's unique constraint
	// rather than the typed error. What matters is that it exists now.
	if ok, cerr := c.cat.CheckNamespaceExists(ctx, table.Identifier{ns}); cerr == nil && ok {
		return nil
	}
	return fmt.Errorf("create namespace %s: %w", ns, err)
}
