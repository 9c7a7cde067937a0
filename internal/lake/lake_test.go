package lake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

type fixture struct {
	ctx context.Context
	db  *engine.DB
	cat *Catalog
	ref Ref
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := Open(ctx, &v1.Catalog{Identifier: "lake", WarehousePath: "warehouse"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return &fixture{ctx: ctx, db: db, cat: cat, ref: Ref{Namespace: "lake", Name: "rides"}}
}

// batch replaces the temp table "batch" with rows given as SQL VALUES.
func (f *fixture) batch(t testing.TB, cols, values string) {
	t.Helper()
	if err := f.db.Exec(f.ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE batch AS SELECT * FROM (VALUES %s) AS t(%s)", values, cols)); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) write(t *testing.T, o WriteOptions) *v1.WriteResult {
	t.Helper()
	res, err := f.cat.Write(f.ctx, f.db, "batch", f.ref, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// query reads the table through DuckDB over the planned files.
func (f *fixture) query(t *testing.T, q string) []string {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterView(f.ctx, f.db, "rides", tbl, 0); err != nil {
		t.Fatal(err)
	}
	_, rows, err := f.db.Rows(f.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vals := range rows {
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out
}

const rideCols = "ride_id, city, fare"
const rideVals = "(1, 'NYC', 10.0), (2, 'BKK', 20.0), (3, 'LIS', 30.0)"

func TestAppendTwiceDoublesTheRows(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	r1 := f.write(t, WriteOptions{Mode: v1.WriteAppend})
	r2 := f.write(t, WriteOptions{Mode: v1.WriteAppend})
	if r1.RowsBefore != 0 || r1.RowsAfter != 3 || r2.RowsBefore != 3 || r2.RowsAfter != 6 || r2.RowsWritten != 3 {
		t.Errorf("results %+v %+v", r1, r2)
	}
	if got := f.query(t, "SELECT count(*), count(DISTINCT ride_id) FROM rides"); got[0] != "6|3" {
		t.Errorf("rows = %v, want 6 rows of 3 ids", got)
	}
}

func TestOverwriteTwiceKeepsOneCopy(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.write(t, WriteOptions{Mode: v1.WriteOverwrite})
	r := f.write(t, WriteOptions{Mode: v1.WriteOverwrite})
	if r.RowsBefore != 3 || r.RowsAfter != 3 {
		t.Errorf("result %+v", r)
	}
	f.batch(t, rideCols, "(9, 'NYC', 1.0)")
	f.write(t, WriteOptions{Mode: v1.WriteOverwrite})
	if got := f.query(t, "SELECT ride_id FROM rides"); strings.Join(got, ",") != "9" {
		t.Errorf("after overwrite rows = %v, want only ride 9", got)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	if n := len(Snapshots(tbl)); n != 3 {
		t.Errorf("%d snapshots, want one per write (3)", n)
	}
}

func TestUpsertKeepsOneRowPerKeyAndAddsColumns(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.write(t, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"ride_id"}})
	f.write(t, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"ride_id"}}) // the same batch again
	// Ride 2 changes, ride 4 is new, and a column appears.
	f.batch(t, "ride_id, city, fare, tip", "(2, 'BKK', 25.0, 3.5), (4, 'NYC', 40.0, 1.0)")
	r := f.write(t, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"ride_id"}})
	if r.RowsBefore != 3 || r.RowsAfter != 4 {
		t.Errorf("result %+v, want 3 rows before and 4 after", r)
	}
	got := f.query(t, "SELECT ride_id, fare, tip FROM rides ORDER BY ride_id")
	want := []string{"1|10|<nil>", "2|25|3.5", "3|30|<nil>", "4|40|1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows = %v, want %v", got, want)
	}
	// A batch that holds a key twice is refused.
	f.batch(t, rideCols, "(5, 'NYC', 1.0), (5, 'BKK', 2.0)")
	if _, err := f.cat.Write(f.ctx, f.db, "batch", f.ref, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"ride_id"}}); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Errorf("upsert of a batch with a repeated key: err = %v", err)
	}
}

func TestEmptyBatchWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.db.Exec(f.ctx, "DELETE FROM batch")
	_, err := f.cat.Write(f.ctx, f.db, "batch", f.ref, WriteOptions{Mode: v1.WriteAppend})
	if !errors.Is(err, ErrNoData) || err.Error() != "No data to write" {
		t.Fatalf("err = %v, want No data to write", err)
	}
	var nf *NotFoundError
	if _, err := f.cat.Load(f.ctx, f.ref); !errors.As(err, &nf) {
		t.Errorf("an empty batch created the table: %v", err)
	}
}

// TestPartitionTransforms writes a table for each transform and checks the partition value of
// every data file from the manifests, and the rows read back.
func TestPartitionTransforms(t *testing.T) {
	cols := "id, city, ts, d"
	vals := `(1, 'NYC', TIMESTAMP '2026-09-01 10:00:00', DATE '2026-09-01'),
	         (2, 'NYC', TIMESTAMP '2026-09-01 23:59:59', DATE '2026-09-01'),
	         (3, 'BKK', TIMESTAMP '2026-09-02 00:00:00', DATE '2026-10-02'),
	         (17, 'LISBON', TIMESTAMP '2027-01-05 08:30:00', DATE '2027-01-05')`
	cases := []struct {
		field v1.PartitionField
		want  []string // sorted partition values, as iceberg-go stores them
	}{
		{v1.PartitionField{Column: "city", Transform: "identity"}, []string{"BKK", "LISBON", "NYC"}},
		{v1.PartitionField{Column: "ts", Transform: "year"}, []string{"56", "57"}},          // years since 1970
		{v1.PartitionField{Column: "d", Transform: "month"}, []string{"680", "681", "684"}}, // months since 1970-01
		{v1.PartitionField{Column: "ts", Transform: "day"}, []string{"20697", "20698", "20823"}},
		{v1.PartitionField{Column: "ts", Transform: "hour"}, []string{"496738", "496751", "496752", "499760"}},
		{v1.PartitionField{Column: "city", Transform: "truncate[3]"}, []string{"BKK", "LIS", "NYC"}},
		{v1.PartitionField{Column: "id", Transform: "truncate[10]"}, []string{"0", "10"}},
		{v1.PartitionField{Column: "id", Transform: "bucket[4]"}, nil}, // checked below: 4 rows in valid buckets
	}
	for _, c := range cases {
		t.Run(c.field.Transform+"("+c.field.Column+")", func(t *testing.T) {
			f := newFixture(t)
			f.batch(t, cols, vals)
			f.write(t, WriteOptions{Mode: v1.WriteAppend, PartitionBy: []v1.PartitionField{c.field}})
			tbl, err := f.cat.Load(f.ctx, f.ref)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var rows int64
			for _, task := range tasks {
				for _, v := range task.File.Partition() {
					got = append(got, fmt.Sprint(v))
				}
				rows += task.File.Count()
			}
			sort.Strings(got)
			if rows != 4 {
				t.Errorf("data files hold %d rows, want 4", rows)
			}
			if c.want != nil && strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("partition values %v, want %v", got, c.want)
			}
			if c.want == nil {
				for _, v := range got {
					if v != "0" && v != "1" && v != "2" && v != "3" {
						t.Errorf("bucket value %s outside [0, 4)", v)
					}
				}
			}
			if got := f.query(t, "SELECT sum(id), count(*) FROM rides"); got[0] != "23|4" {
				t.Errorf("read back %v, want sum 23 over 4 rows", got)
			}
			// Overwrite and upsert work on every layout too.
			f.batch(t, cols, "(3, 'BKK', TIMESTAMP '2026-09-02 00:00:00', DATE '2026-10-02')")
			f.write(t, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"id"}})
			if got := f.query(t, "SELECT count(*), count(DISTINCT id) FROM rides"); got[0] != "4|4" {
				t.Errorf("after upsert %v, want 4 rows of 4 ids", got)
			}
		})
	}
}

