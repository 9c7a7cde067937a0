package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/quality"
	"github.com/ldp-dev/ldp/internal/specs"
)

const ridesCSV = `ride_id,pickup_ts,city,fare
1,2026-09-01 10:00:00,NYC,12.5
2,2026-09-01 11:00:00,BKK,7.25
3,2026-09-02 09:00:00,NYC,3.5
`

// spec writes a pipeline spec and its data into a fresh folder and loads it.
func spec(t *testing.T, dir, body string) *v1.Pipeline {
	t.Helper()
	path := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := specs.ReadPipeline(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func putFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func icebergSpec(quality string) string {
	return `{"identifier": "rides", "metadata": {
		"source": {"format": "CSV", "path": "rides.csv"},
		"target": {"name": "rides", "format": "ICEBERG", "catalog": {"identifier": "lake"}, "write_mode": "append"},
		"quality": ` + quality + `}}`
}

// loadTable loads the target table of p.
func loadTable(t *testing.T, p *v1.Pipeline) *table.Table {
	t.Helper()
	ctx := context.Background()
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, lake.RefOf(p.Metadata.Target))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func snapshotCount(t *testing.T, p *v1.Pipeline) int { return len(lake.Snapshots(loadTable(t, p))) }

// TestEachFailingCheckBlocksTheBatch: for every kind of check, a failing batch is held back
// as a data gate (exit 3) and the table's snapshots stay as they were.
func TestEachFailingCheckBlocksTheBatch(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), ridesCSV)
	base := spec(t, dir, icebergSpec(`[]`))
	if _, err := Run(context.Background(), base, Options{}); err != nil {
		t.Fatal(err)
	}
	failing := map[string]string{
		"row_count":       `{"check": "row_count", "min": 10}`,
		"unique":          `{"check": "unique", "columns": ["city"]}`,
		"accepted_values": `{"check": "accepted_values", "column": "city", "values": ["NYC"]}`,
		"range":           `{"check": "range", "column": "fare", "max": 10}`,
		"freshness":       `{"check": "freshness", "column": "pickup_ts", "max_age_hours": 1}`,
		"schema":          `{"check": "schema", "columns": {"ride_id": "string"}}`,
	}
	now := func() time.Time { return time.Date(2026, 9, 3, 0, 0, 0, 0, time.UTC) }
	// A check on a column the batch lacks is the spec's mistake: exit 1, not a data gate.
	t.Run("missing column", func(t *testing.T) {
		p := spec(t, dir, icebergSpec(`[{"check": "not_null", "columns": ["missing_col"]}]`))
		_, err := Run(context.Background(), p, Options{Now: now})
		var ce *ldperr.ConfigError
		if !errors.As(err, &ce) || ldperr.ExitCode(err) != ldperr.ExitFailed || !strings.Contains(err.Error(), `names column "missing_col"`) {
			t.Fatalf("err = %v, want a ConfigError with exit 1", err)
		}
		if n := snapshotCount(t, p); n != 1 {
			t.Errorf("table has %d snapshots, want 1", n)
		}
	})
	for name, check := range failing {
		t.Run(name, func(t *testing.T) {
			p := spec(t, dir, icebergSpec(`[{"check": "row_count", "min": 1}, `+check+`]`))
			var log bytes.Buffer
			res, err := Run(context.Background(), p, Options{Now: now, Log: &log})
			var gate *quality.GateError
			if !errors.As(err, &gate) || ldperr.ExitCode(err) != ldperr.ExitDataGate {
				t.Fatalf("err = %v, want a data gate with exit 3", err)
			}
			if res.Status != v1.PipelineBlocked || res.RowsWritten != 0 || res.Quality == nil {
				t.Errorf("result %+v", res)
			}
			if !strings.Contains(log.String(), "check "+name) || !strings.Contains(log.String(), "FAILED") {
				t.Errorf("log %q does not report the failed check", log.String())
			}
			if n := snapshotCount(t, p); n != 1 {
				t.Errorf("table has %d snapshots after a blocked batch, want 1", n)
			}
		})
	}
}

