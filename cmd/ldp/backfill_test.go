package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBackfillResumesAfterAKill: a 30-window backfill is killed (SIGKILL) part-way; the second
// run finishes the rest, and each key is on main exactly once with every row there once.
func TestBackfillResumesAfterAKill(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	var b strings.Builder
	b.WriteString("id,ts\n")
	for d := 0; d < 30; d++ {
		for h := 0; h < 3; h++ {
			fmt.Fprintf(&b, "%d,2026-06-%02d %02d:00:00\n", d*10+h, d+1, 6*h+1)
		}
	}
	l.write(t, "events.csv", b.String())
	l.write(t, "events.json", `{"identifier": "events", "metadata": {"window": {"size": "day", "column": "ts"},
		"source": {"format": "CSV", "path": "events.csv"},
		"target": {"name": "events", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	c := l.cmd(nil, "backfill", "events.json", "--from", "2026-06-01", "--to", "2026-07-01")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ledgerFile := filepath.Join(l.dir, ".ldp", "events.jsonl")
	deadline := time.Now().Add(120 * time.Second)
	for {
		raw, _ := os.ReadFile(ledgerFile)
		if strings.Count(string(raw), `"type":"run.published"`) >= 5 {
			break
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("the backfill did not publish 5 windows in time:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Kill()
	c.Wait()
	code, stdout, errs := l.run(t, nil, "backfill", "events.json", "--from", "2026-06-01", "--to", "2026-07-01", "--json")
	if code != 0 {
		t.Fatalf("second backfill: exit %d\n%s", code, errs)
	}
	var res struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Counts["done"] < 5 || res.Counts["done"]+res.Counts["published"]+res.Counts["skipped"] != 30 {
		t.Errorf("second run counts %v: the killed run's windows must be done, the rest published", res.Counts)
	}
	commits, keys := l.commits(t, nil, "events.json")
	if len(commits) != 30 || len(keys) != 30 {
		t.Errorf("%d publishes of %d keys on main, want 30 of 30", len(commits), len(keys))
	}
	_, stdout, _ = l.run(t, nil, "query", "events.json", "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM events", "-o", "csv")
	if stdout != "n,ids\n90,90\n" {
		t.Errorf("rows %q, want 90 rows of 90 ids", stdout)
	}
}
