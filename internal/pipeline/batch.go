package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/formats"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/quality"
	"github.com/ldp-dev/ldp/internal/window"
)

// A backfill window of a small drop file costs DuckDB far more to prepare its statements than
// to read its rows: read alone, each window sniffs, stages and checks its file in statements of
// its own. Read in batches, the windows of one group (Batch's size, the windows a commit
// publishes) are read by one read_csv over their files into one staged Parquet folder split by
// file, and checked by one aggregate grouped by file: a few statements a group, not a window.
// Each window then takes its own file of that folder as its batch, and goes on as a run of its
// own (its key, snapshot, events and verdict). A window the group read cannot serve (its file
// has another header, no rows, or the group's read failed) is read as a window alone reads it,
// so what it fails with is what it always failed with.

// batchMaxBytes bounds the drop files a group reads together: the batch path is for small
// files, and a large one gains nothing from sharing statements (its checks run bounded alone).
const batchMaxBytes = 64 << 20

// batchColumn holds, in the staged folder, which file of the group a row came from.
const batchColumn = "__ldp_file"

type batches struct {
	bmu   sync.Mutex
	size  int
	index map[string]int // window (LogicalWindow.String) -> its place among windows
	order []v1.LogicalWindow
	reads map[string]*groupRead
}

// Batch makes the windows of a backfill (in the order they are run) read and checked size at
// a time. Close removes what the groups staged.
func (s *Sniffs) Batch(windows []v1.LogicalWindow, size int) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	s.size, s.order, s.index, s.reads = size, windows, map[string]int{}, map[string]*groupRead{}
	for i, w := range windows {
		s.index[w.String()] = i
	}
}

