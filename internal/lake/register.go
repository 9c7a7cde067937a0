package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// OrphanedTableError is a table the catalog does not know whose metadata lies in the
// warehouse: the catalog file was deleted or replaced. Creating the table again would start
// it empty over its published data (and make its files orphans that maintenance deletes), so
// ldp refuses and says how to take the table back.
type OrphanedTableError struct {
	Ref      Ref
	Catalog  string
	Metadata string
}

func (e *OrphanedTableError) Error() string {
	return fmt.Sprintf("table %s is not in catalog %s, but its metadata is in the warehouse (newest: %s): the catalog may have been deleted or replaced. Nothing was written: creating the table again would hide what it holds. Register it again with: ldp catalog register SPEC", e.Ref, e.Catalog, e.Metadata)
}

// tableLocation is where the catalog puts ref's files: <warehouse>/<namespace>.db/<name>, as
// iceberg-go's catalogs lay tables out. "" for a catalog whose server chooses (rest).
func (c *Catalog) tableLocation(ref Ref) string {
	if c.db == nil || c.Warehouse == "" {
		return ""
	}
	return strings.TrimSuffix(warehouseLocation(c.Warehouse), "/") + "/" + ref.Namespace + ".db/" + ref.Name
}

// metadataFiles lists the metadata.json files under ref's location in the warehouse, oldest
// version first.
func (c *Catalog) metadataFiles(ctx context.Context, ref Ref) ([]string, error) {
	loc := c.tableLocation(ref)
	if loc == "" {
		return nil, nil
	}
	dir := loc + "/metadata"
	var names []string
	if IsRemote(dir) {
		fsys, err := icebergio.LoadFS(ctx, c.props, dir)
		if err != nil {
			return nil, err
		}
		lister, ok := fsys.(icebergio.ListableIO)
		if !ok {
			return nil, nil
		}
		lister.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".metadata.json") {
				names = append(names, p)
			}
			return nil
		})
	} else {
		return localMetadataFiles(dir)
	}
	sortByVersion(names)
	return names, nil
}

// localMetadataFiles lists the metadata.json files of the local folder dir (a path or a
// file:// location), oldest version first.
func localMetadataFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(localPath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".metadata.json") {
			names = append(names, dir+"/"+e.Name())
		}
	}
	sortByVersion(names)
	return names, nil
}

// sortByVersion orders <version>-<uuid>.metadata.json files oldest first: the highest version
// is the newest commit.
func sortByVersion(names []string) {
	sort.Slice(names, func(i, j int) bool { return metadataVersion(names[i]) < metadataVersion(names[j]) })
}

// lostTableAt is an *OrphanedTableError when the newest of a table's metadata files shows a
// table with commits (version 1 or later) that its catalog does not know. Version 0 is a table
// as created, with nothing in it: another process creating the table writes it before its
// catalog row, so it is no sign of a lost catalog.
func lostTableAt(files []string, ref Ref, catalog string) error {
	if len(files) == 0 || metadataVersion(files[len(files)-1]) < 1 {
		return nil
	}
	return &OrphanedTableError{Ref: ref, Catalog: catalog, Metadata: displayLocation(files[len(files)-1])}
}

func metadataVersion(loc string) int {
	base := loc[strings.LastIndex(loc, "/")+1:]
	n, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(base, "-", 2)[0], "v"))
	if err != nil {
		return -1
	}
	return n
}

// refuseOrphaned is an *OrphanedTableError when ref is about to be created where a table's
// metadata already lies and the catalog does not know it.
//
// The caller found no row before it listed the files, and a writer creating the table at the
// same time may have created it and committed in between: its files then look like a lost
// table's. So the row is read again after the listing. A writer inserts its row before any
// commit writes version 1, so a version 1 file listed before that read belongs to a row the
// read sees, unless the catalog lost it.
func (c *Catalog) refuseOrphaned(ctx context.Context, ref Ref) error {
	files, err := c.metadataFiles(ctx, ref)
	if err != nil {
		return err
	}
	lost := lostTableAt(files, ref, c.Identifier)
	if lost == nil {
		return nil
	}
	if loc, err := c.metadataLocation(ctx, ref); err == nil && loc != "" {
		return nil // created meanwhile: the create fails as a duplicate and uses that table
	} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return lost
}

// displayLocation is a location as a person reads it: a local file as a path.
func displayLocation(loc string) string {
	if IsRemote(loc) {
		return loc
	}
	return filepath.Clean(localPath(loc))
}

