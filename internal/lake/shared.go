package lake

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver: iceberg-go ships no PostgreSQL driver

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/redact"
)

func init() { providers[v1.CatalogSQL] = openShared }

// openShared opens a catalog of type sql: iceberg-go's SQL catalog in the PostgreSQL (or
// SQLite) database at c.URI, which ldp processes on several machines can share. The file lock
// of the local catalog does not reach other machines, so concurrent writers are kept apart by
// the exactly-once protocol alone: a commit that lost the race fails its requirement and is
// staged again on the new main.
func openShared(ctx context.Context, c *v1.Catalog, baseDir string) (*Catalog, error) {
	if c.URI == "" {
		return nil, ldperr.Configf("", "catalog %s of type sql needs uri: postgres://USER@HOST:PORT/DB or a SQLite file", c.Identifier)
	}
	wh, err := makeWarehouse(c, baseDir)
	if err != nil {
		return nil, err
	}
	dialect, pg := sqlcat.SQLite, false
	open := sqlOpener("sqlite", "file:"+strings.TrimPrefix(c.URI, "file:")+"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if v1.IsPostgresURI(c.URI) {
		dialect, pg = sqlcat.Postgres, true
		if open, err = pgOpener(c.URI); err != nil {
			return nil, ldperr.Configf("", "catalog %s: uri %s: %s", c.Identifier, redact.String(c.URI), redact.String(err.Error()))
		}
	}
	// Several processes creating the catalog's tables at once can collide in the database's
	// own catalog (seen: duplicate key in pg_type); a server that cannot be reached, refuses
	// us or does not answer will not change its mind.
	retry := func(err error) bool {
		msg := err.Error()
		return !strings.Contains(msg, "connect") && !strings.Contains(msg, "authentication") && !strings.Contains(msg, "timeout")
	}
	props := iceberg.Properties{}
	maps.Copy(props, c.Properties)
	if IsRemote(wh) {
		props = S3Properties(c.Properties)
	}
	props["warehouse"] = warehouseLocation(wh)
	cat, err := openSQL(ctx, Catalog{Identifier: c.Identifier, Warehouse: wh, props: props, postgres: pg, shared: true}, open, dialect, retry)
	if err != nil {
		if pg {
			err = stallHint(err)
		}
		return nil, fmt.Errorf("open catalog %s at %s: %s", c.Identifier, redact.String(c.URI), redact.String(err.Error()))
	}
	return cat, nil
}