func TestUnknownPartitionColumnIsAConfigError(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	_, err := f.cat.Write(f.ctx, f.db, "batch", f.ref, WriteOptions{PartitionBy: []v1.PartitionField{{Column: "pickup", Transform: "day"}}})
	if err == nil || !strings.Contains(err.Error(), `column "pickup" is not in the data`) {
		t.Errorf("err = %v", err)
	}
	_, err = f.cat.Write(f.ctx, f.db, "batch", f.ref, WriteOptions{PartitionBy: []v1.PartitionField{{Column: "city", Transform: "day"}}})
	if err == nil || !strings.Contains(err.Error(), "cannot apply to column") {
		t.Errorf("err = %v", err)
	}
}

// TestTwoReadPathsAgree reads a table written by every mode through iceberg-go's own scan and
// through DuckDB over the planned files.
func TestTwoReadPathsAgree(t *testing.T) {
	f := newFixture(t)
	f.batch(t, "id, ts, city", "(1, TIMESTAMP '2026-09-01 10:00:00', 'NYC'), (2, TIMESTAMP '2026-09-02 10:00:00', 'BKK')")
	f.write(t, WriteOptions{Mode: v1.WriteAppend, PartitionBy: []v1.PartitionField{{Column: "ts", Transform: "day"}}})
	f.batch(t, "id, ts, city, fare", "(2, TIMESTAMP '2026-09-02 11:00:00', 'LIS', 5.5), (3, TIMESTAMP '2026-09-03 10:00:00', 'NYC', 7.25)")
	f.write(t, WriteOptions{Mode: v1.WriteUpsert, JoinCols: []string{"id"}})
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	at, err := tbl.Scan(icebergSelect("id", "city", "fare")...).ToArrowTable(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var fromIceberg []string
	tr := arrowRows(t, at)
	fromIceberg = append(fromIceberg, tr...)
	sort.Strings(fromIceberg)
	fromDuck := f.query(t, "SELECT id, city, fare FROM rides ORDER BY 1, 2")
	sort.Strings(fromDuck)
	if strings.Join(fromIceberg, " ") != strings.Join(fromDuck, " ") || len(fromDuck) != 3 {
		t.Errorf("iceberg-go reads %v, DuckDB reads %v", fromIceberg, fromDuck)
	}
	_ = iceberg.AlwaysTrue{}
}

// newFixtureOn opens a second catalog handle and DuckDB on the same warehouse: another writer.
func newFixtureOn(t *testing.T, f *fixture) *fixture {
	t.Helper()
	db, err := engine.Open(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := Open(f.ctx, &v1.Catalog{Identifier: f.cat.Identifier, WarehousePath: f.cat.Warehouse}, "/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return &fixture{ctx: f.ctx, db: db, cat: cat, ref: f.ref}
}

// TestManyOpenANewCatalogAtOnce: processes that open a catalog that does not exist yet, all at
// once, all get it (SQLite may refuse a new file's WAL switch with SQLITE_BUSY at once).
func TestManyOpenANewCatalogAtOnce(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			<-start
			cat, err := Open(context.Background(), &v1.Catalog{Identifier: "shared"}, dir)
			if err == nil {
				err = cat.ensureNamespace(context.Background(), "ns")
				cat.Close()
			}
			errs <- err
		}()
	}
	close(start)
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Errorf("open: %v", err)
		}
	}
}

