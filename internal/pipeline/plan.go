package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/shell"
	"github.com/ldp-dev/ldp/internal/sources"
	"github.com/ldp-dev/ldp/internal/window"
)

// Schedule returns a pipeline's schedule and where it comes from: metadata.schedule, or the
// alias its when label means.
func Schedule(p *v1.Pipeline) (string, string) {
	if s := p.Metadata.Schedule; s != "" {
		return s, "metadata.schedule"
	}
	if s := cronx.ScheduleOfWhen(p.When); s != "" {
		return s, fmt.Sprintf("when: %s", p.When)
	}
	return "", ""
}

// MakePlan computes the plan of p for window w (zero for none).
func MakePlan(p *v1.Pipeline, w v1.LogicalWindow) (*v1.PipelinePlan, error) {
	route, err := RouteOf(p)
	if err != nil {
		return nil, err
	}
	hash, err := p.SpecHash()
	if err != nil {
		return nil, err
	}
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return nil, err
	}
	pl := &v1.PipelinePlan{Pipeline: p.Identifier, Route: route.String(), SpecHash: hash, Target: targetName(p),
		Mode: p.Metadata.Target.WriteMode, Window: w.String(), Notes: []string{}, Warnings: []string{}, Errors: []string{}}
	pl.Schedule, pl.ScheduleFrom = Schedule(p)
	if !w.IsZero() && ws.Location.String() != "UTC" {
		pl.WindowLocal = window.Describe(w, ws.Location)
	}
	if p.When != "" && cronx.ScheduleOfWhen(p.When) == "" {
		pl.Notes = append(pl.Notes, fmt.Sprintf("when %q is a label that nothing reads; write metadata.schedule to schedule the pipeline", p.When))
	}
	if src := p.Metadata.Source; readsFile(src) {
		path, err := window.FillPath(src.Path, w, ws.Location)
		if err != nil {
			pl.Errors = append(pl.Errors, err.Error())
		} else {
			pl.SourcePath = path
			if full := resolvePath(p.BaseDir, path); sourceExists(full, p) {
				pl.SourceExists = true
				if !lake.IsRemote(full) {
					for _, err := range columnErrorsOf(p, full) {
						pl.Errors = append(pl.Errors, unfiled(p, err))
					}
				}
			} else {
				pl.Notes = append(pl.Notes, fmt.Sprintf("source file %s is not there yet", path))
			}
		}
	}
	if p.IsIceberg() && !w.IsZero() {
		pl.Key = p.IdempotencyKey(w)
	}
	if msg := selectsNoRows(p); msg != "" {
		pl.Errors = append(pl.Errors, msg)
	}
	if p.IsIceberg() && pl.Mode == v1.WriteOverwrite && ws.Column == "" && window.HasPlaceholders(p.Metadata.Source.Path) {
		pl.Notes = append(pl.Notes, "write_mode overwrite without metadata.window.column replaces the whole table with each window's file")
	}
	return pl, nil
}

// Warnings are what ldp run prints before a windowed run: the contract makes a scheduled
// append that selects no rows an error for ldp plan and a warning for ldp run --window.
func Warnings(p *v1.Pipeline, w v1.LogicalWindow) []string {
	if w.IsZero() {
		return nil
	}
	var out []string
	if msg := selectsNoRows(p); msg != "" {
		out = append(out, msg)
	}
	if msg := offSize(p, w); msg != "" {
		out = append(out, msg)
	}
	return out
}

// offSize says when w is not one window of the spec's size: the contract lets it publish as
// given, but it is seldom what was meant, and a later backfill lays other windows.
func offSize(p *v1.Pipeline, w v1.LogicalWindow) string {
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil || ws.Size == "" {
		return ""
	}
	start, err := window.Floor(w.Start, ws.Size, ws.Location)
	if err != nil || (start.Equal(w.Start) && window.Next(start, ws.Size, ws.Location).Equal(w.End)) {
		return ""
	}
	ends, err := window.Floor(w.End, ws.Size, ws.Location)
	if err != nil {
		return ""
	}
	if ends.Before(w.End) {
		ends = window.Next(ends, ws.Size, ws.Location)
	}
	n := 0
	for t := start; t.Before(ends); t = window.Next(t, ws.Size, ws.Location) {
		n++
	}
	// A window of the right length that does not start on a boundary (a UTC day for a spec
	// in Paris) is told apart: "not one day" of a 24-hour window would puzzle.
	what := fmt.Sprintf("is not one %s, the spec's window size", ws.Size)
	if window.Next(w.Start, ws.Size, ws.Location).Equal(w.End) {
		what = fmt.Sprintf("does not start at a %s boundary in %s, the spec's zone", ws.Size, ws.Location)
	}
	return fmt.Sprintf("window %s %s; it publishes as given, under a key of its own. A backfill lays %d %s windows over it: %s",
		w, what, n, ws.Size, shell.Command("ldp", "backfill", p.Path, "--from", v1.FormatInstant(start), "--to", v1.FormatInstant(ends)))
}

// selectsNoRows is the message for a scheduled Iceberg append that would load the same rows in
// every window: no placeholder picks its file and no window column picks its rows.
func selectsNoRows(p *v1.Pipeline) string {
	sched, _ := Schedule(p)
	if sched == "" || !p.IsIceberg() || p.Metadata.Target.WriteMode != v1.WriteAppend {
		return ""
	}
	if window.HasPlaceholders(p.Metadata.Source.Path) || (p.Windowed() && p.Metadata.Window.Column != "") || sources.Is(p.Metadata.Source) {
		return ""
	}
	return fmt.Sprintf("%s appends on schedule %s but selects no rows per window: every window would load the whole source again; add a {window_start:FORMAT} placeholder to metadata.source.path or a metadata.window.column", p.Identifier, sched)
}

// readsFile reports whether a source is a file: not a table, not an API.
func readsFile(src v1.Source) bool { return src.Format != v1.FormatIceberg && !sources.Is(src) }

// SourceFile is the source file of p for window w, and whether it is there; "" for a source
// that is not a file.
func SourceFile(p *v1.Pipeline, w v1.LogicalWindow) (string, bool) {
	path := SourcePath(p, w)
	if path == "" {
		return "", false
	}
	return path, sourceExists(resolvePath(p.BaseDir, path), p)
}

// SourcePath is the path of p's source file for window w, as the spec writes it (relative to
// its folder), without looking for it; "" for a source that is not a file.
func SourcePath(p *v1.Pipeline, w v1.LogicalWindow) string {
	src := p.Metadata.Source
	if !readsFile(src) {
		return ""
	}
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return ""
	}
	path, err := window.FillPath(src.Path, w, ws.Location)
	if err != nil {
		return ""
	}
	return path
}

// unfiled is err's message without the spec's file in front: a plan is of one spec.
func unfiled(p *v1.Pipeline, err error) string {
	return strings.TrimPrefix(err.Error(), p.Path+": ")
}

// sourceExists reports whether the source file at full is there: on this machine, or in its
// object store.
func sourceExists(full string, p *v1.Pipeline) bool {
	if !lake.IsRemote(full) {
		_, err := os.Stat(full)
		return err == nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ok, _ := lake.ObjectExists(ctx, full, objectProps(p))
	return ok
}
