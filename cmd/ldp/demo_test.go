package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// TestDemo runs ldp demo and checks each step's outcome from the tables and the ledger.
func TestDemo(t *testing.T) {
	// From a folder of its own, as a user runs it: the default workdir, relative.
	here := t.TempDir()
	t.Chdir(here)
	dir := filepath.Join(here, "ldp-demo")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"demo"}, &streams{Out: &out, Err: &out, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("ldp demo exited %d:\n%s", code, out.String())
	}
	// diff -> apply -> diff: one window would run, then nothing.
	for _, want := range []string{"$ ldp diff -f daily --from 2026-08-01 --to 2026-08-06\n", "     1 window would run\n", "$ ldp apply -f daily --from 2026-08-01 --to 2026-08-06\n", "     nothing to do: every window is done\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo does not show %q", want)
		}
	}
	// Each Explore line works on its own, pasted where the demo ran.
	_, explore, ok := strings.Cut(out.String(), "Explore what the demo built, from here:\n")
	lines := strings.Split(strings.TrimSpace(explore), "\n")
	if !ok || len(lines) < 5 {
		t.Fatalf("the demo ends with %d Explore lines:\n%s", len(lines), explore)
	}
	for _, l := range lines {
		l, _, _ = strings.Cut(l, "   #")
		words := shellWords(t, strings.TrimSpace(l))
		if words[1] == "ui" {
			continue // it serves until stopped: TestStatusPageInABrowser runs it
		}
		var o bytes.Buffer
		if code := run(context.Background(), words[1:], &streams{Out: &o, Err: &o, Getenv: os.Getenv}); code != 0 {
			t.Errorf("%s: exit %d\n%s", l, code, o.String())
		}
	}
	ctx := context.Background()
	cat, err := lake.Open(ctx, &v1.Catalog{Identifier: "demo", WarehousePath: "warehouse"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	// The daily specs keep their own warehouse: paths are relative to each spec's folder.
	daily, err := lake.Open(ctx, &v1.Catalog{Identifier: "demo", WarehousePath: "warehouse"}, filepath.Join(dir, "daily"))
	if err != nil {
		t.Fatal(err)
	}
	defer daily.Close()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := func(table, q string) string {
		t.Helper()
		c := cat
		if table == "orders" || table == "revenue" {
			c = daily
		}
		tbl, err := c.Load(ctx, lake.Ref{Namespace: "demo", Name: table})
		if err != nil {
			t.Fatal(err)
		}
		if err := lake.RegisterView(ctx, db, table, tbl, 0); err != nil {
			t.Fatal(err)
		}
		var s string
		if err := db.QueryRow(ctx, q, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	checks := map[string][2]string{
		"append twice doubles":           {"rides_raw", "SELECT count(*) || '/' || count(DISTINCT ride_id) FROM rides_raw"},
		"overwrite, then upsert":         {"rides", "SELECT count(*) || '/' || count(DISTINCT ride_id) || '/' || max(ride_id) FROM rides"},
		"the bad batch was held back":    {"rides_by_day", "SELECT count(*) || '/' || count(*) FILTER (WHERE fare < 0) FROM rides_by_day"},
		"five days of orders, each once": {"orders", "SELECT count(*) || '/' || count(DISTINCT order_id) || '/' || count(DISTINCT ordered_at::DATE) FROM orders"},
		"revenue for each day":           {"revenue", "SELECT count(*) || '/' || count(DISTINCT day) FROM revenue"},
	}
	want := map[string]string{
		"append twice doubles":           "2000/1000",
		"overwrite, then upsert":         "1100/1100/1100",
		"the bad batch was held back":    "1000/0",
		"five days of orders, each once": "10/10/5",
		"revenue for each day":           "5/5",
	}
	for name, c := range checks {
		if got := query(c[0], c[1]); got != want[name] {
			t.Errorf("%s: %s, want %s", name, got, want[name])
		}
	}
	tbl, _ := cat.Load(ctx, lake.Ref{Namespace: "demo", Name: "rides_by_day"})
	if n := len(lake.Snapshots(tbl)); n != 1 {
		t.Errorf("rides_by_day has %d snapshots, want 1: the bad batch must not have been written", n)
	}
	tasks, _ := tbl.Scan().PlanFiles(ctx)
	if len(tasks) != 2 {
		t.Errorf("rides_by_day has %d data files, want one per day", len(tasks))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "exports", "rides.csv")); err != nil || strings.Count(string(b), "\n") != 1001 {
		t.Errorf("the export has %d lines, %v", strings.Count(string(b), "\n"), err)
	}
	// The ledger: day 3 was blocked, then published; 4 August came from the tick.
	events, _, err := ledger.Read(filepath.Join(dir, "daily", ".ldp", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	last := controllers.LastRuns(events, "daily")
	var blocked int
	for _, e := range events {
		if e.Type == ledger.RunBlockedQuality {
			blocked++
		}
	}
	if blocked != 1 {
		t.Errorf("%d blocked runs in the ledger, want 1 (day 3 before the fix)", blocked)
	}
	for _, w := range []v1.WindowKey{"2026-08-03T00:00:00Z/2026-08-04T00:00:00Z", "2026-08-04T00:00:00Z/2026-08-05T00:00:00Z"} {
		if r := last[w]; !r.Finished || r.Tasks["orders"] != v1.Succeeded || r.Tasks["revenue"] != v1.Succeeded {
			t.Errorf("last run of %s: %+v", w, r)
		}
	}
	if r := last["2026-08-05T00:00:00Z/2026-08-06T00:00:00Z"]; r.Tasks["orders"] != v1.Succeeded {
		t.Errorf("ldp apply did not publish 5 August: %+v", r)
	}
	// A second demo replaces the first; a folder the demo did not make is refused.
	if code := run(context.Background(), []string{"demo", "--workdir", dir}, &streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: os.Getenv}); code != 0 {
		t.Errorf("a second demo in the same folder exited %d", code)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "mine.txt"), []byte("keep"), 0o644)
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--workdir", other}, &streams{Out: &bytes.Buffer{}, Err: &errb, Getenv: os.Getenv}); code != 1 || !strings.Contains(errb.String(), "was not made by ldp demo") {
		t.Errorf("demo in a foreign folder: exit %d %q", code, errb.String())
	}
}

// shellWords splits a command line the way sh would, for the quoting the demo prints.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case '"', '\'':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				t.Fatalf("unterminated quote in %s", line)
			}
			w.WriteString(line[i+1 : i+1+j])
			i, inWord = i+1+j, true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
