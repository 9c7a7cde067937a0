// Package window lays out the time windows runs are responsible for: half-open intervals
// [start, end) counted in a time zone, so a day runs from one local midnight to the next and a
// clock-change day is 23 or 25 hours long. It parses --window values and the shortcuts
// yesterday, last-week and last-month, fills {window_start:FORMAT} placeholders, and writes
// the SQL that keeps a window's rows.
package window

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Sizes of a window.
const (
	Day     = "day"
	Hour    = "hour"
	Quarter = "15m"
)

// Spec is how a pipeline or a workflow windows its runs.
type Spec struct {
	// Size is day, hour or 15m; "" for no size (an explicit window or a schedule's interval).
	Size string
	// Column selects the rows of a window; "" keeps every row.
	Column string
	// Location counts local midnights and reads timestamps without a zone.
	Location *time.Location
}

// SpecOf reads a spec's window (nil or "none" gives no size and UTC).
func SpecOf(w *v1.Window) (Spec, error) {
	s := Spec{Location: time.UTC}
	if w == nil || w.None {
		return s, nil
	}
	s.Size, s.Column = w.Size, w.Column
	if w.Timezone != "" {
		loc, err := time.LoadLocation(w.Timezone)
		if err != nil {
			return s, fmt.Errorf("window timezone %q: %w", w.Timezone, err)
		}
		s.Location = loc
	}
	return s, nil
}

// Floor returns the start of the window of size that holds t, in loc.
func Floor(t time.Time, size string, loc *time.Location) (time.Time, error) {
	l := t.In(loc)
	switch size {
	case Day:
		return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, loc), nil
	case Hour:
		// Truncating the instant keeps both passes of a repeated hour distinct.
		return l.Add(-time.Duration(l.Minute())*time.Minute - time.Duration(l.Second())*time.Second - time.Duration(l.Nanosecond())), nil
	case Quarter:
		return l.Add(-time.Duration(l.Minute()%15)*time.Minute - time.Duration(l.Second())*time.Second - time.Duration(l.Nanosecond())), nil
	}
	return time.Time{}, fmt.Errorf("unknown window size %q: use day, hour or 15m", size)
}

// Next returns the start of the window after the one that starts at start.
func Next(start time.Time, size string, loc *time.Location) time.Time {
	switch size {
	case Day:
		l := start.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, loc)
	case Hour:
		return start.Add(time.Hour)
	default:
		return start.Add(15 * time.Minute)
	}
}

// Of returns the window of size that holds t.
func Of(t time.Time, size string, loc *time.Location) (v1.LogicalWindow, error) {
	s, err := Floor(t, size, loc)
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	return v1.LogicalWindow{Start: s, End: Next(s, size, loc)}, nil
}

// Range lays windows of size end to end from start to end. Both must start a window.
func Range(start, end time.Time, size string, loc *time.Location) ([]v1.LogicalWindow, error) {
	for _, t := range []time.Time{start, end} {
		f, err := Floor(t, size, loc)
		if err != nil {
			return nil, err
		}
		if !f.Equal(t) {
			return nil, fmt.Errorf("%s does not start a %s window in %s: windows of that size start at %s", t.In(loc).Format(time.RFC3339), size, loc, describeStarts(size))
		}
	}
	var out []v1.LogicalWindow
	for s := start; s.Before(end); s = Next(s, size, loc) {
		out = append(out, v1.LogicalWindow{Start: s, End: Next(s, size, loc)})
	}
	return out, nil
}

func describeStarts(size string) string {
	switch size {
	case Day:
		return "local midnight"
	case Hour:
		return "the top of each hour"
	}
	return "minutes 00, 15, 30 and 45"
}

