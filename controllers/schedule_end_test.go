package controllers

import (
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestScheduleEnd: metadata.end ends a schedule. Before it existed, a workflow whose data
// stopped in August had every day since due or missed (the demo's page counted 117 missing
// windows). No window ending after end is due, with catch-up or without, and the schedule has
// no next fire once the window that fire owns would end after it.
func TestScheduleEnd(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "wf.json", `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "wf",
		"metadata": {"schedule": "5 2 * * *", "window": {"size": "day"}, "catchup": true, "start": "2026-08-01", "end": "2026-08-04"},
		"tasks": [{"id": "orders", "pipeline": "orders.json"}]}`)
	put(t, dir, "orders.json", `{"identifier": "orders", "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`)
	wf, err := LoadWorkflow(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	day := func(d int) time.Time { return time.Date(2026, 8, d, 0, 0, 0, 0, time.UTC) }
	if !wf.End.Equal(day(4)) {
		t.Fatalf("end %s, want 4 August", wf.End)
	}
	for _, c := range []struct {
		catchup bool
		now     time.Time
		want    []string
		fire    bool
	}{
		{true, day(3).Add(3 * time.Hour), []string{"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", "2026-08-02T00:00:00Z/2026-08-03T00:00:00Z"}, true},
		{true, day(20), []string{"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z", "2026-08-02T00:00:00Z/2026-08-03T00:00:00Z", "2026-08-03T00:00:00Z/2026-08-04T00:00:00Z"}, false},
		{false, day(4).Add(3 * time.Hour), []string{"2026-08-03T00:00:00Z/2026-08-04T00:00:00Z"}, false},
		{false, day(20), nil, false},
	} {
		ws, err := DueWindows(Scheduled{WF: wf, Catchup: c.catchup, Start: wf.Start}, c.now)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range ws {
			got = append(got, w.String())
		}
		if len(got) != len(c.want) || (len(got) > 0 && got[len(got)-1] != c.want[len(c.want)-1]) {
			t.Errorf("catch-up %v at %s: due %v, want %v", c.catchup, c.now, got, c.want)
		}
		if _, ok := wf.NextFire(c.now); ok != c.fire {
			t.Errorf("at %s: a next fire %v, want %v", c.now, ok, c.fire)
		}
	}
	if wf.Expected(v1.LogicalWindow{Start: day(4), End: day(5)}) {
		t.Error("a window after end is expected")
	}
}
