package lake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// TableProperties are set on every table ldp creates. Manifest merging and metadata cleanup
// keep a commit's cost from growing with history (measured: 430 ms per commit at 1,000
// snapshots without them).
var TableProperties = iceberg.Properties{
	"format-version":                             "2",
	"commit.manifest-merge.enabled":              "true",
	"write.metadata.delete-after-commit.enabled": "true",
	"write.metadata.previous-versions-max":       "10",
	"write.parquet.compression-codec":            "snappy",
	"write.parquet.row-group-limit":              "65536",
	"write.delete.mode":                          "copy-on-write",
	"write.update.mode":                          "copy-on-write",
}

// batchSchema is the Iceberg schema of the rows of relation, read from a Parquet file DuckDB
// writes with no rows: exactly the types AddFiles will compare the data files with. The
// schema follows from the relation's DuckDB columns alone, so it is probed once per column
// list in a process (a backfill's windows share one; the probe was a COPY and a file a window).
func batchSchema(ctx context.Context, db *engine.DB, relation string, tmp *scratchDir) (*iceberg.Schema, error) {
	cols, err := db.Columns(ctx, relation)
	if err != nil {
		return nil, fmt.Errorf("read the batch's schema: %w", err)
	}
	var key strings.Builder
	for _, c := range cols {
		fmt.Fprintf(&key, "%q %s\n", c.Name, c.Type)
	}
	if sc, ok := probed.get(key.String()); ok {
		return sc, nil
	}
	tmpDir, err := tmp.path()
	if err != nil {
		return nil, err
	}
	sc, err := probeSchema(ctx, db, relation, tmpDir)
	if err != nil {
		return nil, err
	}
	probed.put(key.String(), sc)
	return sc, nil
}

// probed holds the schemas batchSchema probed, by column list.
var probed = &recent[*iceberg.Schema]{size: 64}

func probeSchema(ctx context.Context, db *engine.DB, relation, tmpDir string) (*iceberg.Schema, error) {
	probe := filepath.Join(tmpDir, "schema-probe.parquet")
	defer os.Remove(probe)
	if err := db.Exec(ctx, fmt.Sprintf("COPY (SELECT * FROM %s LIMIT 0) TO %s (FORMAT parquet)", relation, engine.Lit(probe))); err != nil {
		return nil, fmt.Errorf("read the batch's schema: %w", err)
	}
	f, err := file.OpenParquetFile(probe, false)
	if err != nil {
		return nil, fmt.Errorf("read the batch's schema: %w", err)
	}
	defer f.Close()
	as, err := pqarrow.FromParquet(f.MetaData().Schema, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read the batch's schema: %w", err)
	}
	return table.ArrowSchemaToIcebergWithFreshIDs(as, true)
}

var transformArg = regexp.MustCompile(`^(bucket|truncate)\[(\d+)\]$`)

// partitionSpec builds the spec of partition_by against a schema; an unknown column or
// transform is a config error naming it.
func partitionSpec(sc *iceberg.Schema, fields []v1.PartitionField) (iceberg.PartitionSpec, error) {
	if len(fields) == 0 {
		return *iceberg.UnpartitionedSpec, nil
	}
	var pfs []iceberg.PartitionField
	for i, f := range fields {
		src, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return iceberg.PartitionSpec{}, ldperr.Configf("", "partition_by[%d]: column %q is not in the data (columns: %s)", i, f.Column, strings.Join(fieldNames(sc), ", "))
		}
		tr, err := iceberg.ParseTransform(f.Transform)
		if err != nil {
			return iceberg.PartitionSpec{}, ldperr.Configf("", "partition_by[%d]: unknown transform %q: use identity, year, month, day, hour, bucket[N] or truncate[W]", i, f.Transform)
		}
		if !tr.CanTransform(src.Type) {
			return iceberg.PartitionSpec{}, ldperr.Configf("", "partition_by[%d]: transform %s cannot apply to column %q of type %s", i, f.Transform, f.Column, src.Type)
		}
		// Refused before the table is created: a table with such a field is never writable.
		name := f.FieldName()
		if !v1.ValidPartitionName(name) {
			return iceberg.PartitionSpec{}, ldperr.Configf("", "partition_by[%d]: %s", i, v1.PartitionNameHint(f))
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{src.ID}, FieldID: 1000 + i, Name: name, Transform: tr})
	}
	return iceberg.NewPartitionSpec(pfs...), nil
}

func fieldNames(sc *iceberg.Schema) []string {
	var out []string
	for _, f := range sc.Fields() {
		out = append(out, f.Name)
	}
	return out
}

