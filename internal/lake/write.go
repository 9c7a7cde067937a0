package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/flock"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// ErrNoData is an empty batch: ldp commits no empty snapshot unless a spec allows empty
// windows (WriteOptions.AllowEmpty).
var ErrNoData = errors.New("No data to write") //nolint:staticcheck // the contract's message

// WriteOptions say how a batch is written.
type WriteOptions struct {
	Mode        v1.WriteMode
	JoinCols    []string
	PartitionBy []v1.PartitionField
	// SnapshotProps go into the snapshot summary (ldp.* keys).
	SnapshotProps map[string]string
	// Prewritten, when set, is a Parquet file holding exactly the rows of the relation, or a
	// folder of them split by PrewrittenPartitions (PartitionExprs). An append to a table whose
	// columns and partition expressions they match adds those files (hard-linked into the
	// table's data folder) instead of writing the rows again.
	Prewritten           string
	PrewrittenPartitions []string
	// LockTimeout bounds the wait for the table's lock (overwrite and upsert on a local
	// catalog); 0 is v1.DefaultLockTimeout.
	LockTimeout time.Duration
	// Notify, if set, receives a line every few seconds while the write waits for the lock,
	// naming the holder.
	Notify func(string)
	// Owner is what the lock file says of this write while it holds the lock.
	Owner Owner
	// Location is the zone a timestamp without one is read in when it goes into a column with
	// one (and the reverse): the window's. Nil is UTC.
	Location *time.Location
	// AllowEmpty lets a keyed publish of an empty batch commit a snapshot with no rows under
	// its key (an overwrite with ReplaceWhere removes the window's rows). The table must exist:
	// an empty batch has no types to create it with.
	AllowEmpty bool
}

// Write writes the rows of relation (a table in db) to the table ref, creating the table on the
// first write. One write is one snapshot: a schema union (new columns added by name) and the
// data land in the same commit. On failure nothing is committed and the files it wrote are
// removed.
func (c *Catalog) Write(ctx context.Context, db *engine.DB, relation string, ref Ref, o WriteOptions) (*v1.WriteResult, error) {
	b, err := c.prepare(ctx, db, relation, ref, o)
	if err != nil {
		return nil, err
	}
	defer b.release()
	mode, rows, tmp, bs, tbl := b.mode, b.rows, b.tmp, b.schema, b.table
	res := &v1.WriteResult{Table: ref.String(), Mode: mode, RowsWritten: rows, RowsBefore: totalRecords(tbl.CurrentSnapshot())}
	w := &writer{db: db, relation: relation, mode: mode, joinCols: o.JoinCols, props: iceberg.Properties(o.SnapshotProps), tmp: tmp, prewritten: o.Prewritten, prewrittenParts: o.PrewrittenPartitions, loc: o.Location}
	// A writer on another machine (a shared catalog takes no local lock) may commit between
	// the load and the commit: the batch is staged again on the new head, reusing its files.
	retry := PublishOptions{}
	retry.defaults()
	deadline := retry.Now().Add(retry.Deadline)
	var after *table.Table
	for try := 1; ; try++ {
		tx := tbl.NewTransaction()
		if err := evolve(tx, tbl.Schema(), bs); err != nil {
			w.removeFiles()
			return nil, err
		}
		staged, err := tx.StagedTable()
		if err == nil {
			err = w.stage(ctx, tx, staged.Table)
		}
		if err != nil {
			w.removeFiles()
			return nil, clockHint(ref, err)
		}
		if after, err = tx.Commit(ctx); err == nil {
			break
		}
		// errors.As, not ce != err: comparing two errors panics when their type cannot be
		// compared (the REST catalog's errorResponse).
		var behind *ClockBehindError
		if ce := clockHint(ref, err); errors.As(ce, &behind) {
			w.removeFiles() // refused before anything was written: the commit changed nothing
			return nil, ce
		}
		if !isConflict(err) {
			// Any other error leaves the outcome unknown: the files may be referenced now.
			return nil, fmt.Errorf("commit to %s: %w", ref, err)
		}
		if try >= retry.MaxTries || retry.Now().After(deadline) {
			w.removeFiles()
			return nil, &ConflictError{Ref: ref, Err: err}
		}
		retry.backoff(try)
		if tbl, err = c.Load(ctx, ref); err != nil {
			w.removeFiles()
			return nil, err
		}
		res.RowsBefore = totalRecords(tbl.CurrentSnapshot())
	}
	snap := after.CurrentSnapshot()
	res.SnapshotID = snap.SnapshotID
	res.RowsAfter = totalRecords(snap)
	return res, nil
}