// TestPrewrittenFileBecomesTheDataFile: an append whose rows are already a Parquet file with
// the table's columns adds that file by a link; one whose file does not match is written.
func TestPrewrittenFileBecomesTheDataFile(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	dir := t.TempDir()
	staged := filepath.Join(dir, "extract.parquet")
	if err := f.db.Exec(f.ctx, "COPY batch TO "+engine.Lit(staged)+" (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	f.write(t, WriteOptions{Mode: v1.WriteAppend, Prewritten: staged})
	// A file with other columns than the batch's is not taken for it.
	odd := filepath.Join(dir, "odd.parquet")
	if err := f.db.Exec(f.ctx, "COPY (SELECT 1 AS other) TO "+engine.Lit(odd)+" (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	f.write(t, WriteOptions{Mode: v1.WriteAppend, Prewritten: odd})
	if got := f.query(t, "SELECT count(*), sum(ride_id) FROM rides"); got[0] != "6|12" {
		t.Errorf("rows %v, want 6|12", got)
	}
	files, err := DataFiles(f.ctx, mustLoad(t, f), 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(staged)
	linked := 0
	for _, df := range files {
		if fi, err := os.Stat(localPath(df)); err == nil && os.SameFile(fi, st) {
			linked++
		}
	}
	if len(files) != 2 || linked != 1 {
		t.Errorf("%d data files, %d of them the prewritten file; want 2 and 1", len(files), linked)
	}
}

func mustLoad(t *testing.T, f *fixture) *table.Table {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestStagingDirClearsWhatKilledRunsLeft: a scratch folder a day old (a killed run's) is
// removed when a run makes its own, at most once a minute in one process (a backfill makes
// folders for every window); a fresh one (a live run's) is kept.
func TestStagingDirClearsWhatKilledRunsLeft(t *testing.T) {
	now := time.Now()
	scratchNow = func() time.Time { return now }
	t.Cleanup(func() { scratchNow = time.Now })
	base := t.TempDir()
	c := &v1.Catalog{Identifier: "lake"}
	old, err := StagingDir(c, base)
	if err != nil {
		t.Fatal(err)
	}
	live, err := StagingDir(c, base)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Now().Add(-25 * time.Hour)
	os.Chtimes(old, day, day)
	now = now.Add(clearEvery - time.Second)
	if _, err := StagingDir(c, base); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the warehouse was scanned again within %s of the last scan: %v", clearEvery, err)
	}
	now = now.Add(time.Second)
	if _, err := StagingDir(c, base); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a day-old scratch folder survived: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live run's scratch folder was removed: %v", err)
	}
}

// TestPrewrittenInALiveScratchFolderMakesNoOther: an append of a file staged in a live run's
// scratch folder of the warehouse (a backfill window's) makes no scratch folder of its own,
// since that folder's owner record already keeps maintenance off its files; an append of a
// file staged elsewhere still makes one.
func TestPrewrittenInALiveScratchFolderMakesNoOther(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	made := func() int {
		mine.mu.Lock()
		defer mine.mu.Unlock()
		return len(mine.dirs)
	}
	stage := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "extract.parquet")
		if err := f.db.Exec(f.ctx, "COPY batch TO "+engine.Lit(p)+" (FORMAT parquet)"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	live, err := newScratch(f.cat.Warehouse)
	if err != nil {
		t.Fatal(err)
	}
	inLive := stage(live)
	before := made()
	f.write(t, WriteOptions{Mode: v1.WriteAppend, Prewritten: inLive})
	if n := made() - before; n != 0 {
		t.Errorf("the append of a file in a live scratch folder made %d scratch folders, want 0", n)
	}
	before = made()
	f.write(t, WriteOptions{Mode: v1.WriteAppend, Prewritten: stage(t.TempDir())})
	if n := made() - before; n != 1 {
		t.Errorf("the append of a file staged outside the warehouse made %d scratch folders, want 1", n)
	}
	if got := f.query(t, "SELECT count(*), sum(ride_id) FROM rides"); got[0] != "6|12" {
		t.Errorf("rows %v, want 6|12", got)
	}
	if runs := ScratchRuns(f.cat.Warehouse); len(runs) != 1 || runs[0].Dir != live {
		t.Errorf("scratch folders left: %v, want only %s", runs, live)
	}
	// Each linked file sits in data/ itself: a folder for one file is a new inode a window.
	ents, err := os.ReadDir(filepath.Join(localPath(mustLoad(t, f).Location()), "data"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), "-part-0.parquet") {
			names = append(names, e.Name())
		}
	}
	if len(ents) != 2 || len(names) != 0 {
		t.Errorf("data/ holds %d entries, want the 2 linked files as <uuid>-part-0.parquet; others: %v", len(ents), names)
	}
}