// partitionExpr is a DuckDB expression whose value groups a row into the same partition as
// the Iceberg transform does ("" when DuckDB cannot compute it: bucket). It only names the
// folder DuckDB writes a partition's file into (iceberg-go reads the partition value itself
// from the file's column bounds), so it is spelled with characters that need no escaping in a
// path: DuckDB %-escapes the rest and iceberg-go would unescape them. Under the session's UTC
// time zone, a date cut agrees with Iceberg's day() for timestamps with and without a zone.
func partitionExpr(col string, typ iceberg.Type, tr iceberg.Transform) string {
	c := engine.Ident(col)
	safe := func(e string) string { // a hex digest for text of any characters
		return "coalesce(md5(CAST(" + e + " AS VARCHAR)), 'null')"
	}
	numeric := func(e string) string { return "coalesce(CAST(" + e + " AS VARCHAR), 'null')" }
	stamp := func(format string) string {
		return "coalesce(strftime(" + c + ", '" + format + "'), 'null')"
	}
	switch t := tr.(type) {
	case iceberg.IdentityTransform:
		switch typ.String() {
		case "int", "long":
			return numeric(c)
		case "date":
			return stamp("%Y-%m-%d")
		}
		return safe(c)
	case iceberg.YearTransform:
		return stamp("%Y")
	case iceberg.MonthTransform:
		return stamp("%Y-%m")
	case iceberg.DayTransform:
		return stamp("%Y-%m-%d")
	case iceberg.HourTransform:
		return stamp("%Y-%m-%d-%H")
	case iceberg.TruncateTransform:
		w := strconv.Itoa(t.Width)
		switch typ.String() {
		case "string":
			return safe("left(" + c + ", " + w + ")")
		case "int", "long":
			return numeric(fmt.Sprintf("(%s - (((%s %% %s) + %s) %% %s))", c, c, w, w, w))
		}
	}
	return ""
}

// duckType is the DuckDB type of an Iceberg primitive type ("" for nested types).
func duckType(t iceberg.Type) string {
	s := t.String()
	switch s {
	case "boolean":
		return "BOOLEAN"
	case "int":
		return "INTEGER"
	case "long":
		return "BIGINT"
	case "float":
		return "FLOAT"
	case "double":
		return "DOUBLE"
	case "date":
		return "DATE"
	case "time":
		return "TIME"
	case "timestamp", "timestamp_ns":
		return "TIMESTAMP"
	case "timestamptz", "timestamptz_ns":
		return "TIMESTAMPTZ"
	case "string":
		return "VARCHAR"
	case "uuid":
		return "UUID"
	case "binary":
		return "BLOB"
	}
	if strings.HasPrefix(s, "decimal") {
		return strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	}
	if strings.HasPrefix(s, "fixed") {
		return "BLOB"
	}
	return ""
}

// icebergTypeOf is the Iceberg type DuckDB type t is written as, for the types a partition
// expression depends on; nil for the others.
func icebergTypeOf(t string) iceberg.Type {
	switch strings.ToUpper(t) {
	case "INTEGER":
		return iceberg.PrimitiveTypes.Int32
	case "BIGINT":
		return iceberg.PrimitiveTypes.Int64
	case "DATE":
		return iceberg.PrimitiveTypes.Date
	case "TIMESTAMP":
		return iceberg.PrimitiveTypes.Timestamp
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ":
		return iceberg.PrimitiveTypes.TimestampTz
	case "VARCHAR":
		return iceberg.PrimitiveTypes.String
	}
	return nil
}

// PartitionExprs are the DuckDB expressions that split rows of the given columns (DuckDB names
// and types, as they will be written) into the partitions of pby, as the write of a table
// partitioned by pby would split them; ok is false when DuckDB cannot compute one (bucket).
func PartitionExprs(cols []engine.Column, pby []v1.PartitionField) (exprs []string, ok bool) {
	for _, f := range pby {
		var typ iceberg.Type
		for _, c := range cols {
			if c.Name == f.Column {
				typ = icebergTypeOf(c.Type)
			}
		}
		tr, err := iceberg.ParseTransform(f.Transform)
		if typ == nil || err != nil || !tr.PreservesOrder() || !tr.CanTransform(typ) {
			return nil, false
		}
		e := partitionExpr(f.Column, typ, tr)
		if e == "" {
			return nil, false
		}
		exprs = append(exprs, e)
	}
	return exprs, true
}

// ColumnType is the DuckDB type of the table's column name, whatever its case ("" when there
// is none), for the predicates written over the table's rows.
func ColumnType(tbl *table.Table, name string) string {
	f, ok := fieldFor(tbl.Schema(), name)
	if !ok {
		return ""
	}
	switch f.Type.(type) {
	case iceberg.TimestampTzType:
		return "TIMESTAMP WITH TIME ZONE"
	case iceberg.TimestampType:
		return "TIMESTAMP"
	case iceberg.DateType:
		return "DATE"
	}
	return strings.ToUpper(f.Type.String())
}
