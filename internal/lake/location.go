package lake

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
)

// MetadataLocation is where the catalog points r now, read from the catalog's own table (one
// indexed row) without loading the metadata: "" when the table is not there, or when the
// catalog cannot say without sending the whole metadata (a REST catalog).
func (c *Catalog) MetadataLocation(ctx context.Context, r Ref) (string, error) {
	loc, err := c.metadataLocation(ctx, r)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return loc, err
}

// LocalFile is the file on this machine at loc, a location a catalog gave, or nil when it is
// not there or not local (an object store).
func LocalFile(loc string) fs.FileInfo {
	if IsRemote(loc) {
		return nil
	}
	fi, err := os.Stat(localPath(loc))
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return fi
}
