package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// TestOffsetsOneDayNoneTheNext: a daily Paris overwrite whose first drop has offsets (the
// column becomes timestamptz) and whose next has none. The values without an offset are read
// in Paris, not in DuckDB's UTC (day 2 was stored two hours off), and each overwrite finds its
// window's rows by the table's type: day 3's overwrite deleted day 2's 23:30, and day 3's redo
// from a drop without offsets left day 3's 01:00 in place beside its new copy.
func TestOffsetsOneDayNoneTheNext(t *testing.T) {
	dir := t.TempDir()
	p := spec(t, dir, `{"identifier": "events", "metadata": {
		"window": {"size": "day", "column": "ts", "timezone": "Europe/Paris"},
		"source": {"format": "CSV", "path": "drops/{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "events", "format": "ICEBERG", "write_mode": "overwrite", "catalog": {"identifier": "shop"}}}}`)
	paris, _ := time.LoadLocation("Europe/Paris")
	ctx := context.Background()
	drops := []struct{ day, body, key string }{
		{"2026-08-01", "id,ts\n1,2026-08-01 10:00:00+02:00\n2,2026-08-01 23:30:00+02:00\n", ""},
		{"2026-08-02", "id,ts\n3,2026-08-02 10:00:00\n4,2026-08-02 23:30:00\n", ""},
		{"2026-08-03", "id,ts\n5,2026-08-03 01:00:00+02:00\n6,2026-08-03 12:00:00+02:00\n", ""},
		{"2026-08-03", "id,ts\n5,2026-08-03 01:00:00\n6,2026-08-03 12:00:00\n", "events-2026-08-03-v2"},
	}
	for _, d := range drops {
		putFile(t, filepath.Join(dir, "drops", d.day+".csv"), d.body)
		if res, err := Run(ctx, p, Options{Window: day(t, d.day, paris), Key: d.key}); err != nil || res.RowsWritten != 2 {
			t.Fatalf("%s %s: %+v, %v", d.day, d.key, res, err)
		}
	}
	want := "1 2026-08-01 08:00:00+00|2 2026-08-01 21:30:00+00|3 2026-08-02 08:00:00+00|4 2026-08-02 21:30:00+00|5 2026-08-02 23:00:00+00|6 2026-08-03 10:00:00+00"
	if got := queryTable(t, p, "SELECT id, CAST(ts AS VARCHAR) FROM t ORDER BY id, ts", 0); got != want {
		t.Errorf("rows\n%s\nwant\n%s", got, want)
	}

	// The other way round: a column without a zone takes an instant as Paris's wall clock.
	dir = t.TempDir()
	q := spec(t, dir, `{"identifier": "naive", "metadata": {
		"window": {"size": "day", "column": "ts", "timezone": "Europe/Paris"},
		"source": {"format": "CSV", "path": "drops/{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "naive", "format": "ICEBERG", "write_mode": "overwrite", "catalog": {"identifier": "shop"}}}}`)
	putFile(t, filepath.Join(dir, "drops", "2026-08-01.csv"), "id,ts\n1,2026-08-01 10:00:00\n")
	putFile(t, filepath.Join(dir, "drops", "2026-08-02.csv"), "id,ts\n2,2026-08-02 08:00:00Z\n3,2026-08-02 21:30:00Z\n")
	for _, d := range []string{"2026-08-01", "2026-08-02"} {
		if _, err := Run(ctx, q, Options{Window: day(t, d, paris)}); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
	}
	if got := queryTable(t, q, "SELECT id, CAST(ts AS VARCHAR) FROM t ORDER BY id", 0); got != "1 2026-08-01 10:00:00|2 2026-08-02 10:00:00|3 2026-08-02 23:30:00" {
		t.Errorf("naive rows %s", got)
	}
}

