package controllers

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/window"
)

// Size is the window size of a workflow: metadata.window.size, else the one its schedule means
// (@hourly and 0 * * * * an hour, @daily and 0 0 * * * a day); "" when neither says.
func (w *Object) Size() string {
	if w.Window.Size != "" {
		return w.Window.Size
	}
	switch strings.Join(strings.Fields(w.Schedule), " ") {
	case "@hourly", "0 * * * *":
		return window.Hour
	case "@daily", "0 0 * * *":
		return window.Day
	}
	return ""
}

// Desired is where the windows of a plan come from: one window, a range, or the schedule at now.
type Desired struct {
	Window   string
	From, To string
	Now      time.Time
}

// Windows returns the windows wf should have.
func (d Desired) Windows(wf *Object) ([]v1.LogicalWindow, error) {
	loc := wf.Window.Location
	switch {
	case d.Window != "":
		w, err := window.Parse(d.Window, loc, d.Now)
		if err != nil {
			return nil, &ldperr.ConfigError{Msg: "--window", Err: err}
		}
		return []v1.LogicalWindow{w}, nil
	case d.From != "":
		size := wf.Size()
		if size == "" {
			return nil, ldperr.Configf(wf.File, "a range needs a window size: set metadata.window.size (week, day, hour or 15m); the schedule %q does not say how long a window is", wf.Schedule)
		}
		start, err := window.ParseBound(d.From, loc, d.Now)
		if err != nil {
			return nil, &ldperr.ConfigError{Msg: "--from", Err: err}
		}
		var end time.Time
		if d.To != "" {
			if end, err = window.ParseBound(d.To, loc, d.Now); err != nil {
				return nil, &ldperr.ConfigError{Msg: "--to", Err: err}
			}
		} else if end, err = window.Floor(d.Now, size, loc); err != nil {
			return nil, err
		}
		ws, err := window.Range(start, end, size, loc)
		if err != nil {
			return nil, &ldperr.ConfigError{Err: err}
		}
		return ws, nil
	}
	if wf.Schedule == "" {
		return nil, ldperr.Configf(wf.File, "has no schedule, so no window is due: pass --window or --from")
	}
	return DueWindows(Scheduled{Path: wf.File, WF: wf, Catchup: wf.Catchup, Start: wf.Start}, d.Now)
}

// DueWindow is the window the latest fire of wf's schedule at or before now owns: with a window
// size, the last complete window of that size ending at or before the fire; without one, the
// interval from the previous fire to this one.
func DueWindow(wf *Object, now time.Time) (v1.LogicalWindow, error) {
	spec, err := wf.Cron()
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	loc := wf.Window.Location
	fire, err := cronx.Latest(spec, now, loc)
	if err != nil {
		return v1.LogicalWindow{}, fmt.Errorf("%s: %w", wf.File, err)
	}
	return WindowOfFire(wf, fire)
}
