package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/lake"
)

// rerunGoal is issue 27's bound on a re-run of a done window, whatever its age: the process
// finds the key and exits, so it should cost about a start-up and one index read.
const rerunGoal = 0.5

// rerun measures `ldp run --window` of windows the backfill in dir already published: the
// newest (its snapshot on main), the first (its snapshot expired by publishing, as the default
// retention does past 500 snapshots), and the first again after ldp maintain. Each re-run must
// say it was skipped as a duplicate and the table must keep its rows once, or the figure would
// time something else than finding a done window, so either is an error.
func (c *config) rerun(b *backfillResult) ([]row, error) {
	dir, spec := b.Dir, "events.json"
	first := b.window(0)
	newest := b.window(b.Windows - 1)
	want := int64(b.Windows * b.Rows)
	if err := rowsAre(c.ldp, dir, want); err != nil {
		return nil, err
	}
	// A run too small for the default retention to reach its first window (a quick one) lowers
	// the table's retention, as a user would, and publishes one more window so that it expires.
	lowered := ""
	if on, err := onMain(c.ldp, dir, first); err != nil {
		return nil, err
	} else if on {
		keep := max(b.Windows/4, 2)
		if err := setRetention(filepath.Join(dir, spec), keep, b.Windows); err != nil {
			return nil, err
		}
		next := b.window(b.Windows)
		if err := b.writeDrop(b.Windows); err != nil {
			return nil, err
		}
		if _, err := run(dir, c.ldp, "run", spec, "--window", next); err != nil {
			return nil, err
		}
		want += int64(b.Rows)
		if on, err := onMain(c.ldp, dir, first); err != nil {
			return nil, err
		} else if on {
			return nil, fmt.Errorf("window %s: its snapshot is still on main with %s=%d", first, lake.MaxSnapshotsProp, keep)
		}
		lowered = fmt.Sprintf(" (this small run: %s=%d)", lake.MaxSnapshotsProp, keep)
	}
	reps := max(c.reps, 5)
	ref, _, err := repeat(reps, func(int) (string, string, []string, error) {
		return dir, c.ldp, []string{"validate", spec}, nil
	})
	if err != nil {
		return nil, err
	}
	onHead, err := skipTime(c.ldp, dir, newest, reps)
	if err != nil {
		return nil, err
	}
	expired, err := skipTime(c.ldp, dir, first, reps)
	if err != nil {
		return nil, err
	}
	// Maintenance as the samples' tidy task runs it, orphans of any age: nothing else writes.
	m, err := run(dir, c.ldp, "maintain", spec, "--expire", fmt.Sprint(lake.DefaultHorizonDays), "--orphans", "--orphan-age-hours", "0", "--force", "--apply")
	if err != nil {
		return nil, err
	}
	if lines := strings.SplitN(m.Out, "\n", 4); len(lines) >= 3 {
		logf("   ldp maintain: %s; %s", strings.TrimSpace(lines[1]), strings.TrimSpace(lines[2]))
	}
	maintained, err := skipTime(c.ldp, dir, first, reps)
	if err != nil {
		return nil, err
	}
	if err := rowsAre(c.ldp, dir, want); err != nil {
		return nil, err
	}
	part, refName := "3. Publish as history grows", "ldp validate of the spec (start-up and reading it)"
	figure := func(what string) string {
		return fmt.Sprintf("%d hourly windows: ldp run --window of %s, skipped as a duplicate, rows once%s", b.Windows, what, lowered)
	}
	return []row{
		{Part: part, Figure: figure("the newest (its snapshot on main)"), Value: onHead.Seconds(), Unit: "s", Ref: ref.Seconds(), RefName: refName, Goal: rerunGoal, AtMost: true},
		{Part: part, Figure: figure("the first (its snapshot expired by publishing)"), Value: expired.Seconds(), Unit: "s", Ref: ref.Seconds(), RefName: refName, Goal: rerunGoal, AtMost: true},
		{Part: part, Figure: figure("the first, after ldp maintain --orphans --apply"), Value: maintained.Seconds(), Unit: "s", Ref: ref.Seconds(), RefName: refName, Goal: rerunGoal, AtMost: true},
	}, nil
}

// skipTime is the median wall time of reps runs of window, each a process of its own, each
// checked to have been skipped as a duplicate.
func skipTime(ldp, dir, window string, reps int) (time.Duration, error) {
	var walls []time.Duration
	for i := 0; i < reps; i++ {
		m, err := run(dir, ldp, "run", "events.json", "--window", window)
		if err != nil {
			return 0, err
		}
		if !strings.Contains(m.Out, ": skipped_duplicate\n") {
			return 0, fmt.Errorf("ldp run --window %s was not skipped as a duplicate:\n%s", window, m.Out)
		}
		walls = append(walls, m.Wall)
	}
	return median(walls), nil
}

// rowsAre checks the table in dir holds want rows (a re-run that published again doubles a
// window's).
func rowsAre(ldp, dir string, want int64) error {
	m, err := run(dir, ldp, "query", "events.json", "SELECT count(*) AS n FROM events", "-o", "csv")
	if err != nil {
		return err
	}
	lines := strings.Fields(m.Out)
	if len(lines) == 0 {
		return fmt.Errorf("ldp query printed nothing")
	}
	got, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return fmt.Errorf("ldp query: %w\n%s", err, m.Out)
	}
	if got != want {
		return fmt.Errorf("the table holds %d rows, want %d: a window was published twice or lost", got, want)
	}
	return nil
}

// onMain reports whether a snapshot of the table in dir published window (ldp snapshots).
func onMain(ldp, dir, window string) (bool, error) {
	m, err := run(dir, ldp, "snapshots", "events.json", "-o", "json")
	if err != nil {
		return false, err
	}
	var snaps []struct {
		Summary map[string]string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(m.Out), &snaps); err != nil {
		return false, fmt.Errorf("ldp snapshots -o json: %w", err)
	}
	for _, s := range snaps {
		if s.Summary[lake.WindowProp] == window {
			return true, nil
		}
	}
	return false, nil
}

// setRetention sets the table's retention properties through its catalog, as any Iceberg
// client could.
func setRetention(spec string, keep, slab int) error {
	ctx := context.Background()
	p, err := controllers.LoadPipeline(spec)
	if err != nil {
		return err
	}
	cat, err := lake.Open(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return err
	}
	defer cat.Close()
	return cat.SetTableProperties(ctx, lake.RefOf(p.Metadata.Target), map[string]string{
		lake.MaxSnapshotsProp: fmt.Sprint(keep), lake.ExpireSlabProp: fmt.Sprint(slab)})
}

// writeDrop writes the drop file of window w of the backfill.
func (b *backfillResult) writeDrop(w int) error {
	t := b.Start.Add(time.Duration(w) * b.Step)
	var s strings.Builder
	s.WriteString("id,ts,amount\n")
	for r := 0; r < b.Rows; r++ {
		fmt.Fprintf(&s, "%d,%s,%d\n", w*b.Rows+r, t.Add(time.Duration(r)*b.Step/time.Duration(b.Rows)).Format("2006-01-02 15:04:05"), r)
	}
	return os.WriteFile(filepath.Join(b.Dir, "drops", t.Format(b.layout)+".csv"), []byte(s.String()), 0o644)
}

// window is window w of the backfill as ldp run --window takes it and snapshots record it.
func (b *backfillResult) window(w int) string {
	t := b.Start.Add(time.Duration(w) * b.Step)
	return t.Format(time.RFC3339) + "/" + t.Add(b.Step).Format(time.RFC3339)
}