// TestTableTypeNeverWinsSilently: a long column then a drop of 10.49 and 0.4 stored 10 and 0
// (and a range check with min 0.1 passed on the batch); an upsert keyed on a long zip replaced
// the row of 2134 with a batch's "02134". Each is refused now, naming the file, the line, the
// column, the value and both types, and nothing is written; a value that fits exactly (30.0)
// goes in.
func TestTableTypeNeverWinsSilently(t *testing.T) {
	dir := t.TempDir()
	p := spec(t, dir, `{"identifier": "amounts", "metadata": {
		"window": {"size": "day", "timezone": "Europe/Paris"},
		"source": {"format": "CSV", "path": "drops/amounts_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "amounts", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		"quality": [{"check": "range", "column": "amount", "min": 0.1}]}}`)
	paris, _ := time.LoadLocation("Europe/Paris")
	ctx := context.Background()
	putFile(t, filepath.Join(dir, "drops", "amounts_2026-08-01.csv"), "id,amount\n1,10\n2,20\n")
	putFile(t, filepath.Join(dir, "drops", "amounts_2026-08-02.csv"), "id,amount\n3,7\n4,10.49\n5,0.4\n")
	putFile(t, filepath.Join(dir, "drops", "amounts_2026-08-03.csv"), "id,amount\n6,30.0\n")
	if _, err := Run(ctx, p, Options{Window: day(t, "2026-08-01", paris)}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, p, Options{Window: day(t, "2026-08-02", paris)})
	var me *lake.MismatchError
	if !errors.As(err, &me) || res.Status != v1.PipelineFailed {
		t.Fatalf("day 2: %+v, %v; want a *lake.MismatchError", res, err)
	}
	wantMsg := `read drops/amounts_2026-08-02.csv:3: column "amount" holds "10.49" (DOUBLE), which column amount of table shop.amounts (long) cannot hold exactly: nothing was written, since ldp never rounds a value or reads text as a number. ` +
		`Give the column one type for every batch: cast it in metadata.transform.sql (or correct the source), or add a schema check {"check": "schema", "columns": {"amount": "long"}} to hold such a batch back as a data gate`
	if err.Error() != wantMsg {
		t.Errorf("day 2:\n%v\nwant\n%s", err, wantMsg)
	}
	if ldperr.ExitCode(err) != ldperr.ExitFailed || me.Retriable() {
		t.Errorf("day 2: exit %d, retriable %v; want 1, not retriable", ldperr.ExitCode(err), me.Retriable())
	}
	if _, err := Run(ctx, p, Options{Window: day(t, "2026-08-03", paris)}); err != nil {
		t.Fatalf("day 3 (30.0 fits a long): %v", err)
	}
	if got := queryTable(t, p, "SELECT list(id ORDER BY id), list(amount ORDER BY id) FROM t", 0); got != "[1 2 6] [10 20 30]" {
		t.Errorf("rows %s, want [1 2 6] [10 20 30]", got)
	}

	// Text never becomes a number: "02134" does not replace the row of 2134.
	dir = t.TempDir()
	z := spec(t, dir, `{"identifier": "zips", "metadata": {
		"source": {"format": "CSV", "path": "zips.csv"},
		"target": {"name": "zips", "format": "ICEBERG", "write_mode": "upsert", "join_cols": ["zip"], "catalog": {"identifier": "shop"}}}}`)
	putFile(t, filepath.Join(dir, "zips.csv"), "zip,city\n2134,Allston\n")
	if _, err := Run(ctx, z, Options{}); err != nil {
		t.Fatal(err)
	}
	putFile(t, filepath.Join(dir, "zips.csv"), "zip,city\n10001,New York\n02134,Boston\n")
	_, err = Run(ctx, z, Options{})
	if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), `read zips.csv:3: column "zip" holds "02134" (VARCHAR), which column zip of table shop.zips (long) cannot hold exactly`) {
		t.Errorf("zip upsert: %v", err)
	}
	if got := queryTable(t, z, "SELECT list(zip), list(city) FROM t", 0); got != "[2134] [Allston]" {
		t.Errorf("zips %s, want [2134] [Allston]", got)
	}
}

// TestHeaderCaseIsTheSameColumn: a drop whose header says "Amount" where the table has
// "amount" fills that column, as Spark and Trino resolve names; it added a second column, which
// queries showed as Amount_1.
func TestHeaderCaseIsTheSameColumn(t *testing.T) {
	dir := t.TempDir()
	p := spec(t, dir, `{"identifier": "amounts", "metadata": {
		"source": {"format": "CSV", "path": "amounts.csv"},
		"target": {"name": "amounts", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`)
	ctx := context.Background()
	for _, body := range []string{"id,amount\n1,10\n", "id,Amount\n2,20\n", "ID,AMOUNT,Note\n3,30,x\n"} {
		putFile(t, filepath.Join(dir, "amounts.csv"), body)
		if _, err := Run(ctx, p, Options{}); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
	}
	var names []string
	for _, f := range loadTable(t, p).Schema().Fields() {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "id,amount,Note" {
		t.Errorf("columns %v, want id,amount,Note", names)
	}
	if got := queryTable(t, p, "SELECT list(id ORDER BY id), list(amount ORDER BY id) FROM t", 0); got != "[1 2 3] [10 20 30]" {
		t.Errorf("rows %s", got)
	}
}
