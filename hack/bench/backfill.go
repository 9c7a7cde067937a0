package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ldp-dev/ldp/controllers"
)

// backfillResult is a daily backfill of small windows through ldp's runner, end to end.
type backfillResult struct {
	Windows   int
	PerSecond float64
	// First and Last are the median time per window of the first and the last 50 windows.
	First, Last time.Duration
}

// runBackfill backfills n daily windows of rows rows each (one drop file a day) into a new
// table, batch windows to a commit (0: ldp's default).
func runBackfill(dir string, n, rows, batch int, progress func(done, total int)) (*backfillResult, error) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(filepath.Join(dir, "drops"), 0o755); err != nil {
		return nil, err
	}
	for d := 0; d < n; d++ {
		day := start.AddDate(0, 0, d)
		var b strings.Builder
		b.WriteString("id,ts,amount\n")
		for r := 0; r < rows; r++ {
			fmt.Fprintf(&b, "%d,%s,%d\n", d*rows+r, day.Add(time.Duration(r)*time.Hour).Format("2006-01-02 15:04:05"), r)
		}
		if err := os.WriteFile(filepath.Join(dir, "drops", day.Format("2006-01-02")+".csv"), []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
	}
	spec := filepath.Join(dir, "events.json")
	if err := os.WriteFile(spec, []byte(`{"identifier": "events", "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "events", "format": "ICEBERG", "catalog": {"identifier": "bench"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["id"]}]}}`), 0o644); err != nil {
		return nil, err
	}
	wf, err := controllers.LoadWorkflow(spec)
	if err != nil {
		return nil, err
	}
	// Windows publish several to a commit and report in bursts, so the time per window is
	// taken over blocks of ten: from the end of one block to the end of the next, over ten.
	var ends []time.Time
	t0 := time.Now()
	res, err := (&controllers.Runner{}).Backfill(context.Background(), wf, controllers.BackfillOptions{
		From: start.Format("2006-01-02"), To: start.AddDate(0, 0, n).Format("2006-01-02"), MaxWindows: n, Batch: batch,
		OnWindow: func(done, total int, w controllers.BackfillWindow) {
			ends = append(ends, time.Now())
			if progress != nil {
				progress(done, total)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	if res.Counts[controllers.OutcomePublished] != n {
		return nil, fmt.Errorf("backfill: %v, want %d published", res.Counts, n)
	}
	total := time.Since(t0)
	const block = 10
	var per []time.Duration
	prev := t0
	for i := block - 1; i < len(ends); i += block {
		per = append(per, ends[i].Sub(prev)/block)
		prev = ends[i]
	}
	k := max(min(5, len(per)/2), 1)
	return &backfillResult{Windows: len(ends), PerSecond: float64(len(ends)) / total.Seconds(),
		First: median(per[:k]), Last: median(per[len(per)-k:])}, nil
}
