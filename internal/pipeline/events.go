package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/window"
)

// The payloads of a pipeline run's events. They carry counts, names and numeric metrics only:
// never a row's values.

func (r *run) startedPayload() ledger.RunStartedPayload {
	p := r.p
	pm := "direct"
	if r.keyed() {
		pm = "staged"
	}
	payload := ledger.RunStartedPayload{
		Pipeline:       p.Identifier,
		Spec:           p.Path,
		Mode:           string(r.res.Mode),
		PublishMode:    pm,
		IdempotencyKey: r.res.Key,
		SpecHash:       r.res.SpecHash,
		Source:         r.sourceDataset(),
		Target:         r.targetDataset(),
		LdpVersion:     r.opts.Version,
		Env:            r.opts.Env,
	}
	if !r.opts.Window.IsZero() {
		w := ledger.WindowOf(r.opts.Window)
		payload.Window = &w
	}
	return payload
}

// sourceDataset names the source as OpenLineage does: a file by its absolute path, a table by
// its identifier in the warehouse's namespace.
func (r *run) sourceDataset() ledger.Dataset {
	src := r.p.Metadata.Source
	if src.Format == v1.FormatIceberg {
		return ledger.Dataset{Format: string(src.Format), Namespace: warehouseNS(r.p.BaseDir, src.Catalog.WarehousePath), Name: lake.RefOfSource(src).String()}
	}
	path := src.Path
	if filled, err := window.FillPath(src.Path, r.opts.Window, r.win.Location); err == nil {
		path = filled
	}
	return ledger.Dataset{Format: string(src.Format), Namespace: "file", Name: absPath(r.resolve(path)), PathTemplate: src.Path}
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

func (r *run) targetDataset() ledger.Dataset {
	t := r.p.Metadata.Target
	if r.p.IsIceberg() {
		return ledger.Dataset{Format: string(t.Format), Namespace: warehouseNS(r.p.BaseDir, t.Catalog.WarehousePath), Name: lake.RefOf(t).String()}
	}
	return ledger.Dataset{Format: string(t.Format), Namespace: "file", Name: absPath(r.resolve(t.Path))}
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

func (r *run) publishedPayload() ledger.RunPublishedPayload {
	p := ledger.RunPublishedPayload{RowsWritten: r.res.RowsWritten, SnapshotID: r.res.SnapshotID, IdempotencyKey: r.res.Key}
	if r.res.Write != nil {
		p.WriteResult, _ = json.Marshal(r.res.Write)
	}
	return p
}

func (r *run) finishedPayload() ledger.RunFinishedPayload {
	p := ledger.RunFinishedPayload{
		Status: r.res.Status, DurationS: r.res.DurationS, RowsRead: r.res.RowsRead, RowsKept: r.res.RowsKept,
		RowsOutside: r.res.RowsOutside, RowsNoWindowValue: r.res.RowsNoWindow, RowsWritten: r.res.RowsWritten, SnapshotID: r.res.SnapshotID, IdempotencyKey: r.res.Key,
		Pipeline: r.p.Identifier, Error: r.publicError(),
	}
	if !r.opts.Window.IsZero() {
		w := ledger.WindowOf(r.opts.Window)
		p.Window = &w
	}
	if q := r.res.Quality; q != nil {
		passed, failed := q.Counts()
		p.QualityPassed, p.ChecksPassed, p.ChecksFailed = new(q.Passed()), &passed, &failed
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

func (r *run) qualityPayload(rep *v1.QualityReport) ledger.QualityEvaluatedPayload {
	checks := make([]ledger.CheckResult, len(rep.Results))
	for i, res := range rep.Results {
		checks[i] = ledger.CheckResult{Name: res.Name, Check: res.Check, Passed: res.Passed, FailingRows: res.FailingRows, Metrics: res.Metrics}
	}
	if q := r.p.Metadata.Quality; q != nil {
		for i, c := range q.Checks {
			if i < len(checks) {
				checks[i].Column = c.Column
			}
		}
	}
	return ledger.QualityEvaluatedPayload{Rows: rep.Rows, NullCounts: rep.NullCounts, Passed: rep.Passed(), OnFailure: rep.OnFailure, Checks: checks}
}

// publicError is the run's error as events carry it: without the row values a message may
// quote, which only the terminal shows (ldperr.Public).
func (r *run) publicError() string {
	if r.err == nil {
		return r.res.Error
	}
	return ldperr.Public(r.err)
}
