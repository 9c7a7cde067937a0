package lake

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
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

// NewestMetadata is the newest metadata.json under ref's location in the warehouse, "" when
// there is none (or the catalog's server lays tables out itself).
func (c *Catalog) NewestMetadata(ctx context.Context, ref Ref) (string, error) {
	loc := c.tableLocation(ref)
	if loc == "" {
		return "", nil
	}
	dir := loc + "/metadata"
	var names []string
	if IsRemote(dir) {
		fsys, err := icebergio.LoadFS(ctx, c.props, dir)
		if err != nil {
			return "", err
		}
		lister, ok := fsys.(icebergio.ListableIO)
		if !ok {
			return "", nil
		}
		lister.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".metadata.json") {
				names = append(names, p)
			}
			return nil
		})
	} else {
		ents, err := os.ReadDir(localPath(dir))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		} else if err != nil {
			return "", err
		}
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".metadata.json") {
				names = append(names, dir+"/"+e.Name())
			}
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	// Files are <version>-<uuid>.metadata.json: the highest version is the newest commit.
	sort.Slice(names, func(i, j int) bool { return metadataVersion(names[i]) < metadataVersion(names[j]) })
	return names[len(names)-1], nil
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
// metadata already lies.
func (c *Catalog) refuseOrphaned(ctx context.Context, ref Ref) error {
	loc, err := c.NewestMetadata(ctx, ref)
	if err != nil || loc == "" {
		return err
	}
	// Version 0 is a table as created, with nothing in it: another process creating the table
	// writes it before its catalog row, so it is no sign of a lost catalog.
	if metadataVersion(loc) < 1 {
		return nil
	}
	return &OrphanedTableError{Ref: ref, Catalog: c.Identifier, Metadata: displayLocation(loc)}
}

// displayLocation is a location as a person reads it: a local file as a path.
func displayLocation(loc string) string {
	if IsRemote(loc) {
		return loc
	}
	return filepath.Clean(localPath(loc))
}

// Register puts ref back in the catalog at the newest metadata.json found under its location
// in the warehouse, and returns that file. A table the catalog already knows is left alone.
func (c *Catalog) Register(ctx context.Context, ref Ref) (string, error) {
	if _, err := c.Load(ctx, ref); err == nil {
		return "", fmt.Errorf("table %s is already in catalog %s: there is nothing to register", ref, c.Identifier)
	} else if _, nf := err.(*NotFoundError); !nf {
		return "", err
	}
	loc, err := c.NewestMetadata(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("look for the metadata of %s: %w", ref, err)
	}
	if loc == "" {
		if where := c.tableLocation(ref); where != "" {
			return "", fmt.Errorf("no metadata.json under %s/metadata: there is no table %s to register", displayLocation(where), ref)
		}
		return "", fmt.Errorf("catalog %s lays its tables out itself: register %s with its server", c.Identifier, ref)
	}
	// The file must be a table's metadata before the catalog points at it.
	if _, err := table.NewFromLocation(ctx, ref.ident(), loc, icebergio.LoadFSFunc(c.props, loc), c.cat); err != nil {
		return "", fmt.Errorf("read %s: %w; an earlier metadata.json in the same folder may be whole", displayLocation(loc), err)
	}
	if err := c.ensureNamespace(ctx, ref.Namespace); err != nil {
		return "", err
	}
	q := `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location) VALUES (?, ?, ?, 'TABLE', ?)`
	if c.postgres {
		q = `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, iceberg_type, metadata_location) VALUES ($1, $2, $3, 'TABLE', $4)`
	}
	if _, err := c.db.ExecContext(ctx, q, c.Identifier, ref.Namespace, ref.Name, loc); err != nil {
		return "", fmt.Errorf("register %s in catalog %s: %w", ref, c.Identifier, err)
	}
	return displayLocation(loc), nil
}