// batch is a write made ready: counted, checked, locked when it replaces rows, its schema read,
// and its table loaded or created.
type batch struct {
	mode    v1.WriteMode
	rows    int64
	tmp     *scratchDir
	schema  *iceberg.Schema
	table   *table.Table
	release func()
	// created is set when this write created the table: release drops it again if nothing
	// ever landed in it.
	created bool
}

// prepare does what every write of a batch does first. The caller must call release.
func (c *Catalog) prepare(ctx context.Context, db *engine.DB, relation string, ref Ref, o WriteOptions) (*batch, error) {
	rows, err := db.Count(ctx, relation)
	if err != nil {
		return nil, err
	}
	if rows == 0 && !o.AllowEmpty {
		return nil, ErrNoData
	}
	b := &batch{mode: v1.ParseWriteMode(string(o.Mode)), rows: rows}
	if b.mode == "" {
		b.mode = v1.WriteAppend
	}
	if b.mode == v1.WriteUpsert {
		if len(o.JoinCols) == 0 {
			return nil, ldperr.Configf("", "write_mode upsert needs join_cols")
		}
		if err := checkUniqueKeys(ctx, db, relation, o.JoinCols); err != nil {
			return nil, err
		}
	}
	var lock *flock.Lock
	if b.mode != v1.WriteAppend && !c.shared {
		// Appends commute; overwrite and upsert read the table, then replace what they read.
		// The lock only saves a local writer wasted re-stages: on a shared catalog, whose
		// writers are on other machines, the protocol alone keeps them apart.
		if lock, err = c.lockTable(ctx, ref, o); err != nil {
			return nil, err
		}
	}
	b.tmp = &scratchDir{make: c.scratch}
	if !c.inLiveScratch(o.Prewritten) {
		// The scratch folder's owner record is what keeps maintenance off the files this write
		// puts under data/ before it commits them: made now, whether or not a file is staged
		// in it.
		if _, err = b.tmp.path(); err != nil {
			lock.Release()
			return nil, err
		}
	}
	b.release = func() {
		if b.created {
			c.dropUnwritten(context.WithoutCancel(ctx), ref)
		}
		b.tmp.remove()
		lock.Release()
	}
	if rows == 0 {
		// An empty batch changes no schema: it is the table's, which must exist.
		if b.table, err = c.Load(ctx, ref); err == nil {
			b.schema = b.table.Schema()
		} else if _, nf := err.(*NotFoundError); nf {
			err = fmt.Errorf("%w: the window kept no rows and table %s does not exist yet, so there are no column types to create it with; publish a window with rows first", ErrNoData, ref)
		}
	} else if b.schema, err = batchSchema(ctx, db, relation, b.tmp); err == nil {
		if b.table, b.created, err = c.loadOrCreate(ctx, ref, b.schema, o.PartitionBy); err == nil {
			err = checkFit(ctx, db, relation, b.table, ref)
		}
	}
	if err == nil {
		for _, k := range o.JoinCols {
			if _, ok := fieldFor(b.schema, k); !ok {
				err = ldperr.Configf("", "join column %q is not in the data", k)
			}
		}
	}
	if err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

// ConflictError is a commit that lost a race after iceberg-go's own retries: main moved in a
// way the write could not be replayed on. Another attempt may succeed.
type ConflictError struct {
	Ref Ref
	Err error
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("commit to %s conflicted with a concurrent writer: %v", e.Ref, e.Err)
}
func (e *ConflictError) Unwrap() error   { return e.Err }
func (e *ConflictError) Retriable() bool { return true }

// lockTable waits for the lock that keeps a local catalog's overwrites and upserts of ref
// apart: cancelled by ctx, bounded by o.LockTimeout, and saying every few seconds who holds it.
func (c *Catalog) lockTable(ctx context.Context, ref Ref, o WriteOptions) (*flock.Lock, error) {
	timeout := o.LockTimeout
	if timeout <= 0 {
		timeout = v1.DefaultLockTimeout
	}
	owner := o.Owner
	if owner.PID == 0 {
		owner = Self()
	}
	wo := flock.WaitOptions{Timeout: timeout, Owner: owner.String()}
	if o.Notify != nil {
		wo.Waiting = func(holder string, waited time.Duration) {
			if holder == "" {
				holder = "another process"
			}
			o.Notify(fmt.Sprintf("waiting %s for the lock on %s (%s), held by %s", waited.Round(time.Second), ref, c.LockPath(ref), holder))
		}
	}
	if owner.RunID != "" && owner.Attempt > 1 {
		wo.Supersedes = func(holder string) bool { return olderAttempt(holder, owner.RunID, owner.Attempt) }
	}
	l, err := flock.Wait(ctx, c.LockPath(ref), wo)
	if errors.Is(err, flock.ErrSuperseded) {
		// The holder is an older attempt of this run: this attempt fences it before it stages,
		// and the fence, not the lock, is what keeps the older one from publishing. Waiting
		// for it would wait for a process that may be stopped for good.
		if o.Notify != nil {
			o.Notify(fmt.Sprintf("the lock on %s is held by an older attempt of run %s (%s): fencing it and going on without the lock", ref, owner.RunID, flock.Holder(c.LockPath(ref))))
		}
		return nil, nil
	}
	return l, err
}

// olderAttempt reports whether holder, what a lock's holder wrote (Owner.String), is an
// attempt of run older than attempt.
func olderAttempt(holder, runID string, attempt int) bool {
	mark := ", run " + runID + " attempt "
	i := strings.Index(holder, mark)
	if i < 0 {
		return false
	}
	rest := holder[i+len(mark):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	a, err := strconv.Atoi(rest[:n])
	return err == nil && (n == len(rest) || rest[n] == ',') && a < attempt
}

// scratch is a private folder for the files a write stages before they become data files:
// in the warehouse's scratch area with an owner record when the warehouse is a local folder,
// so that maintenance knows a write is in flight; else a temporary folder.
func (c *Catalog) scratch() (string, error) {
	if c.Warehouse == "" || IsRemote(c.Warehouse) {
		return os.MkdirTemp("", "ldp-write-")
	}
	return newScratch(c.Warehouse)
}

func (c *Catalog) loadOrCreate(ctx context.Context, ref Ref, bs *iceberg.Schema, pby []v1.PartitionField) (*table.Table, bool, error) {
	tbl, err := c.Load(ctx, ref)
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		return tbl, false, err
	}
	spec, err := partitionSpec(bs, pby)
	if err != nil {
		return nil, false, err
	}
	if err := c.refuseOrphaned(ctx, ref); err != nil {
		return nil, false, err
	}
	if err := c.ensureNamespace(ctx, ref.Namespace); err != nil {
		return nil, false, err
	}
	for try := 1; ; try++ {
		tbl, err = c.cat.CreateTable(ctx, ref.ident(), bs, catalog.WithPartitionSpec(&spec), catalog.WithProperties(TableProperties))
		if err == nil {
			break
		}
		// Another writer created it first (the typed error, or the database's unique
		// constraint when both inserted at once): use theirs.
		if existing, lerr := c.Load(ctx, ref); lerr == nil {
			return existing, false, nil
		}
		// A REST catalog may refuse every one of several creates at once ("table changed
		// during create", a CommitFailedException) and show none of them yet: try again, as
		// any commit that lost a race is.
		if !isConflict(err) && !strings.Contains(err.Error(), "CommitFailedException") || try >= 8 {
			return nil, false, storageHint(fmt.Errorf("create table %s: %w", ref, err))
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(time.Duration(rand.Int64N(int64(50*time.Millisecond<<min(try-1, 6)) + 1))):
		}
	}
	// Commits to the new table go through c.cat, on the metadata parsed here (commit.go).
	metadataCache.put(tbl.MetadataLocation(), tbl.Metadata())
	return table.New(ref.ident(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c.cat), true, nil
}

// dropUnwritten drops the table ref, which this write created, when no snapshot of it holds
// a row and no ref but main points into it: its first write failed. Left behind, the table
// kept what the failed write created it with, and every later run loaded it as it was. The catalog row goes only while it still
// points at the version read here, so a table another writer has committed to meanwhile
// stays; then the files of that version go, so the next write creates the table afresh (a
// metadata file of version 1 or later would say the catalog lost a table). A REST catalog's
// tables are its server's: they stay.
func (c *Catalog) dropUnwritten(ctx context.Context, ref Ref) {
	if c.db == nil {
		return
	}
	tbl, err := c.Load(ctx, ref)
	if err != nil {
		return
	}
	md := tbl.Metadata()
	for _, s := range md.Snapshots() {
		if totalRecords(&s) > 0 {
			return
		}
	}
	// A ref beside main is a fence tag or a staging branch: the table carries an attempt's
	// fence (which the drop would lift) or another writer's work.
	for name := range md.Refs() {
		if name != table.MainBranch {
			return
		}
	}
	q := `DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`
	if c.postgres {
		q = dollarPlaceholders(q)
	}
	res, err := c.db.ExecContext(ctx, q, c.Identifier, ref.Namespace, ref.Name, tbl.MetadataLocation())
	if err != nil {
		return
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	files := []string{tbl.MetadataLocation()}
	for e := range md.PreviousFiles() {
		files = append(files, e.MetadataFile)
	}
	for _, s := range md.Snapshots() {
		if manifests, err := s.Manifests(fsys); err == nil {
			for _, m := range manifests {
				files = append(files, m.FilePath())
			}
		}
		if s.ManifestList != "" {
			files = append(files, s.ManifestList)
		}
	}
	for _, f := range files {
		fsys.Remove(f)
	}
	if !IsRemote(tbl.Location()) {
		// The folders, if this write left them empty.
		dir := localPath(tbl.Location())
		for _, d := range []string{filepath.Join(dir, "metadata"), filepath.Join(dir, "data"), dir} {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				os.Remove(d)
			}
		}
	}
}

// schemaChanges are the batch's fields the table's schema must take: its new columns (a name
// that differs from a column's only in case is that column), and the columns whose type Iceberg
// promotes to the batch's (spelled as the table spells them).
func schemaChanges(current, batch *iceberg.Schema) []iceberg.NestedField {
	var out []iceberg.NestedField
	for _, f := range batch.Fields() {
		cur, ok := fieldFor(current, f.Name)
		switch {
		case !ok:
			out = append(out, f)
		case promoted(cur.Type, f.Type):
			f.Name = cur.Name
			out = append(out, f)
		}
	}
	return out
}

// evolve adds the batch's new columns to the table's schema in the write's transaction (and
// promotes the columns Iceberg promotes), and keeps the name mapping (how files without field
// ids are read) in step with it.
func evolve(tx *table.Transaction, current, batch *iceberg.Schema) error {
	changes := schemaChanges(current, batch)
	if len(changes) == 0 {
		return nil
	}
	if err := tx.UpdateSchema(true, false).UnionByNameWith(iceberg.NewSchema(0, changes...)).Commit(); err != nil {
		return ldperr.Configf("", "cannot add the new columns to the table: %v", err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return err
	}
	mapping, err := jsonMapping(staged.Schema())
	if err != nil {
		return err
	}
	return tx.SetProperties(iceberg.Properties{table.DefaultNameMappingKey: mapping})
}

// writer stages one batch into a transaction.
type writer struct {
	db       *engine.DB
	relation string
	mode     v1.WriteMode
	joinCols []string
	props    iceberg.Properties
	tmp      *scratchDir
	// replaceWhere narrows an overwrite to the rows it selects (a window's), given the type of
	// the table's column replaceColumn; nil is the whole table.
	replaceColumn string
	replaceWhere  func(colType string) (string, error)
	// loc is WriteOptions.Location.
	loc *time.Location
	// added caches the batch's files: a re-stage after main moved reuses them.
	added []string
	// rewrites are the survivor files of the current try; a new try removes the last one's.
	rewrites []string
	written  []string // local paths of files this write created, removed on failure
	// fs is the table's storage, where written files are uploaded when it is an object store.
	fs icebergio.IO
	// prewritten and prewrittenParts are WriteOptions.Prewritten and PrewrittenPartitions.
	prewritten      string
	prewrittenParts []string
	// empty is a batch of no rows that may be published (WriteOptions.AllowEmpty).
	empty bool
}

func (w *writer) removeFiles() {
	removeFiles(w.fs, w.written)
	w.written = nil
}

// useFS remembers tbl's storage, for the files the write puts there.
func (w *writer) useFS(ctx context.Context, tbl *table.Table) error {
	if w.fs != nil {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open the storage of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	w.fs = fsys
	return nil
}

// stage writes the batch's files and adds the data operation to tx, against tbl (the table
// as the transaction sees it, after any schema change).
func (w *writer) stage(ctx context.Context, tx *table.Transaction, tbl *table.Table) error {
	if w.empty {
		return w.stageEmpty(ctx, tx, tbl)
	}
	if needsArrowWriter(tbl.Schema(), tbl.Spec()) {
		return w.stageArrow(ctx, tx, tbl)
	}
	if w.added == nil {
		added, err := w.writeBatch(ctx, tbl)
		if err != nil {
			return err
		}
		w.added = added
	}
	added := w.added
	switch w.mode {
	case v1.WriteAppend:
		return w.addFiles(ctx, tx, added)
	case v1.WriteOverwrite:
		if w.replaceWhere != nil {
			pred, err := w.replacePredicate(tbl)
			if err != nil {
				return err
			}
			deleted, rewritten, err := w.rewriteWithout(ctx, tbl, pred)
			if err != nil {
				return err
			}
			if len(deleted) == 0 {
				return w.addFiles(ctx, tx, added)
			}
			return tx.ReplaceDataFiles(ctx, deleted, append(rewritten, added...), w.props)
		}
		current, err := currentFiles(ctx, tbl)
		if err != nil {
			return err
		}
		if len(current) == 0 {
			return w.addFiles(ctx, tx, added)
		}
		return tx.ReplaceDataFiles(ctx, current, added, w.props)
	case v1.WriteUpsert:
		match, err := w.keyMatch(ctx, tbl, "t")
		if err != nil {
			return err
		}
		deleted, rewritten, err := w.rewriteWithout(ctx, tbl, match)
		if err != nil {
			return err
		}
		if len(deleted) == 0 {
			return w.addFiles(ctx, tx, added)
		}
		return tx.ReplaceDataFiles(ctx, deleted, append(rewritten, added...), w.props)
	}
	return ldperr.Configf("", "unknown write mode %q: use append, overwrite or upsert", w.mode)
}

// stageEmpty stages an empty batch: a snapshot that adds no file, and for an overwrite removes
// the rows it replaces (the window's, or the whole table's).
func (w *writer) stageEmpty(ctx context.Context, tx *table.Transaction, tbl *table.Table) error {
	var deleted, kept []string
	var err error
	switch {
	case w.mode == v1.WriteOverwrite && w.replaceWhere != nil:
		var pred string
		if pred, err = w.replacePredicate(tbl); err == nil {
			deleted, kept, err = w.rewriteWithout(ctx, tbl, pred)
		}
	case w.mode == v1.WriteOverwrite:
		deleted, err = currentFiles(ctx, tbl)
	}
	if err != nil {
		return err
	}
	if len(deleted) == 0 {
		return w.addFiles(ctx, tx, nil)
	}
	return tx.ReplaceDataFiles(ctx, deleted, kept, w.props)
}

// addFiles adds the batch's files. They were just written under a folder named by a fresh
// UUID, so they cannot already be in the table: iceberg-go's duplicate check, which reads
// every data file of the table, is skipped (it made each append slower as history grew).
func (w *writer) addFiles(ctx context.Context, tx *table.Transaction, files []string) error {
	return tx.AddFiles(ctx, files, w.props, true)
}

// replacePredicate is the overwrite's predicate for tbl's column type (the table's, as the
// write sees it), whatever the batch's column is.
func (w *writer) replacePredicate(tbl *table.Table) (string, error) {
	return w.replaceWhere(ColumnType(tbl, w.replaceColumn))
}

// keyMatch is a predicate over alias (a row of tbl) that is true for a row whose join key is
// in the batch. The batch's keys compare as they are written into the table's type, and with
// IS NOT DISTINCT FROM, so a null key replaces a null key.
func (w *writer) keyMatch(ctx context.Context, tbl *table.Table, alias string) (string, error) {
	cols, err := w.db.Columns(ctx, w.relation)
	if err != nil {
		return "", err
	}
	var conds []string
	for _, k := range w.joinCols {
		key := "b." + engine.Ident(k)
		c, okc := columnFor(cols, k)
		f, okf := fieldFor(tbl.Schema(), k)
		if okc && okf {
			key = castTo("b."+engine.Ident(c.Name), c.Type, f.Type, w.loc)
		}
		conds = append(conds, fmt.Sprintf("%s IS NOT DISTINCT FROM %s.%s", key, alias, engine.Ident(k)))
	}
	return fmt.Sprintf("EXISTS (SELECT 1 FROM %s b WHERE %s)", w.relation, strings.Join(conds, " AND ")), nil
}

// selectList writes the batch's columns in the table's types (see fit.go), in the table's
// order and with the table's names; a table column the batch lacks is left out (it reads as
// null).
func selectList(ctx context.Context, db *engine.DB, relation string, sc *iceberg.Schema, loc *time.Location) (string, error) {
	cols, err := db.Columns(ctx, relation)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, f := range sc.Fields() {
		c, ok := columnFor(cols, f.Name)
		if !ok {
			continue
		}
		parts = append(parts, castTo(engine.Ident(c.Name), c.Type, f.Type, loc)+" AS "+engine.Ident(f.Name))
	}
	return strings.Join(parts, ", "), nil
}

// castsNothing is the columns selectList's select over a relation of cols gives when each of
// its casts is to the type the column has (so no DESCRIBE need say), or nil.
func castsNothing(cols []engine.Column, sc *iceberg.Schema, loc *time.Location) []engine.Column {
	var out []engine.Column
	for _, f := range sc.Fields() {
		c, ok := columnFor(cols, f.Name)
		if !ok {
			continue
		}
		switch dt := duckType(f.Type); {
		case dt != c.Type || castTo("x", c.Type, f.Type, loc) != "CAST(x AS "+dt+")":
			return nil
		case dt == "BOOLEAN", dt == "INTEGER", dt == "BIGINT", dt == "DATE", dt == "TIMESTAMP", dt == "VARCHAR":
			out = append(out, engine.Column{Name: f.Name, Type: dt})
		default:
			return nil
		}
	}
	return out
}

// writeBatch has DuckDB write the batch as Parquet under the table's data folder, one folder of
// files per partition, and returns their locations.
func (w *writer) writeBatch(ctx context.Context, tbl *table.Table) ([]string, error) {
	sc, spec := tbl.Schema(), tbl.Spec()
	sel, err := selectList(ctx, w.db, w.relation, sc, w.loc)
	if err != nil {
		return nil, err
	}
	if err := w.useFS(ctx, tbl); err != nil {
		return nil, err
	}
	id := uuid.NewString()
	dir := filepath.Join(mirrorPath(tbl.Location()), "data", id)
	var part, exprs []string
	plain := fmt.Sprintf("SELECT %s FROM %s", sel, w.relation)
	for i, f := range spec.Fields() {
		src, _ := sc.FindFieldByID(f.SourceID())
		expr := partitionExpr(src.Name, src.Type, f.Transform)
		alias := "__ldp_p" + strconv.Itoa(i)
		sel += ", " + expr + " AS " + alias
		part = append(part, alias)
		exprs = append(exprs, expr)
	}
	q := fmt.Sprintf("SELECT %s FROM %s", sel, w.relation)
	if w.mode == v1.WriteAppend && w.prewritten != "" && slices.Equal(exprs, w.prewrittenParts) {
		if cols, err := w.db.Columns(ctx, w.relation); err == nil && castsNothing(cols, sc, w.loc) != nil {
			w.db.Pin("("+plain+")", castsNothing(cols, sc, w.loc)) // its describe was a statement a window
		}
		if files, ok := w.linkPrewritten(ctx, plain, dir); ok {
			return publishFiles(w.fs, files)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if len(part) == 0 {
		out := filepath.Join(dir, "part-0.parquet")
		err = w.db.Exec(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION snappy)", q, engine.Lit(out)))
	} else {
		err = w.db.Exec(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION snappy, PARTITION_BY (%s), FILENAME_PATTERN 'part-{i}')",
			q, engine.Lit(dir), strings.Join(part, ", ")))
	}
	files, werr := listParquet(dir)
	w.written = append(w.written, files...)
	if err != nil {
		return nil, fmt.Errorf("write data files: %w", err)
	}
	if werr != nil {
		return nil, werr
	}
	return publishFiles(w.fs, files)
}

// linkPrewritten links the prewritten file (as dir-part-0.parquet beside dir: a folder for one
// file was a new directory a window, as dear as a new file) or the files of the prewritten folder (into dir)
// as the batch's data files, when their columns are those q would write. A link keeps a file
// readable under its first name (the run's views read it); a link across file systems fails,
// and the rows are written instead.
func (w *writer) linkPrewritten(ctx context.Context, q, dir string) ([]string, bool) {
	src := "read_parquet(" + engine.Lit(w.prewritten) + ")"
	var files []string
	if info, err := os.Stat(w.prewritten); err != nil {
		return nil, false
	} else if info.IsDir() {
		if files, err = listParquet(w.prewritten); err != nil || len(files) == 0 {
			return nil, false
		}
		src = "read_parquet(" + engine.LitList(files) + ", hive_partitioning = false)"
	} else {
		files = []string{w.prewritten}
	}
	want, err := w.db.Columns(ctx, "("+q+")")
	if err != nil {
		return nil, false
	}
	have, err := w.db.Columns(ctx, src)
	if err != nil || !slices.Equal(want, have) {
		return nil, false
	}
	var out []string
	for i, f := range files {
		var to string
		if rel, err := filepath.Rel(w.prewritten, f); err != nil || rel == "." {
			to = dir + "-part-" + strconv.Itoa(i) + ".parquet"
		} else {
			to = filepath.Join(dir, rel)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, false
		}
		if err := os.Link(f, to); err != nil {
			for _, o := range out {
				os.Remove(o)
			}
			return nil, false
		}
		out = append(out, to)
	}
	w.written = append(w.written, out...)
	return out, true
}

// rewritePrefix starts the name of every file rewriteWithout writes (a batch's files are
// part-N, or a prewritten append's own names): a rebase tells a window's batch from the
// survivors of its rewrite by it (isRewrite).
const rewritePrefix = "rewrite-"

// isRewrite reports whether the data file at loc holds the survivors of a rewrite.
func isRewrite(loc string) bool { return strings.HasPrefix(path.Base(loc), rewritePrefix) }

// rewriteWithout finds the current data files that hold rows matching pred (over alias t) and
// writes each again without them. It returns the files to delete and their replacements.
func (w *writer) rewriteWithout(ctx context.Context, tbl *table.Table, pred string) (deleted, rewritten []string, err error) {
	current, err := currentFiles(ctx, tbl)
	if err != nil || len(current) == 0 {
		return nil, nil, err
	}
	if err := w.useFS(ctx, tbl); err != nil {
		return nil, nil, err
	}
	local, err := fetch(w.fs, current)
	if err != nil {
		return nil, nil, err
	}
	q := fmt.Sprintf("SELECT DISTINCT filename FROM read_parquet(%s, filename = true, union_by_name = true, hive_partitioning = false) t WHERE %s ORDER BY 1",
		engine.LitList(local), pred)
	rows, err := w.db.Query(ctx, q)
	if err != nil {
		return nil, nil, fmt.Errorf("find the rows to replace: %w", err)
	}
	var affected []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return nil, nil, err
		}
		affected = append(affected, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	removeFiles(w.fs, w.rewrites) // a previous try's survivors, now stale
	w.rewrites = nil
	dir := filepath.Join(mirrorPath(tbl.Location()), "data", uuid.NewString())
	var survivors []string
	for i, f := range affected {
		deleted = append(deleted, locationOf(f))
		keep := fmt.Sprintf("SELECT * FROM read_parquet(%s, hive_partitioning = false) t WHERE (%s) IS NOT TRUE", engine.Lit(f), pred)
		n, err := w.db.Count(ctx, "("+keep+")")
		if err != nil {
			return nil, nil, err
		}
		if n == 0 {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, err
		}
		out := filepath.Join(dir, fmt.Sprintf("%s%d.parquet", rewritePrefix, i))
		w.written = append(w.written, out)
		w.rewrites = append(w.rewrites, out)
		if err := w.db.Exec(ctx, fmt.Sprintf("COPY (%s) TO %s (FORMAT parquet, COMPRESSION snappy)", keep, engine.Lit(out))); err != nil {
			return nil, nil, fmt.Errorf("rewrite %s: %w", f, err)
		}
		survivors = append(survivors, out)
	}
	if rewritten, err = publishFiles(w.fs, survivors); err != nil {
		return nil, nil, err
	}
	return deleted, rewritten, nil
}

// needsArrowWriter reports whether a spec has a transform whose value cannot be read back from
// column bounds (bucket), or that DuckDB cannot compute (truncate of a decimal), so iceberg-go
// must write the files itself.
func needsArrowWriter(sc *iceberg.Schema, spec iceberg.PartitionSpec) bool {
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok || !f.Transform.PreservesOrder() || partitionExpr(src.Name, src.Type, f.Transform) == "" {
			return true
		}
	}
	return false
}

// stageArrow hands the batch to iceberg-go's writer as Arrow, for bucket-partitioned tables.
func (w *writer) stageArrow(ctx context.Context, tx *table.Transaction, tbl *table.Table) error {
	sel, err := selectList(ctx, w.db, w.relation, tbl.Schema(), w.loc)
	if err != nil {
		return err
	}
	var filter iceberg.BooleanExpression
	if w.mode == v1.WriteUpsert {
		if filter, err = w.keyFilter(ctx); err != nil {
			return err
		}
	}
	// DuckDB writes the batch once to a scratch file; arrow-go streams it to iceberg-go's
	// writer a row group at a time, so the batch is never whole in Go memory.
	tmp, err := w.tmp.path()
	if err != nil {
		return err
	}
	scratch := filepath.Join(tmp, "batch.parquet")
	if err := w.db.Exec(ctx, fmt.Sprintf("COPY (SELECT %s FROM %s) TO %s (FORMAT parquet, ROW_GROUP_SIZE 65536)", sel, w.relation, engine.Lit(scratch))); err != nil {
		return err
	}
	pf, err := file.OpenParquetFile(scratch, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 65536}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rdr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rdr.Release()
	switch w.mode {
	case v1.WriteAppend:
		return tx.Append(ctx, rdr, w.props)
	case v1.WriteOverwrite:
		return tx.Overwrite(ctx, rdr, w.props)
	default:
		return tx.Overwrite(ctx, rdr, w.props, table.WithOverwriteFilter(filter))
	}
}

// keyFilter is an Iceberg expression matching the batch's join keys, for upserts through the
// Arrow writer.
func (w *writer) keyFilter(ctx context.Context) (iceberg.BooleanExpression, error) {
	keys := make([]string, len(w.joinCols))
	for i, k := range w.joinCols {
		keys[i] = engine.Ident(k)
	}
	rows, err := w.db.Query(ctx, fmt.Sprintf("SELECT DISTINCT %s FROM %s", strings.Join(keys, ", "), w.relation))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var match iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	for rows.Next() {
		vals := make([]any, len(keys))
		ptrs := make([]any, len(keys))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var row iceberg.BooleanExpression = iceberg.AlwaysTrue{}
		for i, k := range w.joinCols {
			ref := iceberg.Reference(k)
			var e iceberg.BooleanExpression
			switch v := vals[i].(type) {
			case nil:
				e = iceberg.IsNull(ref)
			case string:
				e = iceberg.EqualTo(ref, v)
			case int64:
				e = iceberg.EqualTo(ref, v)
			case int32:
				e = iceberg.EqualTo(ref, v)
			default:
				return nil, ldperr.Configf("", "upsert into a bucket-partitioned table needs string or integer join columns; %q is %T", k, v)
			}
			row = iceberg.NewAnd(row, e)
		}
		match = iceberg.NewOr(match, row)
	}
	return match, rows.Err()
}

// checkUniqueKeys refuses an upsert batch that holds a join key twice: which row would win is
// not defined, and the table must never hold a key twice.
func checkUniqueKeys(ctx context.Context, db *engine.DB, relation string, keys []string) error {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = engine.Ident(k)
	}
	var dups int64
	err := db.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s GROUP BY %s HAVING count(*) > 1)", relation, strings.Join(q, ", ")), &dups)
	if err != nil {
		return err
	}
	if dups > 0 {
		return fmt.Errorf("upsert batch holds %d join %s more than once on (%s): deduplicate the source or add a unique check", dups, plural(dups, "key", "keys"), strings.Join(keys, ", "))
	}
	return nil
}

func currentFiles(ctx context.Context, tbl *table.Table) ([]string, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the files of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.File.FilePath()
	}
	return out, nil
}

func listParquet(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	})
	return out, err
}

func totalRecords(s *table.Snapshot) int64 {
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	return n
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