// Parse reads a --window value: START/END (ISO-8601 dates or times; a value with no offset is
// read in loc), or one of the shortcuts yesterday, last-week (the last full Monday-to-Monday
// week) and last-month, counted from local midnights in loc at now. It also returns what a
// shortcut stands for, for commands to print.
func Parse(s string, loc *time.Location, now time.Time) (v1.LogicalWindow, error) {
	if loc == nil {
		loc = time.UTC
	}
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yesterday":
		return v1.LogicalWindow{Start: today.AddDate(0, 0, -1), End: today}, nil
	case "last-week":
		// Monday is 0 days back on a Monday; Go's Sunday is 0, so shift.
		back := (int(today.Weekday()) + 6) % 7
		monday := today.AddDate(0, 0, -back)
		return v1.LogicalWindow{Start: monday.AddDate(0, 0, -7), End: monday}, nil
	case "last-month":
		first := time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, loc)
		return v1.LogicalWindow{Start: first.AddDate(0, -1, 0), End: first}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	if day, err := time.ParseInLocation(time.DateOnly, strings.TrimSpace(s), loc); !ok && err == nil {
		// A date alone is that day in the spec's zone, as the day's window of a tick is.
		return v1.LogicalWindow{Start: day, End: day.AddDate(0, 0, 1)}, nil
	}
	if !ok {
		return v1.LogicalWindow{}, fmt.Errorf("window %q: write a date (the day in the spec's zone), START/END (ISO-8601, for example 2026-08-01/2026-08-02) or yesterday, last-week or last-month", s)
	}
	start, err := ParseInstant(a, loc)
	if err != nil {
		return v1.LogicalWindow{}, fmt.Errorf("window %q: start: %w", s, err)
	}
	end, err := ParseInstant(b, loc)
	if err != nil {
		return v1.LogicalWindow{}, fmt.Errorf("window %q: end: %w", s, err)
	}
	if !end.After(start) {
		return v1.LogicalWindow{}, fmt.Errorf("window %q: the end must be after the start", s)
	}
	return v1.LogicalWindow{Start: start, End: end}, nil
}

// ParseBound reads a --from or --to value: an ISO-8601 date or time (read in loc when it has
// no offset), or a local midnight counted back from now in loc: today, yesterday, "N days ago"
// or "N weeks ago", as SQLMesh's --start takes them, so a command in a README or a cron line
// need not be edited each day.
func ParseBound(s string, loc *time.Location, now time.Time) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	f := strings.Fields(strings.ToLower(s))
	switch {
	case len(f) == 1 && f[0] == "today":
		return today, nil
	case len(f) == 1 && f[0] == "yesterday":
		return today.AddDate(0, 0, -1), nil
	case len(f) == 3 && f[2] == "ago":
		k, err := strconv.Atoi(f[0])
		if err != nil || k < 0 {
			break
		}
		switch strings.TrimSuffix(f[1], "s") {
		case "day":
			return today.AddDate(0, 0, -k), nil
		case "week":
			return today.AddDate(0, 0, -7*k), nil
		}
	}
	t, err := ParseInstant(s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a date, a time or a day counted back (such as 2026-08-01, 2026-08-01T02:00:00+02:00, today, yesterday, \"7 days ago\" or \"2 weeks ago\")", s)
	}
	return t, nil
}

// ParseInstant reads an ISO-8601 date or date-time; one with no offset is read in loc.
func ParseInstant(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO-8601 date or time (such as 2026-08-01 or 2026-08-01T02:00:00+02:00)", s)
}

// Describe writes a window for people: both bounds in loc, and in UTC when loc is not UTC.
func Describe(w v1.LogicalWindow, loc *time.Location) string {
	if w.IsZero() {
		return "(none)"
	}
	local := w.Start.In(loc).Format("2006-01-02T15:04:05Z07:00") + "/" + w.End.In(loc).Format("2006-01-02T15:04:05Z07:00")
	if loc == time.UTC || loc.String() == "UTC" {
		return w.String()
	}
	return fmt.Sprintf("%s (%s, %s)", w.String(), local, loc)
}

// SecondPass reports whether w lies in the second pass of an hour loc's clock repeats (an
// autumn change), and the instant that pass began: a wall-clock time there is read as its
// first pass (docs/data-plane.md, "Timestamps without a zone"), so such a window keeps no rows
// of a column without a zone.
func SecondPass(w v1.LogicalWindow, loc *time.Location) (time.Time, bool) {
	if loc == nil || w.IsZero() {
		return time.Time{}, false
	}
	change, _ := w.Start.In(loc).ZoneBounds()
	if change.IsZero() {
		return time.Time{}, false
	}
	_, before := change.Add(-time.Second).Zone()
	_, after := change.Zone()
	back := time.Duration(before-after) * time.Second
	return change, back > 0 && !w.Start.Before(change) && !w.End.After(change.Add(back))
}
