// Command backfill measures a daily backfill of small windows end to end through ldp's
// runner: windows per second, and the median time per window of the last 50 windows over the
// first 50 (the growth of commit cost with history).
//
//	go run ./hack/bench/backfill -windows 1000
//
// Goals (issue "Backfills"): at least 20 windows/s, and a ratio of at most 4.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/ldp-dev/ldp/controllers"
)

func main() {
	n := flag.Int("windows", 1000, "daily windows to backfill")
	rows := flag.Int("rows", 10, "rows per window")
	keep := flag.Bool("keep", false, "keep the work folder")
	batch := flag.Int("batch", 0, "windows per catalog commit (0: ldp's default)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	dir, err := os.MkdirTemp("", "ldp-bench-backfill-")
	check(err)
	if !*keep {
		defer os.RemoveAll(dir)
	}
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// One drop file per day, as a daily feed lands.
	check(os.MkdirAll(filepath.Join(dir, "drops"), 0o755))
	for d := 0; d < *n; d++ {
		day := start.AddDate(0, 0, d)
		var b strings.Builder
		b.WriteString("id,ts,amount\n")
		for r := 0; r < *rows; r++ {
			fmt.Fprintf(&b, "%d,%s,%d\n", d**rows+r, day.Add(time.Duration(r)*time.Hour).Format("2006-01-02 15:04:05"), r)
		}
		check(os.WriteFile(filepath.Join(dir, "drops", day.Format("2006-01-02")+".csv"), []byte(b.String()), 0o644))
	}
	spec := filepath.Join(dir, "events.json")
	check(os.WriteFile(spec, []byte(`{"identifier": "events", "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "events", "format": "ICEBERG", "catalog": {"identifier": "bench"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["id"]}]}}`), 0o644))
	wf, err := controllers.LoadWorkflow(spec)
	check(err)
	// Windows publish ten to a commit and report in bursts, so the time per window is taken
	// over blocks of ten: the time from the end of one block to the end of the next, over ten.
	var ends []time.Time
	t0 := time.Now()
	res, err := (&controllers.Runner{}).Backfill(context.Background(), wf, controllers.BackfillOptions{
		From: start.Format("2006-01-02"), To: start.AddDate(0, 0, *n).Format("2006-01-02"), MaxWindows: *n,
		Batch: *batch,
		OnWindow: func(done, total int, w controllers.BackfillWindow) {
			ends = append(ends, time.Now())
			if done%100 == 0 {
				fmt.Fprintf(os.Stderr, "%d/%d windows\n", done, total)
			}
		},
	})
	check(err)
	total := time.Since(t0)
	const block = 10
	var per []time.Duration
	prev := t0
	for i := block - 1; i < len(ends); i += block {
		per = append(per, ends[i].Sub(prev)/block)
		prev = ends[i]
	}
	k := min(5, len(per)/2)
	first, lastK := median(per[:k]), median(per[len(per)-k:])
	fmt.Printf("windows: %d (%v)\n", len(ends), res.Counts)
	fmt.Printf("windows per second: %.1f (goal >= 20)\n", float64(len(ends))/total.Seconds())
	fmt.Printf("median per window, first %d: %v, last %d: %v, ratio %.2f (goal <= 4)\n", k*block, first.Round(time.Millisecond), k*block, lastK.Round(time.Millisecond), float64(lastK)/float64(first))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
