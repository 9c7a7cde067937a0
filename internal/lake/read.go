package lake

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/ldp-dev/ldp/internal/engine"
)

// SnapshotInfo is one snapshot of a table, as ldp snapshots lists it.
type SnapshotInfo struct {
	ID          int64             `json:"snapshot_id,string"`
	ParentID    *int64            `json:"parent_id,string"`
	TimestampMs int64             `json:"timestamp_ms"`
	Operation   string            `json:"operation"`
	Summary     map[string]string `json:"summary"`
}

// Snapshots lists a table's snapshots, oldest first.
func Snapshots(tbl *table.Table) []SnapshotInfo {
	var out []SnapshotInfo
	for _, s := range tbl.Metadata().Snapshots() {
		info := SnapshotInfo{ID: s.SnapshotID, ParentID: s.ParentSnapshotID, TimestampMs: s.TimestampMs, Summary: map[string]string{}}
		if s.Summary != nil {
			info.Operation = string(s.Summary.Operation)
			for k, v := range s.Summary.Properties {
				info.Summary[k] = v
			}
		}
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimestampMs < out[j].TimestampMs })
	return out
}

// DataFiles lists the data files of a snapshot (0 is the current one) as local paths; those
// of an object store are downloaded to its mirror first.
func DataFiles(ctx context.Context, tbl *table.Table, snapshotID int64) ([]string, error) {
	var opts []table.ScanOption
	if snapshotID != 0 {
		if tbl.SnapshotByID(snapshotID) == nil {
			return nil, fmt.Errorf("table %s has no snapshot %d (ldp snapshots lists them)", strings.Join(tbl.Identifier(), "."), snapshotID)
		}
		opts = append(opts, table.WithSnapshotID(snapshotID))
	} else if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan the files of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	locs := make([]string, len(tasks))
	for i, t := range tasks {
		locs[i] = t.File.FilePath()
	}
	sort.Strings(locs)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the storage of %s: %w", strings.Join(tbl.Identifier(), "."), err)
	}
	return fetch(fsys, locs)
}

// schemaAt is the schema a snapshot was written with (the current one for 0).
func schemaAt(tbl *table.Table, snapshotID int64) *iceberg.Schema {
	if snapshotID != 0 {
		if s := tbl.SnapshotByID(snapshotID); s != nil && s.SchemaID != nil {
			if sc, ok := tbl.Schemas()[*s.SchemaID]; ok {
				return sc
			}
		}
	}
	return tbl.Schema()
}

// RegisterView makes a snapshot of tbl (0 for the current one) readable in db as view: the
// Parquet files iceberg-go plans, read by DuckDB, with the table's columns in order (a column
// no file has yet reads as null). It is correct after overwrites, upserts and schema changes,
// because the planned files are exactly the live ones.
func RegisterView(ctx context.Context, db *engine.DB, view string, tbl *table.Table, snapshotID int64) error {
	v, err := PlanView(ctx, tbl, snapshotID)
	if err != nil {
		return err
	}
	return v.Register(ctx, db, view)
}

// ViewSQL is the SELECT RegisterView makes a view of, for a caller that keeps the view in a
// database file (the one a dbt project reads).
func ViewSQL(ctx context.Context, db *engine.DB, tbl *table.Table, snapshotID int64) (string, error) {
	v, err := PlanView(ctx, tbl, snapshotID)
	if err != nil {
		return "", err
	}
	return v.SQL(ctx, db)
}

// PlannedView is what RegisterView reads of the table before it asks DuckDB anything: the
// snapshot's data files and the schema they were written with. Planning needs no database, so
// ldp query plans while its DuckDB starts.
type PlannedView struct {
	tbl    *table.Table
	files  []string
	schema *iceberg.Schema
}

// PlanView plans a snapshot of tbl (0 for the current one) for RegisterView.
func PlanView(ctx context.Context, tbl *table.Table, snapshotID int64) (*PlannedView, error) {
	files, err := DataFiles(ctx, tbl, snapshotID)
	if err != nil {
		return nil, err
	}
	return &PlannedView{tbl: tbl, files: files, schema: schemaAt(tbl, snapshotID)}, nil
}

// Register makes the planned snapshot readable in db as view.
func (v *PlannedView) Register(ctx context.Context, db *engine.DB, view string) error {
	q, err := v.SQL(ctx, db)
	if err != nil {
		return err
	}
	return db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP VIEW %s AS %s", engine.Ident(view), q))
}

// SQL is the SELECT of the planned snapshot's rows in the table's columns.
func (v *PlannedView) SQL(ctx context.Context, db *engine.DB) (string, error) {
	files, sc := v.files, v.schema
	present := map[string]bool{}
	src := "(SELECT 1 WHERE false)"
	if len(files) > 0 {
		src = fmt.Sprintf("read_parquet(%s, union_by_name = true, hive_partitioning = false)", engine.LitList(files))
		cols, err := db.Columns(ctx, src)
		if err != nil {
			return "", err
		}
		for _, c := range cols {
			present[c.Name] = true
		}
	}
	var parts []string
	for _, f := range sc.Fields() {
		dt := duckType(f.Type)
		switch {
		case present[f.Name] && dt != "":
			parts = append(parts, fmt.Sprintf("CAST(%s AS %s) AS %s", engine.Ident(f.Name), dt, engine.Ident(f.Name)))
		case present[f.Name]:
			parts = append(parts, engine.Ident(f.Name))
		case dt != "":
			parts = append(parts, fmt.Sprintf("CAST(NULL AS %s) AS %s", dt, engine.Ident(f.Name)))
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("table %s has no column DuckDB can read", strings.Join(v.tbl.Identifier(), "."))
	}
	return fmt.Sprintf("SELECT %s FROM %s", strings.Join(parts, ", "), src), nil
}

func jsonMapping(sc *iceberg.Schema) (string, error) {
	b, err := json.Marshal(sc.NameMapping())
	return string(b), err
}