// Close removes the folders the groups' reads staged (each window's file is linked into its
// table when it publishes, so the table keeps it).
func (s *Sniffs) Close() {
	if s == nil {
		return
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	for _, g := range s.reads {
		if g.dir != "" {
			os.RemoveAll(g.dir)
		}
	}
	s.reads = map[string]*groupRead{}
}

// groupRead is the read of one group's files, made by the first of its windows to need it.
type groupRead struct {
	once sync.Once
	dir  string
	// windows are what the read gives each window it serves, by LogicalWindow.String.
	windows map[string]*windowRead
}

// windowRead is a window's share of its group's read: its rows staged in file, and the
// checks' scan its report comes from (group is its file's number there).
type windowRead struct {
	file    string
	rows    int64
	checks  *quality.Grouped
	group   int64
	sniffed formats.Sniffed
	key     string
	shared  bool
}

// batchable reports whether the run can take its rows from its group's read: a keyed first
// attempt of an append of a CSV drop to an unpartitioned Iceberg table, as is, with no window
// column to filter by (every row of a window's file is the window's).
func (r *run) batchable() bool {
	p, o := r.p.Metadata, r.opts
	if o.Sniffs == nil || o.Sniffs.size < 2 || o.Group == nil || o.Attempt != 1 || !r.keyed() {
		return false
	}
	return p.Source.Format == v1.FormatCSV && r.toIceberg() && r.res.Mode == v1.WriteAppend && p.Transform == nil &&
		len(p.Target.PartitionBy) == 0 && r.win.Column == "" && !lake.IsRemote(r.resolve(p.Source.Path))
}

// fromBatch is the run's share of its group's read, or nil when it reads its file alone.
func (r *run) fromBatch(ctx context.Context) *windowRead {
	if !r.batchable() {
		return nil
	}
	s := r.opts.Sniffs
	s.bmu.Lock()
	i, ok := s.index[r.opts.Window.String()]
	if !ok {
		s.bmu.Unlock()
		return nil
	}
	first := i / s.size * s.size
	windows := s.order[first:min(first+s.size, len(s.order))]
	key := r.res.SpecHash + "\x00" + strconv.Itoa(first)
	g := s.reads[key]
	if g == nil {
		g = &groupRead{}
		s.reads[key] = g
	}
	s.bmu.Unlock()
	g.once.Do(func() { g.read(ctx, r, windows) })
	return g.windows[r.opts.Window.String()]
}

// read reads the files of windows that share r's file's header line with one read_csv, stages
// them in one Parquet folder split by file and checks them with one aggregate. On any failure
// it serves no window: each reads its file alone, and says what is wrong with it as it does.
func (g *groupRead) read(ctx context.Context, r *run, windows []v1.LogicalWindow) {
	src := r.p.Metadata.Source
	header, ok := formats.HeaderLine(r.localSource)
	if !ok {
		return
	}
	sn := sniffing{key: r.res.SpecHash + "\x00" + header}
	if sn.sniffed, sn.shared = r.opts.Sniffs.get(sn.key); !sn.shared {
		if sn.sniffed, ok = formats.Sniff(ctx, r.db, r.localSource, src.Options); !ok {
			return
		}
	}
	cols := stagedAs(&sn, true)
	if cols == nil {
		return
	}
	var files []string
	number := map[string]int{}    // file -> its number in files
	fileOf := map[string]string{} // window -> its file
	var size int64
	for _, w := range windows {
		path, err := window.FillPath(src.Path, w, r.win.Location)
		if err != nil {
			return
		}
		full := r.resolve(path)
		if _, seen := number[full]; !seen {
			info, err := os.Stat(full)
			if err != nil || !info.Mode().IsRegular() {
				continue // a missing drop fails its own window, as it does alone
			}
			if h, ok := formats.HeaderLine(full); !ok || h != header {
				continue
			}
			size += info.Size()
			number[full] = len(files)
			files = append(files, full)
		}
		fileOf[w.String()] = full
	}
	if len(fileOf) < 2 || size > batchMaxBytes {
		return
	}
	dir, err := r.stagingDir()
	if err != nil {
		return
	}
	g.dir = dir
	var which strings.Builder
	which.WriteString("CASE " + engine.Ident(batchColumn))
	for i, f := range files {
		fmt.Fprintf(&which, " WHEN %s THEN %d", engine.Lit(f), i)
	}
	which.WriteString(" END")
	out := filepath.Join(dir, "extract")
	read := fmt.Sprintf("read_csv(%s, %s, filename = %s)", engine.LitList(files), sn.sniffed.Options, engine.Lit(batchColumn))
	q := fmt.Sprintf("COPY (SELECT %s, %s AS %s FROM %s) TO %s (FORMAT parquet, COMPRESSION snappy, PARTITION_BY (%s), FILENAME_PATTERN 'part-{i}')",
		engine.IcebergSelect(sn.sniffed.Cols), which.String(), engine.Ident(batchColumn), read, engine.Lit(out), engine.Ident(batchColumn))
	if _, err := r.db.ExecCount(ctx, q); err != nil {
		return
	}
	var checks []v1.Check
	onFailure := ""
	if qc := r.p.Metadata.Quality; qc != nil {
		checks, onFailure = qc.Checks, qc.OnFailure
	}
	staged := fmt.Sprintf("read_parquet(%s, hive_partitioning = true)", engine.Lit(filepath.Join(out, "*", "*.parquet")))
	scan, err := quality.RunGrouped(ctx, r.db, staged, batchColumn, cols, checks, onFailure)
	if err != nil {
		return
	}
	g.windows = map[string]*windowRead{}
	for w, full := range fileOf {
		n := int64(number[full])
		parts, err := filepath.Glob(filepath.Join(out, batchColumn+"="+strconv.FormatInt(n, 10), "*.parquet"))
		if err != nil || len(parts) != 1 || scan.Rows(n) == 0 {
			continue // no rows (an empty window says so alone), or split in several files
		}
		g.windows[w] = &windowRead{file: parts[0], rows: scan.Rows(n), checks: scan, group: n, sniffed: sn.sniffed, key: sn.key, shared: sn.shared}
	}
}

// takeBatch makes the run's extract its share of the group's read: its staged file, its rows
// and columns, pinned so nothing asks DuckDB again.
func (r *run) takeBatch(wr *windowRead) {
	r.batch = wr
	r.sniff = &sniffing{key: wr.key, sniffed: wr.sniffed, shared: wr.shared}
	r.readExpr = formats.SniffedSource(r.localSource, wr.sniffed)
	r.staged = wr.file
	r.cols = stagedAs(r.sniff, true)
	r.rel = fmt.Sprintf("read_parquet(%s)", engine.Lit(wr.file))
	r.db.Pin(r.rel, r.cols)
	r.db.PinCount(r.rel, wr.rows)
	r.res.RowsRead, r.res.RowsKept = wr.rows, wr.rows
	r.where = "true"
}

// batchReportAt is the run's report from its group's scan of the checks, measured against qc;
// false when the run was read alone or its checks must run alone (quality.Grouped.Report).
func (r *run) batchReportAt(qc quality.Context) (*v1.QualityReport, bool) {
	if r.batch == nil {
		return nil, false
	}
	return r.batch.checks.Report(r.batch.group, qc)
}

// batchReport reports whether the group's scan gives the run its report (whatever the
// context: only a check's verdict depends on it).
func (r *run) batchReport() (*v1.QualityReport, bool) { return r.batchReportAt(quality.Context{}) }
