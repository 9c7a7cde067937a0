package engine

import (
	"context"
	"errors"
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

// TestAClosedDatabaseIsReusedEmpty: Close hands the database to the next Open of the process
// without what the last run left in it.
func TestAClosedDatabaseIsReusedEmpty(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TEMP TABLE source AS SELECT 1 AS id",
		"CREATE TEMP VIEW ldp_batch AS SELECT * FROM source",
		"SET VARIABLE window_start = TIMESTAMPTZ '2026-01-01 00:00:00+00'",
		"ATTACH ':memory:' AS other",
	} {
		if err := d.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	e, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e != d {
		t.Error("Open started a new database while one was idle")
	}
	var n int64
	if err := e.QueryRow(ctx, `SELECT (SELECT count(*) FROM duckdb_tables() WHERE temporary)
		+ (SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal)
		+ (SELECT count(*) FROM duckdb_variables())
		+ (SELECT count(*) FROM duckdb_databases() WHERE database_name = 'other')`, &n); err != nil || n != 0 {
		t.Errorf("the reused database holds %d objects of the last run (%v)", n, err)
	}
	if err := e.Exec(ctx, "CREATE TEMP TABLE source AS SELECT 2 AS id"); err != nil {
		t.Errorf("the next run cannot make its own source: %v", err)
	}
}

// TestSpillsUnderAMemoryLimit: a sort larger than the memory limit spills to the database's
// private folder, which DuckDB makes when it first needs it.
func TestSpillsUnderAMemoryLimit(t *testing.T) {
	ctx := context.Background()
	d, err := OpenPrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Exec(ctx, "SET memory_limit = '64MB'"); err != nil {
		t.Fatal(err)
	}
	if err := d.Exec(ctx, "SET preserve_insertion_order = false"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := d.QueryRow(ctx, "SELECT count(*) FROM (SELECT i, md5(i::VARCHAR) AS h FROM range(3000000) t(i) ORDER BY h)", &n); err != nil || n != 3000000 {
		t.Fatalf("sorted %d rows: %v", n, err)
	}
	if _, err := os.Stat(d.tmpDir); err != nil {
		t.Errorf("no spill folder: %v", err)
	}
	d.Close()
	if _, err := os.Stat(d.tmpDir); !os.IsNotExist(err) {
		t.Errorf("the spill folder outlived the database: %v", err)
	}
}

// TestBoundedSetsAndRestoresTheLimit: inside Bounded the limit is what the database holds
// plus the budget, an aggregate larger than it still completes (it spills), and after it the
// default limit is back, for the next user of the pooled database.
func TestBoundedSetsAndRestoresTheLimit(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var before, inside, after string
	d.QueryRow(ctx, "SELECT current_setting('memory_limit')", &before)
	var groups int64
	err = d.Bounded(ctx, 64<<20, func() error {
		if err := d.QueryRow(ctx, "SELECT current_setting('memory_limit')", &inside); err != nil {
			return err
		}
		return d.QueryRow(ctx, "SELECT count(*) FROM (SELECT i, count(*) FROM range(5000000) t(i) GROUP BY i)", &groups)
	})
	if err != nil || groups != 5000000 {
		t.Fatalf("aggregate under the bound: %d groups, %v", groups, err)
	}
	d.QueryRow(ctx, "SELECT current_setting('memory_limit')", &after)
	if inside == before || !strings.Contains(inside, "MiB") {
		t.Errorf("limit inside Bounded = %q (default %q): the budget was not applied", inside, before)
	}
	if after != before {
		t.Errorf("limit after Bounded = %q, want the default %q back", after, before)
	}
}

// TestRememberedUntilAStatement: Columns and Count answer from memory until a statement runs
// that may change the relation, and what they return is the caller's to change.
func TestRememberedUntilAStatement(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Exec(ctx, "CREATE TEMP TABLE r AS SELECT 1 AS a"); err != nil {
		t.Fatal(err)
	}
	cols, _ := d.Columns(ctx, "r")
	cols[0].Name = "changed by the caller"
	if again, _ := d.Columns(ctx, "r"); len(again) != 1 || again[0].Name != "a" {
		t.Errorf("columns after a caller changed its copy: %v", again)
	}
	if n, _ := d.Count(ctx, "r"); n != 1 {
		t.Errorf("count %d, want 1", n)
	}
	if err := d.Exec(ctx, "INSERT INTO r VALUES (2)"); err != nil {
		t.Fatal(err)
	}
	if n, _ := d.Count(ctx, "r"); n != 2 {
		t.Errorf("count after an insert %d, want 2: an Exec must forget it", n)
	}
	if _, err := d.ExecCount(ctx, "ALTER TABLE r ADD COLUMN b INTEGER"); err != nil {
		t.Fatal(err)
	}
	if cols, _ := d.Columns(ctx, "r"); len(cols) != 2 {
		t.Errorf("columns after ALTER TABLE: %v, want a and b", cols)
	}
	if _, _, err := d.Rows(ctx, "CREATE OR REPLACE TEMP TABLE r AS SELECT 1 AS c"); err != nil {
		t.Fatal(err)
	}
	if cols, _ := d.Columns(ctx, "r"); len(cols) != 1 || cols[0].Name != "c" {
		t.Errorf("columns after a user's statement: %v, want c", cols)
	}
}

// TestPublicMasksValues: DuckDB's conversion errors quote the value; their public message
// (what events carry) does not.
func TestPublicMasksValues(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := t.TempDir()
	csv := filepath.Join(dir, "people.csv")
	os.WriteFile(csv, []byte("id,ssn\n1,123456789\n2,123-45-6789\n"), 0o644)
	for _, q := range []string{
		"SELECT CAST('123-45-6789' AS BIGINT)",
		"SELECT * FROM read_csv(" + Lit(csv) + ", columns = {'id': 'BIGINT', 'ssn': 'BIGINT'})",
		"SELECT error('column \"ssn\" is not an integer" + ValueFollows + "' || '123-45-6789')",
	} {
		err := db.Exec(ctx, q)
		var ee *Error
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v, want an engine error", q, err)
		}
		if !strings.Contains(ee.Error(), "123-45-6789") {
			t.Fatalf("%s: DuckDB's message %q does not quote the value: the test tests nothing", q, ee.Error())
		}
		if pub := ee.Public(); strings.Contains(pub, "123-45-6789") || pub == "" {
			t.Errorf("%s: Public() = %q", q, pub)
		}
	}
}
