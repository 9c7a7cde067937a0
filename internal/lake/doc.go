// Package lake holds the Iceberg side of ldp: catalogs (the SQL catalog on a SQLite file for a
// laptop), tables created on first write with properties that keep commits fast as history
// grows, writes in append, overwrite and upsert mode, snapshots, and the Parquet file lists
// that DuckDB reads a table through.
//
// Data files are written by DuckDB (COPY ... TO with PARTITION_BY on the derived partition
// value) and registered with iceberg-go's AddFiles, which reads partition values and column
// bounds from the files: measured at 1.0-1.4x DuckDB's bare COPY. Tables with a bucket
// transform, whose partition values cannot be read from column bounds, go through iceberg-go's
// own Arrow writer instead. Overwrite and upsert are copy-on-write: the data files that hold
// replaced rows are rewritten without them, and one ReplaceDataFiles snapshot swaps them.
package lake
