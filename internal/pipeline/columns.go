package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/formats"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/quality"
	"github.com/ldp-dev/ldp/internal/suggest"
	"github.com/ldp-dev/ldp/internal/window"
)

// The column names a spec writes are checked against the columns they name, once, here: a run
// checks them on its batch, and ldp plan and ldp diff on the source when they can read it, so
// a mistyped name is a spec error (exit 1) with a did-you-mean before anything runs, never a
// data gate or a catalog's error after the extract.

// windowColumnError is the error of a window column the source does not have, or nil.
func windowColumnError(p *v1.Pipeline, source []engine.Column) error {
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil || ws.Column == "" {
		return nil
	}
	if msg := missing("metadata.window.column", []string{ws.Column}, source, "the source"); msg != "" {
		return &ldperr.ConfigError{File: p.Path, Msg: msg}
	}
	return nil
}

// targetColumnsError is the error of the join and partition columns of p's target that its
// batch does not have, or nil.
func targetColumnsError(p *v1.Pipeline, batch []engine.Column) error {
	t := p.Metadata.Target
	var problems []string
	if t.WriteMode == v1.WriteUpsert {
		if msg := missing("metadata.target.join_cols", t.JoinCols, batch, "the batch"); msg != "" {
			problems = append(problems, msg)
		}
	}
	if p.IsIceberg() {
		var parts []string
		for _, f := range t.PartitionBy {
			parts = append(parts, f.Column)
		}
		if msg := missing("metadata.target.partition_by", parts, batch, "the batch"); msg != "" {
			problems = append(problems, msg)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &ldperr.ConfigError{File: p.Path, Msg: strings.Join(problems, "; ")}
}

// missing says which of the columns that key names are not among cols, each with a
// did-you-mean, and what the columns are; "" when none is missing. Names resolve without case,
// as DuckDB's and the table's do.
func missing(key string, want []string, cols []engine.Column, of string) string {
	have := map[string]bool{}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
		have[strings.ToLower(c.Name)] = true
	}
	var problems []string
	for _, w := range want {
		if !have[strings.ToLower(w)] {
			problems = append(problems, fmt.Sprintf("column %q is not in %s%s", w, of, suggest.DidYouMean(w, names)))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("%s: %s; its columns are %s", key, strings.Join(problems, "; "), strings.Join(quoted, ", "))
}

// SourceColumnErrors checks, without running anything, the columns p names (window, checks,
// join and partition columns) against the columns of its source for window w, read with a
// DESCRIBE of the file. A source that is not a local file that is there, or that cannot be
// read here, gives nil: the run reports it. With a transform, the batch's columns are the
// transform's, so only the window column (read before the transform) is checked.
func SourceColumnErrors(p *v1.Pipeline, w v1.LogicalWindow) []error {
	src := p.Metadata.Source
	if src.Format == v1.FormatIceberg {
		return nil
	}
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return nil
	}
	path, err := window.FillPath(src.Path, w, ws.Location)
	if err != nil {
		return nil
	}
	full := resolvePath(p.BaseDir, path)
	if lake.IsRemote(full) || !sourceExists(full, p) {
		return nil
	}
	return columnErrorsOf(p, full)
}

// columnErrorsOf is SourceColumnErrors of the local source file at full.
func columnErrorsOf(p *v1.Pipeline, full string) []error {
	if !namesColumns(p) {
		return nil // nothing to check: no DuckDB to open
	}
	expr, err := formats.Source(p.Metadata.Source.Format, full, p.Metadata.Source.Options)
	if err != nil {
		return nil
	}
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		return nil
	}
	defer db.Close()
	cols, err := db.Columns(ctx, expr)
	if err != nil {
		return nil
	}
	var errs []error
	if err := windowColumnError(p, cols); err != nil {
		errs = append(errs, err)
	}
	if p.Metadata.Transform != nil {
		return errs
	}
	if q := p.Metadata.Quality; q != nil && len(q.Checks) > 0 {
		if err := quality.CheckColumns(q.Checks, cols); err != nil {
			var ce *ldperr.ConfigError
			if errors.As(err, &ce) && ce.File == "" {
				ce.File = p.Path
			}
			errs = append(errs, err)
		}
	}
	if err := targetColumnsError(p, cols); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// namesColumns reports whether p names a column columnErrorsOf would check.
func namesColumns(p *v1.Pipeline) bool {
	m := p.Metadata
	if m.Window != nil && m.Window.Column != "" {
		return true
	}
	if m.Transform != nil {
		return false
	}
	return (m.Quality != nil && len(m.Quality.Checks) > 0) || len(m.Target.PartitionBy) > 0 ||
		(m.Target.WriteMode == v1.WriteUpsert && len(m.Target.JoinCols) > 0)
}
