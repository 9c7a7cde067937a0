package controllers

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/window"
)

// TestScheduleParsedAtLoad: a loaded object holds its schedule parsed, and the schedule's
// readers (the due window, the next fire, status) use that parse: the cron string is read once,
// at load. An object built by hand still has its schedule read.
func TestScheduleParsedAtLoad(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "wf.json", `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "wf",
		"metadata": {"schedule": "5 2 * * *", "window": {"size": "day"}},
		"tasks": [{"id": "orders", "pipeline": "orders.json"}]}`)
	put(t, dir, "orders.json", `{"identifier": "orders", "when": "hourly", "metadata": {
		"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	now := time.Date(2026, 8, 3, 12, 0, 0, 0, time.UTC)
	for file, next := range map[string]time.Time{
		"wf.json":     time.Date(2026, 8, 4, 2, 5, 0, 0, time.UTC),
		"orders.json": time.Date(2026, 8, 3, 13, 0, 0, 0, time.UTC),
	} {
		wf, err := LoadWorkflow(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if wf.cron == nil || wf.cronErr != nil {
			t.Fatalf("%s: loaded without its schedule parsed (%v)", file, wf.cronErr)
		}
		// The loaded parse is what is read: a schedule string changed after load is not.
		wf.Schedule = "not a schedule"
		if got, ok := wf.NextFire(now); !ok || !got.Equal(next) {
			t.Errorf("%s: next fire %s %v, want %s", file, got, ok, next)
		}
	}
	hand := &Object{Schedule: "@hourly", Window: window.Spec{Location: time.UTC}}
	if got, ok := hand.NextFire(now); !ok || !got.Equal(time.Date(2026, 8, 3, 13, 0, 0, 0, time.UTC)) {
		t.Errorf("an object built by hand: next fire %s %v", got, ok)
	}
}
