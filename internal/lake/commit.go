package lake

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// How a commit is sent to a SQL catalog (SQLite or PostgreSQL).
//
// iceberg-go's SQL CommitTable loads the table before each commit: it reads and parses the
// whole metadata.json the process parsed a moment ago (22% of the CPU at 3,000 snapshots,
// growing with history), then applies the updates and swaps the catalog's pointer with a
// compare-and-swap on the metadata location. casCatalog sends the same commit without the
// reload: it reads the pointer (one indexed row), takes the metadata this process already
// parsed for that location (metadataCache: every load and every commit of the process puts
// its metadata there), checks the requirements against it, applies the updates with
// iceberg-go's metadata builder, writes the new metadata file and swaps the pointer with
//
//	UPDATE iceberg_tables SET metadata_location = new, previous_metadata_location = old
//	WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = old
//
// which must touch exactly one row. The requirements are checked against the metadata at the
// location the swap asserts, so they hold when the swap lands exactly as in iceberg-go's
// commit; 0 rows is a concurrent commit between the read and the swap, the same retriable
// table.ErrCommitFailed iceberg-go returns. A location the process has not parsed (another
// writer's commit) is loaded and parsed once, as iceberg-go would. A REST catalog keeps
// iceberg-go's commit: the server checks the requirements, and the metadata it returns is
// kept for the next load (Catalog.commit, commitStage).

// casCatalog is a SQL catalog whose commits are built on the metadata this process parsed.
// Everything but CommitTable and LoadTable is iceberg-go's.
type casCatalog struct {
	catalog.Catalog
	c *Catalog
}

// beforeSwap is called after the new metadata file is written and before the pointer is
// swapped: the seam a test uses to commit from another handle in between. Nil in production.
var beforeSwap func(ref Ref)

// LoadTable loads through iceberg-go and keeps the parsed metadata for the next commit.
func (k casCatalog) LoadTable(ctx context.Context, id table.Identifier) (*table.Table, error) {
	t, err := k.Catalog.LoadTable(ctx, id)
	if err == nil {
		metadataCache.put(t.MetadataLocation(), t.Metadata())
	}
	return t, err
}

// CommitTable commits updates under reqs on the metadata the catalog points at now, parsed by
// this process, with a compare-and-swap on the metadata location. A commit that creates a
// table, names a table by a namespace the catalog stores encoded, or writes its metadata in
// zstd is iceberg-go's own.
func (k casCatalog) CommitTable(ctx context.Context, id table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if len(id) != 2 || strings.Contains(id[0], ".") || strings.Contains(id[0], "__iceberg_namespace_v1__:") {
		return k.Catalog.CommitTable(ctx, id, reqs, updates)
	}
	ref := Ref{Namespace: id[0], Name: id[1]}
	loc, err := k.c.metadataLocation(ctx, ref)
	if err != nil || loc == "" {
		return k.Catalog.CommitTable(ctx, id, reqs, updates)
	}
	base, ok := metadataCache.get(loc)
	if !ok || base == nil {
		t, err := k.LoadTable(ctx, id)
		if err != nil {
			return nil, "", err
		}
		loc, base = t.MetadataLocation(), t.Metadata()
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			return nil, "", err
		}
	}
	b, err := table.MetadataBuilderFromBase(base, loc)
	if err != nil {
		return nil, "", err
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, "", err
		}
	}
	if !b.HasChanges() {
		return base, loc, nil
	}
	next, err := b.Build()
	if err != nil {
		return nil, "", err
	}
	switch next.Properties().Get(table.MetadataCompressionKey, table.MetadataCompressionDefault) {
	case table.MetadataCompressionCodecNone, table.MetadataCompressionCodecGzip:
	default:
		return k.Catalog.CommitTable(ctx, id, reqs, updates)
	}
	version := metadataVersion(loc)
	if version < 0 {
		return nil, "", fmt.Errorf("commit to %s: invalid metadata location %s", ref, loc)
	}
	provider, err := table.LoadLocationProvider(next.Location(), next.Properties())
	if err != nil {
		return nil, "", err
	}
	newLoc, err := provider.NewTableMetadataFileLocation(version + 1)
	if err != nil {
		return nil, "", err
	}
	props := maps.Clone(k.c.props)
	if props == nil {
		props = iceberg.Properties{}
	}
	maps.Copy(props, next.Properties())
	fsys, err := icebergio.LoadFSFunc(props, newLoc)(ctx)
	if err != nil {
		return nil, "", err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, "", fmt.Errorf("commit to %s: the file system of %s cannot write", ref, newLoc)
	}
	if err := writeMetadata(next, wfs, newLoc); err != nil {
		return nil, "", fmt.Errorf("commit to %s: write %s: %w", ref, newLoc, err)
	}
	if beforeSwap != nil {
		beforeSwap(ref)
	}
	if err := k.c.swapMetadata(ctx, ref, loc, newLoc); err != nil {
		if errors.Is(err, table.ErrCommitFailed) {
			wfs.Remove(newLoc) // the swap changed nothing: no catalog points at the file
		}
		return nil, "", err
	}
	metadataCache.put(newLoc, next)
	return next, newLoc, nil
}

