package engine

import "github.com/duckdb/duckdb-go/v2/mapping"

// Version is the version of the DuckDB library linked in, what SELECT version() says, asked of
// the library itself: starting a database to ask was most of ldp version's time.
func Version() string { return mapping.LibraryVersion() }
