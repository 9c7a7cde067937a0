package window

import (
	"fmt"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Overlapping is the mapping of a dependency across window sizes: the windows of size, laid in
// loc, that overlap w (each shares at least an instant with it), in time order. It is the one
// rule every size pair follows, each side counted in its own zone:
//
//   - coarse on fine: a day over hours is every hour of that day, 24, or 23 and 25 on the
//     zone's clock-change days; a week over days is its seven days.
//   - fine on coarse: an hour over days is the one day it lies in.
//   - across zones: a day in UTC over hours in Asia/Kolkata (UTC+05:30) is the 25 hours that
//     overlap it, the first and last of them half inside the day, because the rows of those
//     half hours are in the day too: a window waits for every upstream window that may hold its
//     rows, never only those wholly inside it.
func Overlapping(w v1.LogicalWindow, size string, loc *time.Location) ([]v1.LogicalWindow, error) {
	if w.IsZero() || !w.End.After(w.Start) {
		return nil, fmt.Errorf("window %s is empty: it overlaps no window", w)
	}
	if loc == nil {
		loc = time.UTC
	}
	s, err := Floor(w.Start, size, loc)
	if err != nil {
		return nil, err
	}
	return lay(s, w.End, size, loc)
}

// Unit is how people count windows of size: "hours" of an hourly object, "days" of a daily one.
func Unit(size string, n int) string {
	one, many := "window", "windows"
	switch size {
	case Week:
		one, many = "week", "weeks"
	case Day:
		one, many = "day", "days"
	case Hour:
		one, many = "hour", "hours"
	case Quarter:
		one, many = "quarter hour", "quarter hours"
	}
	if n == 1 {
		return one
	}
	return many
}

// Label is how a window of size starting at start is named among others of one downstream
// window, in loc: an hour or a quarter by its local clock time (04:00), a day or a week by its
// local date (2026-03-29).
func Label(start time.Time, size string, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	l := start.In(loc)
	switch size {
	case Hour, Quarter:
		// A clock time the zone passes twice (an autumn change) is named with its zone's
		// abbreviation, so the two passes read apart: 01:00 EDT, 01:00 EST.
		clock := l.Format("15:04")
		for _, d := range []time.Duration{-time.Hour, time.Hour} {
			if start.Add(d).In(loc).Format("15:04") == clock {
				return l.Format("15:04 MST")
			}
		}
		return clock
	}
	return l.Format(time.DateOnly)
}