func TestWarnLoadsAndReports(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), ridesCSV)
	p := spec(t, dir, icebergSpec(`{"on_failure": "warn", "checks": [{"check": "range", "column": "fare", "max": 10}]}`))
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != v1.PipelinePublished || res.RowsWritten != 3 || res.Quality.Passed() {
		t.Errorf("result %+v", res)
	}
}

func TestTransformSQLAndJSONSource(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.json"), `[{"ride_id": 1, "city": "NYC", "fare": 12.5}, {"ride_id": 2, "city": "BKK", "fare": 7.25}, {"ride_id": 3, "city": "NYC", "fare": 3.5}]`)
	p := spec(t, dir, `{"identifier": "by_city", "metadata": {
		"source": {"format": "JSON", "path": "rides.json"},
		"transform": {"sql": "SELECT city, count(*) AS rides, sum(fare) AS fare FROM source GROUP BY city;"},
		"target": {"name": "by_city", "format": "ICEBERG", "write_mode": "overwrite", "catalog": {"identifier": "lake"}},
		"quality": [{"check": "row_count", "equals": 2}, {"check": "unique", "columns": ["city"]}]}}`)
	res, err := Run(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RowsRead != 3 || res.RowsWritten != 2 {
		t.Errorf("rows read %d, written %d; want 3 and 2", res.RowsRead, res.RowsWritten)
	}
	got := queryTable(t, p, "SELECT city, rides, fare FROM t ORDER BY city", 0)
	if got != "BKK 1 7.25|NYC 2 16" {
		t.Errorf("table = %q", got)
	}
	// A transform that does not parse fails in the transform stage and writes nothing.
	bad := spec(t, dir, strings.Replace(mustRead(t, p.Path), "GROUP BY city", "GROUP BY nope", 1))
	_, err = Run(context.Background(), bad, Options{})
	var se *StageError
	if !errors.As(err, &se) || se.Stage != StageTransform || !strings.Contains(err.Error(), "metadata.transform.sql") {
		t.Errorf("err = %v, want a transform-stage error", err)
	}
}

func TestExportRoutesAndTimeTravel(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), ridesCSV)
	load := spec(t, dir, icebergSpec(`[]`))
	ctx := context.Background()
	first, err := Run(ctx, load, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, load, Options{}); err != nil { // append again: 6 rows
		t.Fatal(err)
	}
	if got := queryTable(t, load, "SELECT count(*) FROM t", first.Write.SnapshotID); got != "3" {
		t.Errorf("rows at the first snapshot = %s, want 3", got)
	}
	if got := queryTable(t, load, "SELECT count(*) FROM t", 0); got != "6" {
		t.Errorf("rows now = %s, want 6", got)
	}
	for _, format := range []string{"CSV", "PARQUET"} {
		out := "exports/rides." + strings.ToLower(format)
		exp := spec(t, dir, fmt.Sprintf(`{"identifier": "export", "metadata": {
			"source": {"name": "rides", "format": "ICEBERG", "catalog": {"identifier": "lake"}, "snapshot_id": %d},
			"target": {"name": "export", "format": %q, "path": %q}}}`, first.Write.SnapshotID, format, out))
		res, err := Run(ctx, exp, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.RowsWritten != 3 || res.Route != "ICEBERG -> "+format {
			t.Errorf("%s export: %+v", format, res)
		}
		if _, err := os.Stat(filepath.Join(dir, out)); err != nil {
			t.Errorf("export file: %v", err)
		}
	}
}

func TestUnknownRouteListsTheRoutes(t *testing.T) {
	p := &v1.Pipeline{Identifier: "x", Metadata: v1.PipelineMetadata{Source: v1.Source{Format: "ICEBERG"}, Target: v1.Target{Format: "ICEBERG"}}}
	_, err := RouteOf(p)
	var ce *ldperr.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "no pipeline for ICEBERG -> ICEBERG; the routes are: CSV -> CSV, CSV -> ICEBERG") {
		t.Errorf("err = %v", err)
	}
}

