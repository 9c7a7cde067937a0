package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
)

// defaultHistory is the size of the history part in make bench: issue 27's 100,000 hourly
// windows (a decade of hours), about 18 minutes on two quiet cores; historyNote says so.
const (
	defaultHistory = 100_000
	historyNote    = "`make bench` publishes N = 100,000 (a decade of hours), the figure issue 27 asks for; " +
		"`-history N` sets another."
)

// history publishes c.histWindows tiny keyed hourly windows through lake.Catalog.Publish, the
// function a pipeline's run calls, ten at a time through a lake.Group as a backfill does (one
// catalog commit a batch of ten), in this process: no CSV, no checks, no ledger, no process
// per window, so a history of 100,000 windows (a decade of hours) is committed in minutes,
// through the same publish path (key lookup in the index, staged snapshots, retention, the
// key index written in the commit). It reports what that history leaves: the time per
// window of the last windows over the first, metadata.json and the files under metadata/.
func (c *config) history() ([]row, error) {
	n := c.histWindows
	if n < 20 {
		return nil, fmt.Errorf("-history %d: at least 20 windows", n)
	}
	ctx := context.Background()
	dir := filepath.Join(c.dir, "history")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cat, err := lake.Open(ctx, &v1.Catalog{Identifier: "bench", WarehousePath: "wh"}, dir)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	ref := lake.Ref{Namespace: "bench", Name: "events"}
	start := time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)
	// The summary a pipeline's publish writes, so metadata.json grows as it would.
	specHash := fmt.Sprintf("%064x", 27)
	publish := func(w int, g *lake.Group) error {
		db, err := engine.Open(ctx)
		if err != nil {
			return err
		}
		defer db.Close()
		win := v1.LogicalWindow{Start: start.Add(time.Duration(w) * time.Hour), End: start.Add(time.Duration(w+1) * time.Hour)}
		if err := db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE TEMP TABLE batch AS SELECT %d::BIGINT AS id, TIMESTAMP '%s' AS ts, 1::BIGINT AS amount",
			w, win.Start.Format("2006-01-02 15:04:05"))); err != nil {
			return err
		}
		res, err := cat.Publish(ctx, db, "batch", ref, lake.PublishOptions{
			Key: v1.IdempotencyKey("events", "iceberg:bench.events", win), RunID: uuid.Must(uuid.NewV7()).String() + "/events", Attempt: 1, Group: g,
			WriteOptions: lake.WriteOptions{Mode: v1.WriteAppend, SnapshotProps: map[string]string{
				"ldp.pipeline": "events", lake.SpecHashProp: specHash, lake.WindowProp: win.String(),
				lake.SourcePropStem + "source": "drops/" + win.Start.Format("2006-01-02T15") + ".csv"}},
		})
		if err == nil && res.Status != lake.Published {
			err = fmt.Errorf("status %s, want %s", res.Status, lake.Published)
		}
		if err != nil {
			return fmt.Errorf("window %s: %w", win, err)
		}
		return nil
	}
	// The first window creates the table alone; the others go through one group driven as
	// ldp backfill drives it (controllers' window runner, Grouped): a CPU's worth of windows at
	// work, ten a commit, the next batch written while one commits.
	if err := publish(0, nil); err != nil {
		return nil, err
	}
	g := lake.NewGroup(min(runtime.GOMAXPROCS(0), 8), lake.DefaultGroupSize)
	ends := make([]time.Time, n-1)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		failure error
	)
	t0 := time.Now()
	for w := 1; w < n; w++ {
		g.Enter()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := publish(w, g)
			g.Leave()
			ends[w-1] = time.Now()
			if err != nil {
				mu.Lock()
				failure = cmp.Or(failure, err)
				mu.Unlock()
			}
		}()
		if w%5_000 == 0 {
			logf("   %d windows started in %.1fs (%.0f /s)", w, time.Since(t0).Seconds(), float64(w)/time.Since(t0).Seconds())
		}
	}
	wg.Wait()
	if failure != nil {
		return nil, failure
	}
	wall := time.Since(t0)
	// Time per window over blocks of ten, as the backfill's (one commit a block).
	const block = lake.DefaultGroupSize
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	var per []time.Duration
	for i := block; i < len(ends); i += block {
		per = append(per, ends[i].Sub(ends[i-block])/block)
	}
	tbl, err := cat.Load(ctx, ref)
	if err != nil {
		return nil, err
	}
	if got := tbl.CurrentSnapshot().Summary.Properties["total-records"]; got != strconv.Itoa(n) {
		return nil, fmt.Errorf("the table holds %s rows after %d windows of one", got, n)
	}
	snapshots := len(tbl.Metadata().Snapshots())
	current, total, files, err := metadataSize(dir)
	if err != nil {
		return nil, err
	}
	edge := max(min(1000/block, len(per)/2), 1)
	first, last := median(per[:edge]), median(per[len(per)-edge:])
	logf("   %d windows in %.1fs (%.0f /s); %d snapshots kept; metadata/ %d files, %.0f KiB", n, wall.Seconds(), float64(n-1)/wall.Seconds(), snapshots, files, float64(total)/1024)
	logf("   metadata/: %s", metadataKinds(dir))
	part := "3. Publish as history grows"
	what := fmt.Sprintf("%s hourly windows published through lake.Catalog.Publish, ten a commit", count(n))
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return []row{
		{Part: part, Figure: what + fmt.Sprintf(": median time per window, last %d over first %d", edge*block, edge*block),
			Value: ms(last), Unit: "ms", Ref: ms(first), RefName: fmt.Sprintf("the first %d windows", edge*block), Goal: flatGoal},
		{Part: part, Figure: what + fmt.Sprintf(": the current metadata.json (%d snapshots kept)", snapshots),
			Value: float64(current) / 1024, Unit: "KiB", Ref: metadataJSONGoal, RefName: "the goal", Goal: metadataJSONGoal, AtMost: true},
		{Part: part, Figure: what + fmt.Sprintf(": files under metadata/ (%.0f KiB)", float64(total)/1024),
			Value: float64(files), Unit: "files", Ref: metadataFilesGoal, RefName: "the goal", Goal: metadataFilesGoal, AtMost: true},
	}, nil
}
