package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/quality"
	"github.com/ldp-dev/ldp/internal/window"
)

// The payloads of a pipeline run's events. They carry counts, names and numeric metrics only:
// never a row's values.

func (r *run) startedPayload() map[string]any {
	p := r.p
	pm := "direct"
	if r.keyed() {
		pm = "staged"
	}
	payload := map[string]any{
		"pipeline":        p.Identifier,
		"spec":            p.Path,
		"mode":            string(r.res.Mode),
		"publish_mode":    pm,
		"idempotency_key": r.res.Key,
		"spec_hash":       r.res.SpecHash,
		"source":          r.sourceDataset(),
		"target":          r.targetDataset(),
		"ldp_version":     r.opts.Version,
	}
	if !r.opts.Window.IsZero() {
		payload["logical_window"] = map[string]any{"start": r.opts.Window.Start.UTC(), "end": r.opts.Window.End.UTC()}
	}
	return payload
}

// sourceDataset names the source as OpenLineage does: a file by its absolute path, a table by
// its identifier in the warehouse's namespace.
func (r *run) sourceDataset() map[string]any {
	src := r.p.Metadata.Source
	if src.Format == v1.FormatIceberg {
		return map[string]any{"format": string(src.Format), "namespace": warehouseNS(r.p.BaseDir, src.Catalog.WarehousePath), "name": lake.RefOfSource(src).String()}
	}
	path := src.Path
	if filled, err := window.FillPath(src.Path, r.opts.Window, r.win.Location); err == nil {
		path = filled
	}
	return map[string]any{"format": string(src.Format), "namespace": "file", "name": absPath(r.resolve(path)), "path_template": src.Path}
}

// absPath makes a local path absolute; a URL (s3://...) is kept as written.
func absPath(p string) string {
	if strings.Contains(p, "://") {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func (r *run) targetDataset() map[string]any {
	t := r.p.Metadata.Target
	if r.p.IsIceberg() {
		return map[string]any{"format": string(t.Format), "namespace": warehouseNS(r.p.BaseDir, t.Catalog.WarehousePath), "name": lake.RefOf(t).String()}
	}
	return map[string]any{"format": string(t.Format), "namespace": "file", "name": absPath(r.resolve(t.Path))}
}

func warehouseNS(base, wp string) string {
	if !filepath.IsAbs(wp) {
		wp = filepath.Join(base, wp)
	}
	if abs, err := filepath.Abs(wp); err == nil {
		wp = abs
	}
	return "iceberg+file://" + wp
}

func (r *run) publishedPayload() map[string]any {
	p := map[string]any{"rows_written": r.res.RowsWritten, "snapshot_id": r.res.SnapshotID, "idempotency_key": r.res.Key}
	if r.res.Write != nil {
		p["write_result"] = r.res.Write
	}
	return p
}

func (r *run) finishedPayload() map[string]any {
	p := map[string]any{
		"status": r.res.Status, "duration_s": r.res.DurationS, "rows_read": r.res.RowsRead, "rows_kept": r.res.RowsKept,
		"rows_outside_window": r.res.RowsOutside, "rows_no_window_value": r.res.RowsNoWindow, "rows_written": r.res.RowsWritten, "snapshot_id": r.res.SnapshotID, "idempotency_key": r.res.Key,
		"pipeline": r.p.Identifier, "logical_window": r.res.Window, "error": r.publicError(),
	}
	if q := r.res.Quality; q != nil {
		p["quality_passed"] = q.Passed()
		passed, failed := q.Counts()
		p["checks_passed"], p["checks_failed"] = passed, failed
	}
	return p
}

// errorType names an error's kind for the ledger: the Go type of the error inside a stage.
func errorType(err error) string {
	var se *StageError
	if errors.As(err, &se) {
		err = se.Err
	}
	t := fmt.Sprintf("%T", err)
	t = strings.TrimPrefix(t, "*")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		t = t[i+1:]
	}
	return t
}

func (r *run) qualityPayload(rep *quality.Report) map[string]any {
	checks := make([]map[string]any, len(rep.Results))
	for i, res := range rep.Results {
		checks[i] = map[string]any{"name": res.Name, "check": res.Check, "passed": res.Passed, "failing_rows": res.FailingRows, "metrics": res.Metrics}
	}
	if q := r.p.Metadata.Quality; q != nil {
		for i, c := range q.Checks {
			if i < len(checks) && c.Column != "" {
				checks[i]["column"] = c.Column
			}
		}
	}
	return map[string]any{"rows": rep.Rows, "null_counts": rep.NullCounts, "passed": rep.Passed(), "on_failure": rep.OnFailure, "checks": checks}
}

// publicError is the run's error as events carry it: without the row values a message may
// quote, which only the terminal shows (ldperr.Public).
func (r *run) publicError() string {
	if r.err == nil {
		return r.res.Error
	}
	return ldperr.Public(r.err)
}
