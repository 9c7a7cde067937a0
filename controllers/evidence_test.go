package controllers

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEvidence: a held window is released by a change to its source file or to its spec's
// meaning, not by one to another window's file nor by re-spacing the spec.
func TestEvidence(t *testing.T) {
	dir := t.TempDir()
	spec := func(maxAttempts string) string {
		return `{"identifier": "orders", "metadata": {"schedule": "@daily", "window": {"size": "day"}, "retries": {"max_attempts": ` + maxAttempts + `},
			"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
			"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`
	}
	load := func() *Object {
		t.Helper()
		wf, err := LoadWorkflow(filepath.Join(dir, "orders.json"))
		if err != nil {
			t.Fatal(err)
		}
		return wf
	}
	put(t, dir, "orders.json", spec("1"))
	before := load().Evidence(aug1)
	if before == "" {
		t.Fatal("no evidence")
	}
	put(t, dir, "drops/orders_2026-08-02.csv", "id\n1\n")
	put(t, dir, "orders.json", "\n\n"+spec("1")+"\n")
	if got := load().Evidence(aug1); got != before {
		t.Error("another window's file or re-spacing the spec changed the evidence")
	}
	put(t, dir, "drops/orders_2026-08-01.csv", "id\n1\n")
	landed := load().Evidence(aug1)
	if landed == before {
		t.Error("the window's source file landing left the evidence as it was")
	}
	put(t, dir, "drops/orders_2026-08-01.csv", "id\n2\n")
	os.Chtimes(filepath.Join(dir, "drops/orders_2026-08-01.csv"), time.Now(), time.Now().Add(time.Hour))
	if got := load().Evidence(aug1); got == landed {
		t.Error("rewriting the window's source file left the evidence as it was")
	}
	put(t, dir, "orders.json", spec("3"))
	if got := load().Evidence(aug1); got == before || got == landed {
		t.Error("raising max_attempts left the evidence as it was")
	}
}
