package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestSniffedSourceReadsAsTheSniffer: a file with dates in a layout of its own (day/month/year)
// and a semicolon dialect, read through what Sniff found of another file of the same layout,
// gives the rows and types Source gives it; a DOUBLE column is left to Read (not ok).
func TestSniffedSourceReadsAsTheSniffer(t *testing.T) {
	ctx, db := openDB(t)
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "c.csv")
	os.WriteFile(a, []byte("id;day;name\n1;31/01/2024;x\n2;29/02/2024;y\n"), 0o644)
	os.WriteFile(b, []byte("id;day;name\n3;15/03/2024;z\n4;01/04/2024;\n"), 0o644)
	os.WriteFile(c, []byte("id;v\n1;1.5\n"), 0o644)
	opts := &v1.ReadOptions{Delimiter: ";"}
	s, ok := Sniff(ctx, db, a, opts)
	if !ok {
		t.Fatal("Sniff found nothing")
	}
	if got := s.Cols[1]; got.Type != "DATE" {
		t.Errorf("day sniffed as %s, want DATE", got.Type)
	}
	src, err := Source(v1.FormatCSV, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	q := "SELECT string_agg(id || '|' || day || '|' || coalesce(name, 'NULL'), ',' ORDER BY id) FROM "
	var want, got string
	if err := db.QueryRow(ctx, q+src, &want); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, q+SniffedSource(b, s), &got); err != nil {
		t.Fatal(err)
	}
	if got != want || want != "3|2024-03-15|z,4|2024-04-01|NULL" {
		t.Errorf("read through the shared sniff %q, through Source %q", got, want)
	}
	if _, ok := Sniff(ctx, db, c, opts); ok {
		t.Error("a DOUBLE column was sniffed for sharing")
	}
}

// TestSniffAloneKeepsWhatReadKeeps: a file read alone is sniffed once, DOUBLE columns and all,
// and read through that sniff gives the rows and types Read gives it (quoted fields with the
// delimiter inside, empty values as NULL, dates in a layout of their own); a DOUBLE column of
// integers too large for BIGINT, which Read makes DECIMAL(38,0), and a column of zoned
// timestamps, which Read reads value by value, are left to Read (not ok).
func TestSniffAloneKeepsWhatReadKeeps(t *testing.T) {
	ctx, db := openDB(t)
	dir := t.TempDir()
	mixed, huge, zoned := filepath.Join(dir, "mixed.csv"), filepath.Join(dir, "huge.csv"), filepath.Join(dir, "zoned.csv")
	os.WriteFile(mixed, []byte("id,\"the, name\",fare,day\n1,\"Smith, J\",2.5,31/01/2024\n2,,,29/02/2024\n3,\"x\"\"y\",7,\n"), 0o644)
	os.WriteFile(huge, []byte("id,big\n1,12345678901234567890\n2,12345678901234567891\n"), 0o644)
	os.WriteFile(zoned, []byte("id,at\n1,2024-01-01 10:00:00+02\n2,2024-01-01 10:00:00Z\n"), 0o644)
	s, ok := SniffAlone(ctx, db, mixed, nil)
	if !ok {
		t.Fatal("SniffAlone left a file of a DOUBLE column of fractions to Read")
	}
	var types []string
	for _, c := range s.Cols {
		types = append(types, c.Name+" "+c.Type)
	}
	if got, want := strings.Join(types, ", "), "id BIGINT, the, name VARCHAR, fare DOUBLE, day DATE"; got != want {
		t.Errorf("sniffed %s, want %s", got, want)
	}
	cols, err := db.Columns(ctx, mustSource(t, mixed))
	if err != nil {
		t.Fatal(err)
	}
	read, err := Read(ctx, db, v1.FormatCSV, mixed, nil, cols, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	q := `SELECT string_agg(concat_ws('|', id, coalesce("the, name", 'NULL'), coalesce(CAST(fare AS VARCHAR), 'NULL'), coalesce(CAST(day AS VARCHAR), 'NULL')), ',' ORDER BY id) FROM `
	var want, got string
	if err := db.QueryRow(ctx, q+read, &want); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, q+SniffedSource(mixed, s), &got); err != nil {
		t.Fatal(err)
	}
	if got != want || want != `1|Smith, J|2.5|2024-01-31,2|NULL|NULL|2024-02-29,3|x"y|7.0|NULL` {
		t.Errorf("read through the sniff %q, through Read %q", got, want)
	}
	if _, ok := SniffAlone(ctx, db, huge, nil); ok {
		t.Error("a DOUBLE column of integers too large for BIGINT was not left to Read")
	}
	if _, ok := SniffAlone(ctx, db, zoned, nil); ok {
		t.Error("a column of zoned timestamps was not left to Read")
	}
}

func mustSource(t *testing.T, path string) string {
	t.Helper()
	src, err := Source(v1.FormatCSV, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}
