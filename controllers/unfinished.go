package controllers

import (
	"fmt"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/reconcile"
)

// NotFinishedError refuses to publish a window that has not ended: once its key is on main the
// scheduler skips it for good, and the rows that land in it later would never be loaded.
type NotFinishedError struct {
	File   string
	Window v1.LogicalWindow
	Loc    *time.Location
}

func (e *NotFinishedError) Error() string {
	loc := e.Loc
	if loc == nil {
		loc = time.UTC
	}
	end := e.Window.End.In(loc).Format(time.RFC3339)
	if loc.String() != "UTC" {
		end += " (" + loc.String() + "), " + e.Window.End.UTC().Format(time.RFC3339)
	}
	prefix := ""
	if e.File != "" {
		prefix = e.File + ": "
	}
	return fmt.Sprintf("%swindow %s is not finished: it ends at %s; published now under its key, the rows that land in it later would never be loaded (the scheduler skips a published window): wait until %s and run it again, or end the range at the last finished window",
		prefix, e.Window, end, e.Window.End.UTC().Format(time.RFC3339))
}

// refuseUnfinished is the error of the first window of plans that is not finished, or nil.
func refuseUnfinished(wf *Object, plans []WindowPlan) error {
	for _, p := range plans {
		if p.NotFinished {
			return &NotFinishedError{File: wf.File, Window: p.Window, Loc: wf.Window.Location}
		}
	}
	return nil
}

// CheckFinished refuses a window of a single run that has not ended at now (reconcile's rule).
func CheckFinished(file string, w v1.LogicalWindow, loc *time.Location, now time.Time) error {
	if w.IsZero() || reconcile.Finished(w, now) {
		return nil
	}
	return &NotFinishedError{File: file, Window: w, Loc: loc}
}
