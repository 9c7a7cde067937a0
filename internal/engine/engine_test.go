package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCastAndCount(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	csv := filepath.Join(t.TempDir(), "it's.csv")
	if err := os.WriteFile(csv, []byte("id,small,ts\n1,2,2026-09-01 10:00:00\n2,3,2026-09-02 10:00:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "read_csv(" + Lit(csv) + ", types = {'small': 'SMALLINT'})"
	cols, err := d.Columns(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	sel := IcebergSelect(cols)
	if !strings.Contains(sel, `CAST("small" AS INTEGER)`) {
		t.Errorf("select list %q does not widen SMALLINT", sel)
	}
	if err := d.Exec(ctx, "CREATE TEMP TABLE b AS SELECT "+sel+" FROM "+src); err != nil {
		t.Fatal(err)
	}
	n, err := d.Count(ctx, "b")
	if err != nil || n != 2 {
		t.Fatalf("count = %d, %v; want 2", n, err)
	}
	var tz string
	if err := d.QueryRow(ctx, "SELECT current_setting('TimeZone')", &tz); err != nil || tz != "UTC" {
		t.Errorf("TimeZone = %q, %v; want UTC", tz, err)
	}
	if Ident(`a"b`) != `"a""b"` || Lit("it's") != `'it''s'` {
		t.Error("quoting is wrong")
	}
}
