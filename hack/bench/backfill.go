package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// backfillResult is a backfill of small windows through the ldp command, end to end.
type backfillResult struct {
	Windows   int
	Wall      time.Duration
	PerSecond float64
	// First and Last are the median time per window of the first and the last Edge windows.
	First, Last time.Duration
	Edge        int
	// MetadataJSON is the size of the table's current metadata.json; MetadataDir the bytes
	// and Files the count of every file under its metadata folder.
	MetadataJSON, MetadataDir int64
	MetadataFiles             int
	// Dir holds the spec (events.json), its drops and its table; the windows are Windows of
	// Step from Start, Rows rows each, their drop files named by layout.
	Dir    string
	Start  time.Time
	Step   time.Duration
	Rows   int
	layout string
}

// runBackfill runs `ldp backfill` over n windows of size (day or hour) of rows rows each, one
// drop file a window picked by a placeholder, two checks, appended to a new table; then reads
// when each window was published from the ledger, and measures the table's metadata.
func runBackfill(ldp, dir string, n, rows int, size string, edge int) (*backfillResult, error) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	step, layout, placeholder := 24*time.Hour, "2006-01-02", "%Y-%m-%d"
	if size == "hour" {
		step, layout, placeholder = time.Hour, "2006-01-02T15", "%Y-%m-%dT%H"
	}
	res := &backfillResult{Windows: n, Dir: dir, Start: start, Step: step, Rows: rows, layout: layout}
	if err := os.MkdirAll(filepath.Join(dir, "drops"), 0o755); err != nil {
		return nil, err
	}
	for w := 0; w < n; w++ {
		if err := res.writeDrop(w); err != nil {
			return nil, err
		}
	}
	spec := filepath.Join(dir, "events.json")
	if err := os.WriteFile(spec, []byte(`{"identifier": "events", "metadata": {"window": {"size": "`+size+`"},
		"source": {"format": "CSV", "path": "drops/{window_start:`+placeholder+`}.csv"},
		"target": {"name": "events", "format": "ICEBERG", "catalog": {"identifier": "bench"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["id"]}]}}`), 0o644); err != nil {
		return nil, err
	}
	end := start.Add(time.Duration(n) * step)
	// Exit 0 is every window published; the ledger says when each was.
	m, err := run(dir, ldp, "backfill", "events.json", "--from", start.Format(time.RFC3339), "--to", end.Format(time.RFC3339),
		"--max-windows", fmt.Sprint(n))
	if err != nil {
		return nil, err
	}
	ends, err := publishTimes(filepath.Join(dir, ".ldp", "events.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(ends) != n {
		return nil, fmt.Errorf("the ledger holds %d published windows, want %d", len(ends), n)
	}
	// Windows publish several to a commit, so the time per window is taken over blocks of
	// ten: from the end of one block to the end of the next, over ten.
	const block = 10
	var per []time.Duration
	for i := block; i < len(ends); i += block {
		per = append(per, ends[i].Sub(ends[i-block])/block)
	}
	k := max(min(edge/block, len(per)/2), 1)
	res.Wall, res.PerSecond, res.Edge = m.Wall, float64(n)/m.Wall.Seconds(), k*block
	res.First, res.Last = median(per[:k]), median(per[len(per)-k:])
	res.MetadataJSON, res.MetadataDir, res.MetadataFiles, err = metadataSize(dir)
	return res, err
}

// publishTimes is when each window's run was published, in order, from the ledger.
func publishTimes(ledger string) ([]time.Time, error) {
	f, err := os.Open(ledger)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Type string    `json:"type"`
			TS   time.Time `json:"ts"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "run.published" {
			out = append(out, e.TS)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out, sc.Err()
}

// metadataSize measures the metadata folder of the one table under dir: the newest
// metadata.json, and every file there.
func metadataSize(dir string) (current, total int64, files int, err error) {
	var newest string
	var newestAt time.Time
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "metadata" {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		files++
		if strings.HasSuffix(p, ".metadata.json") && info.ModTime().After(newestAt) {
			newest, newestAt, current = p, info.ModTime(), info.Size()
		}
		return nil
	})
	if err == nil && newest == "" {
		err = fmt.Errorf("no metadata.json under %s", dir)
	}
	return current, total, files, err
}

// metadataKinds counts the files under the metadata folders under dir by kind, largest first,
// for the log: which of them a history leaves behind.
func metadataKinds(dir string) string {
	type kind struct {
		files int
		bytes int64
	}
	kinds := map[string]*kind{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "metadata" {
			return err
		}
		name, k := d.Name(), "other"
		switch {
		case strings.HasSuffix(name, ".metadata.json"):
			k = "metadata.json"
		case strings.HasSuffix(name, ".puffin"):
			k = "puffin"
		case strings.HasPrefix(name, "snap-"):
			k = "manifest list"
		case strings.HasSuffix(name, ".avro"):
			k = "manifest"
		}
		if kinds[k] == nil {
			kinds[k] = &kind{}
		}
		if info, err := d.Info(); err == nil {
			kinds[k].files++
			kinds[k].bytes += info.Size()
		}
		return nil
	})
	names := slices.Collect(maps.Keys(kinds))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(kinds[b].bytes, kinds[a].bytes) })
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d (%.0f KiB)", n, kinds[n].files, float64(kinds[n].bytes)/1024))
	}
	return strings.Join(parts, ", ")
}
