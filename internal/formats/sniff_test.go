package formats

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// TestSniffedSourceReadsAsTheSniffer: a file with dates in a layout of its own (day/month/year)
// and a semicolon dialect, read through what Sniff found of another file of the same layout,
// gives the rows and types Source gives it; a DOUBLE column is left to Read (not ok).
func TestSniffedSourceReadsAsTheSniffer(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
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