// swapMetadata points the catalog's row of ref at next if it still points at prev. A row
// that moved is a concurrent commit: a retriable table.ErrCommitFailed, as iceberg-go's.
// Any other error leaves the outcome unknown.
func (c *Catalog) swapMetadata(ctx context.Context, ref Ref, prev, next string) error {
	q := `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`
	if c.postgres {
		q = `UPDATE iceberg_tables SET metadata_location = $1, previous_metadata_location = $2 WHERE catalog_name = $3 AND table_namespace = $4 AND table_name = $5 AND metadata_location = $6`
	}
	res, err := c.db.ExecContext(ctx, q, next, prev, c.Identifier, ref.Namespace, ref.Name, prev)
	if err != nil {
		return fmt.Errorf("error updating table information: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("error updating table information: %w", err)
	}
	switch n {
	case 1:
		return nil
	case 0:
		return fmt.Errorf("%w: table %s metadata-location moved underneath us", table.ErrCommitFailed, ref)
	}
	return fmt.Errorf("error updating table information: %d rows of the catalog name table %s", n, ref)
}

// writeMetadata writes meta to loc as iceberg-go does, plain or gzipped as the table says.
func writeMetadata(meta table.Metadata, fsys icebergio.WriteFileIO, loc string) (err error) {
	out, err := fsys.Create(loc)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	var w io.Writer = out
	if meta.Properties().Get(table.MetadataCompressionKey, table.MetadataCompressionDefault) == table.MetadataCompressionCodecGzip {
		gz := gzip.NewWriter(out)
		defer func() {
			if cerr := gz.Close(); err == nil {
				err = cerr
			}
		}()
		w = gz
	}
	// The metadata's own encoding is compact already (iceberg-go's json.Marshal, its snapshots
	// appended each encoded once: docs/upstream/iceberg-go-snapshot-json.md). json.Encoder
	// would scan and copy all of it again (about 500 KB at 500 snapshots), for the same bytes.
	m, ok := meta.(json.Marshaler)
	if !ok {
		return json.NewEncoder(w).Encode(meta)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// One catalog commit per batch. A batch that adds only snapshots (no schema union) is not
// committed on a staging branch: its transaction on main is built and left uncommitted, and
// the publish commit carries the updates that add its snapshots, moves main to the last and
// attaches the key index, under the same requirements as the publish of a staged branch (main
// is still the base the key search read, the attempt is not fenced). Those requirements are
// what the exactly-once protocol rests on; the branch only made the snapshots catalog state
// one commit earlier. docs/exactly-once.md says why the guarantees hold.

// builtSnapshots are the snapshots tx (a transaction on tbl's main, not committed) adds on top
// of main's head, oldest first, and the updates that add them to the catalog.
func builtSnapshots(tbl *table.Table, tx *table.Transaction) ([]*table.Snapshot, []table.Update, error) {
	st, err := tx.StagedTable()
	if err != nil {
		return nil, nil, err
	}
	m, base := st.Metadata(), tbl.CurrentSnapshot()
	var snaps []*table.Snapshot
	s := m.CurrentSnapshot()
	for s != nil && (base == nil || s.SnapshotID != base.SnapshotID) {
		snaps = append(snaps, s)
		if s.ParentSnapshotID == nil {
			s = nil
			break
		}
		s = m.SnapshotByID(*s.ParentSnapshotID)
	}
	if base == nil || s == nil || len(snaps) == 0 {
		return nil, nil, fmt.Errorf("stage on %s: the staged snapshots do not chain to main's head", refOf(tbl))
	}
	slices.Reverse(snaps)
	adds := make([]table.Update, len(snaps))
	for i, s := range snaps {
		adds[i] = table.NewAddSnapshotUpdate(s)
	}
	return snaps, adds, nil
}

// publishBuilt publishes snapshots built on base and not committed (builtSnapshots): one
// commit adds them, moves main to head and attaches index, asserting the table is still the
// one they were built on, main is still base, and fences.
func (c *Catalog) publishBuilt(ctx context.Context, tbl *table.Table, base int64, adds []table.Update, head int64, index []table.Update, fences ...table.Requirement) error {
	reqs := append([]table.Requirement{
		table.AssertTableUUID(tbl.Metadata().TableUUID()),
		table.AssertRefSnapshotID(table.MainBranch, &base),
	}, fences...)
	updates := append(slices.Clone(adds), table.NewSetSnapshotRefUpdate(table.MainBranch, head, table.BranchRef, 0, 0, 0))
	return c.commit(ctx, refOf(tbl), reqs, append(updates, index...))
}
