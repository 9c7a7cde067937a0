package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ldp-dev/ldp/internal/engine"
)

// TestVersionStartsNoDatabase: ldp version names DuckDB's version as the library gives it;
// starting a database to ask was most of the command's time. Opening one runs statements
// (its settings), so none may run. Not parallel: no other test of the process runs meanwhile.
func TestVersionStartsNoDatabase(t *testing.T) {
	var out bytes.Buffer
	before := engine.Statements()
	if code := run(context.Background(), []string{"version"}, &streams{Out: &out, Err: &out, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("ldp version: exit %d\n%s", code, out.String())
	}
	if n := engine.Statements() - before; n != 0 {
		t.Errorf("ldp version ran %d DuckDB statements, want none", n)
	}
	if want := "duckdb     " + engine.Version() + "\n"; !strings.Contains(out.String(), want) {
		t.Errorf("ldp version printed\n%s\nwithout the line %q", out.String(), want)
	}
}
