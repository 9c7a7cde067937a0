package controllers

import (
	"fmt"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// NotFinishedError refuses to publish a window that is not finished (it has not ended, or waits
// its metadata.window.delay for late rows): once its key is on main the scheduler skips it for
// good, and the rows that land in it later would never be loaded.
type NotFinishedError struct {
	File   string
	Window v1.LogicalWindow
	Loc    *time.Location
	// Delay is the spec's metadata.window.delay: the window is finished at its end plus it.
	Delay time.Duration
}

func (e *NotFinishedError) Error() string {
	loc := e.Loc
	if loc == nil {
		loc = time.UTC
	}
	prefix := ""
	if e.File != "" {
		prefix = e.File + ": "
	}
	ready := reconcile.ReadyAt(e.Window, e.Delay)
	when := "it ends at " + zoned(e.Window.End, loc)
	if e.Delay > 0 {
		when += " and waits " + e.Delay.String() + " for late rows (metadata.window.delay), until " + zoned(ready, loc)
	}
	return fmt.Sprintf("%swindow %s is not finished: %s; published now under its key, the rows that land in it later would never be loaded (the scheduler skips a published window): wait until %s and run it again, or end the range at the last finished window",
		prefix, e.Window, when, ready.UTC().Format(time.RFC3339))
}

// zoned writes t in loc, and in UTC beside it when loc is another zone.
func zoned(t time.Time, loc *time.Location) string {
	s := t.In(loc).Format(time.RFC3339)
	if loc.String() != "UTC" {
		s += " (" + loc.String() + "), " + t.UTC().Format(time.RFC3339)
	}
	return s
}

// refuseUnfinished is the error of the first window of plans that is not finished, or nil.
func refuseUnfinished(wf *Object, plans []WindowPlan) error {
	for _, p := range plans {
		if p.NotFinished {
			return &NotFinishedError{File: wf.File, Window: p.Window, Loc: wf.Window.Location, Delay: wf.Window.Delay}
		}
	}
	return nil
}

// CheckFinished refuses a window of a single run of wf that is not finished at now
// (reconcile's rule).
func CheckFinished(file string, wf *Object, w v1.LogicalWindow, now time.Time) error {
	if w.IsZero() || reconcile.Finished(w, wf.Window.Delay, now) {
		return nil
	}
	return &NotFinishedError{File: file, Window: w, Loc: wf.Window.Location, Delay: wf.Window.Delay}
}

// CheckPipelineFinished is CheckFinished for a run of one dataset config.
func CheckPipelineFinished(file string, p *v1.Pipeline, w v1.LogicalWindow, now time.Time) error {
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return nil // validation reports the window; the run fails on it there
	}
	return CheckFinished(file, &Object{Window: ws}, w, now)
}
