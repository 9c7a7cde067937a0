package formats

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

func TestSourcesAndAtomicWrite(t *testing.T) {
	ctx, db := openDB(t)
	dir := t.TempDir()
	files := map[string]string{
		"a.csv":    "id,city\n1,NYC\n2,BKK\n",
		"a.json":   `[{"id": 1, "city": "NYC"}, {"id": 2, "city": "BKK"}]`,
		"a.ndjson": "{\"id\": 1, \"city\": \"NYC\"}\n{\"id\": 2, \"city\": \"BKK\"}\n",
		"bad.csv":  "id,city\n1,NYC\n2,BKK,extra,columns\n3,LIS\n",
		"tiny.csv": "id,city\n1,NYC\n2,BKK,x\n",
		"big.csv":  bigCSV(),
	}
	for n, body := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		format v1.Format
		file   string
	}{{v1.FormatCSV, "a.csv"}, {v1.FormatJSON, "a.json"}, {v1.FormatJSON, "a.ndjson"}} {
		src, err := Source(c.format, filepath.Join(dir, c.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := db.Count(ctx, src)
		if err != nil || n != 2 {
			t.Errorf("%s: count = %d, %v; want 2", c.file, n, err)
		}
	}
	out := filepath.Join(dir, "out", "a.parquet")
	src, _ := Source(v1.FormatCSV, filepath.Join(dir, "a.csv"), nil)
	n, err := WriteFile(ctx, db, "SELECT * FROM "+src, v1.FormatParquet, out)
	if err != nil || n != 2 {
		t.Fatalf("WriteFile = %d, %v", n, err)
	}
	back, _ := Source(v1.FormatParquet, out, nil)
	if n, err := db.Count(ctx, back); err != nil || n != 2 {
		t.Errorf("read back %d, %v", n, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "out", ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}

	_, err = Source(v1.FormatCSV, filepath.Join(dir, "missing.csv"), nil)
	var missing *SourceMissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "missing.csv does not exist") {
		t.Errorf("missing source error = %v", err)
	}

	bad, _ := Source(v1.FormatCSV, filepath.Join(dir, "bad.csv"), nil)
	_, err = db.Count(ctx, bad)
	if err == nil {
		t.Fatal("a malformed CSV row was read without error")
	}
	err = ReadError(v1.FormatCSV, filepath.Join(dir, "bad.csv"), nil, err)
	if !strings.Contains(err.Error(), "bad.csv:3: malformed CSV row") || strings.Contains(err.Error(), "extra,columns") {
		t.Errorf("malformed CSV error = %q; want the file and line, without the row", err)
	}
	// A ragged last row of a tiny file must not become the header.
	tiny, _ := Source(v1.FormatCSV, filepath.Join(dir, "tiny.csv"), nil)
	if _, err = db.Count(ctx, tiny); err == nil {
		t.Fatal("a tiny CSV with a ragged row was read without error")
	}
	if err = ReadError(v1.FormatCSV, filepath.Join(dir, "tiny.csv"), nil, err); !strings.Contains(err.Error(), "tiny.csv:3: malformed CSV row") {
		t.Errorf("tiny malformed CSV error = %q", err)
	}
	// In a large file the bad row lies past the sniffer's sample and DuckDB names the line.
	big, _ := Source(v1.FormatCSV, filepath.Join(dir, "big.csv"), nil)
	_, err = db.Count(ctx, big)
	if err == nil {
		t.Fatal("a malformed CSV row deep in a large file was read without error")
	}
	err = ReadError(v1.FormatCSV, filepath.Join(dir, "big.csv"), nil, err)
	if !strings.Contains(err.Error(), "big.csv:30002: malformed CSV row") || strings.Contains(err.Error(), "BKK,extra") {
		t.Errorf("malformed CSV error = %q; want the file and line, without the row", err)
	}
}

func bigCSV() string {
	var b strings.Builder
	b.WriteString("id,city\n")
	for i := 1; i <= 40000; i++ {
		if i == 30001 {
			b.WriteString("30001,BKK,extra\n")
			continue
		}
		fmt.Fprintf(&b, "%d,NYC\n", i)
	}
	return b.String()
}

// openDB opens an embedded DuckDB database for a test, closed when the test ends.
func openDB(t *testing.T) (context.Context, *engine.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return ctx, db
}