// Register puts ref in the catalog at a metadata file and returns it: at metadata when it is
// given (a path or location; a table the catalog knows is pointed there, the way back from a
// corrupt current version), else at the newest readable metadata.json under the table's
// location in the warehouse, for a table the catalog lost.
func (c *Catalog) Register(ctx context.Context, ref Ref, metadata string) (string, error) {
	if c.db == nil {
		return "", fmt.Errorf("catalog %s lays its tables out itself: register %s with its server", c.Identifier, ref)
	}
	current, err := c.metadataLocation(ctx, ref)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if current != "" && metadata == "" {
		return "", fmt.Errorf("table %s is already in catalog %s: there is nothing to register (to point it at another metadata file, add --metadata FILE)", ref, c.Identifier)
	}
	loc := metadata
	if loc != "" {
		if !IsRemote(loc) && !strings.HasPrefix(loc, "file://") {
			abs, err := filepath.Abs(loc)
			if err != nil {
				return "", err
			}
			loc = fileLocation(abs)
		}
		if _, err := readMetadata(ctx, c, ref, loc); err != nil {
			return "", err
		}
	} else {
		locs, err := c.metadataFiles(ctx, ref)
		if err != nil {
			return "", fmt.Errorf("look for the metadata of %s: %w", ref, err)
		}
		if len(locs) == 0 {
			return "", fmt.Errorf("no metadata.json under %s/metadata: there is no table %s to register", displayLocation(c.tableLocation(ref)), ref)
		}
		// The newest file that reads: a truncated newest version is passed over.
		for i := len(locs) - 1; i >= 0 && loc == ""; i-- {
			if _, err := readMetadata(ctx, c, ref, locs[i]); err == nil {
				loc = locs[i]
			}
		}
		if loc == "" {
			return "", fmt.Errorf("none of the %d metadata files of %s reads as a table's metadata", len(locs), ref)
		}
	}
	if err := c.ensureNamespace(ctx, ref.Namespace); err != nil {
		return "", err
	}
	q := `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location) VALUES (?, ?, ?, 'TABLE', ?)`
	args := []any{c.Identifier, ref.Namespace, ref.Name, loc}
	if current != "" {
		q = `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`
		args = []any{loc, current, c.Identifier, ref.Namespace, ref.Name, current}
	}
	if c.postgres {
		q = dollarPlaceholders(q)
	}
	res, err := c.db.ExecContext(ctx, q, args...)
	if err != nil {
		return "", fmt.Errorf("register %s in catalog %s: %w", ref, c.Identifier, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return "", &ConflictError{Ref: ref, Err: errors.New("the table changed while it was registered; run again")}
	}
	return displayLocation(loc), nil
}

// dollarPlaceholders turns ? placeholders into PostgreSQL's $1, $2, ...
func dollarPlaceholders(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// readMetadata reads the table metadata at loc, naming the file when it cannot.
func readMetadata(ctx context.Context, c *Catalog, ref Ref, loc string) (*table.Table, error) {
	t, err := table.NewFromLocation(ctx, ref.ident(), loc, icebergio.LoadFSFunc(c.props, loc), c.cat)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", displayLocation(loc), err)
	}
	return t, nil
}

// UnreadableMetadataError is a table whose current metadata file cannot be read (truncated,
// corrupt, or gone), with the previous version the catalog recorded, when that one reads.
type UnreadableMetadataError struct {
	Ref      Ref
	File     string
	Previous string
	Err      error
}

func (e *UnreadableMetadataError) Error() string {
	msg := fmt.Sprintf("table %s: its current metadata file %s cannot be read (%v): it may be truncated or corrupt, and nothing was written", e.Ref, e.File, e.Err)
	if e.Previous != "" {
		return msg + fmt.Sprintf(". The previous version %s reads: to go back to it, run ldp catalog register SPEC --metadata %s", e.Previous, e.Previous)
	}
	return msg + ". No earlier version reads either: restore the file from a backup"
}

func (e *UnreadableMetadataError) Unwrap() error { return e.Err }

// unreadableMetadata explains a load that failed on the metadata file itself: which file, and
// which earlier version still reads. Nil when the file reads (the failure lies elsewhere).
func (c *Catalog) unreadableMetadata(ctx context.Context, ref Ref, loadErr error) error {
	loc, err := c.metadataLocation(ctx, ref)
	if err != nil || loc == "" {
		return nil
	}
	if _, err := readMetadata(ctx, c, ref, loc); err == nil {
		return nil
	}
	if !readable(ctx, c, loc) {
		return nil // the storage refused or failed (keys, network): not a corrupt file
	}
	e := &UnreadableMetadataError{Ref: ref, File: displayLocation(loc), Err: loadErr}
	var prev sql.NullString
	q := `SELECT previous_metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`
	if c.postgres {
		q = dollarPlaceholders(q)
	}
	candidates := []string{}
	if c.db.QueryRowContext(ctx, q, c.Identifier, ref.Namespace, ref.Name).Scan(&prev) == nil && prev.String != "" {
		candidates = append(candidates, prev.String)
	}
	if files, err := c.metadataFiles(ctx, ref); err == nil {
		for i := len(files) - 1; i >= 0; i-- {
			if files[i] != loc {
				candidates = append(candidates, files[i])
			}
		}
	}
	for _, p := range candidates {
		if _, err := readMetadata(ctx, c, ref, p); err == nil {
			e.Previous = displayLocation(p)
			break
		}
	}
	return e
}

// LostTable is an *OrphanedTableError when ref is not in its catalog (cat, nil when the
// catalog's database is not there) but a table's metadata, past its first version, lies under
// its location in the local warehouse folder; nil otherwise. It reads one folder and opens
// nothing, so planning can ask it of every table it finds empty.
func LostTable(vc *v1.Catalog, baseDir string, ref Ref, cat *Catalog) error {
	if vc == nil || vc.Type == v1.CatalogREST || IsRemote(vc.WarehousePath) {
		return nil
	}
	files, err := localMetadataFiles(filepath.Join(WarehouseDir(vc, baseDir), ref.Namespace+".db", ref.Name, "metadata"))
	if err != nil {
		return nil
	}
	lost := lostTableAt(files, ref, vc.Identifier)
	// The catalog is asked after the folder is read, as refuseOrphaned does: a table created
	// and committed to meanwhile is in the catalog by then.
	if lost != nil && cat != nil {
		if _, err := cat.Load(context.Background(), ref); err == nil {
			return nil
		}
	}
	return lost
}

// readable reports whether the bytes of the file at loc can be read from the table's storage,
// whatever they hold: a file that reads but does not parse is corrupt, one that does not read is
// a storage problem.
func readable(ctx context.Context, c *Catalog, loc string) bool {
	fsys, err := icebergio.LoadFS(ctx, c.props, loc)
	if err != nil {
		return false
	}
	f, err := fsys.Open(loc)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err == nil
}