func queryTable(t *testing.T, p *v1.Pipeline, q string, snapshot int64) string {
	t.Helper()
	ctx := context.Background()
	tbl := loadTable(t, p)
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := lake.RegisterView(ctx, db, "t", tbl, snapshot); err != nil {
		t.Fatal(err)
	}
	_, rows, err := db.Rows(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vals := range rows {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, " "))
	}
	return strings.Join(out, "|")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTypesIcebergLacksAreCast: a Parquet source with nanosecond timestamps, zoned timestamps
// and small or unsigned integers loads, with each column cast to a type Iceberg has.
func TestTypesIcebergLacksAreCast(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "typed.parquet")
	err = db.Exec(ctx, "COPY (SELECT TIMESTAMP_NS '2026-09-01 10:00:00.123456789' AS ts_ns, TIMESTAMPTZ '2026-09-01 12:00:00+02' AS ts_tz, "+
		"7::TINYINT AS tiny, 9::UBIGINT AS big, 'x' AS s) TO "+engine.Lit(src)+" (FORMAT parquet)")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := spec(t, dir, `{"identifier": "typed", "metadata": {"source": {"format": "PARQUET", "path": "typed.parquet"},
		"target": {"name": "typed", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	if _, err := Run(ctx, p, Options{}); err != nil {
		t.Fatal(err)
	}
	tbl := loadTable(t, p)
	var types []string
	for _, f := range tbl.Schema().Fields() {
		types = append(types, f.Name+":"+f.Type.String())
	}
	want := "ts_ns:timestamp ts_tz:timestamptz tiny:int big:decimal(38, 0) s:string"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("schema %s, want %s", got, want)
	}
	if got := queryTable(t, p, "SELECT strftime(ts_ns, '%H:%M:%S.%f'), ts_tz = TIMESTAMPTZ '2026-09-01 10:00:00+00', tiny, big FROM t", 0); got != "10:00:00.123456 true 7 9" {
		t.Errorf("row = %q (nanoseconds truncate to microseconds; the zoned instant is kept)", got)
	}
}

// TestPartitionedAppendKeepsEachFileToOnePartition: a day-partitioned append (whose extract
// becomes the data files as they are) leaves one file per day, each holding only its day, and
// Iceberg's partition values say so; a later append of more days adds to it.
func TestPartitionedAppendKeepsEachFileToOnePartition(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "rides.csv"), "ride_id,pickup_ts,city\n1,2026-08-01 09:00:00,NYC\n2,2026-08-01 23:59:59,BKK\n3,2026-08-02 00:00:00,NYC\n4,2026-08-03 12:00:00,LIS\n")
	p := spec(t, dir, `{"identifier": "rides", "metadata": {
		"source": {"format": "CSV", "path": "rides.csv"},
		"target": {"name": "rides", "format": "ICEBERG", "catalog": {"identifier": "lake"},
		           "partition_by": [{"column": "pickup_ts", "transform": "day"}]}}}`)
	if _, err := Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl := loadTable(t, p)
	files, err := lake.DataFiles(ctx, tbl, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("%d data files for 3 days: %v", len(files), files)
	}
	db, err := engine.OpenPrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	days := map[string]bool{}
	for _, f := range files {
		var n int
		var day string
		if err := db.QueryRow(ctx, "SELECT count(DISTINCT CAST(pickup_ts AS DATE)), CAST(min(CAST(pickup_ts AS DATE)) AS VARCHAR) FROM read_parquet("+engine.Lit(strings.TrimPrefix(f, "file://"))+")", &n, &day); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("data file %s holds %d days", f, n)
		}
		days[day] = true
	}
	if len(days) != 3 {
		t.Errorf("days across files %v, want 3", days)
	}
	// The manifest's partition values are the days (what pruning reads).
	scan := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("pickup_ts"), "2026-08-02T00:00:00")))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Errorf("a filter on one day plans %d files, want 1", len(tasks))
	}
	if got := queryTable(t, p, "SELECT count(*) FROM t", 0); got != "4" {
		t.Errorf("rows %s, want 4", got)
	}
}
