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
	Week    = "week" // Monday midnight to Monday midnight (ISO weeks), in the zone
	Day     = "day"
	Hour    = "hour"
	Quarter = "15m"
)

// Spec is how a pipeline or a workflow windows its runs.
type Spec struct {
	// Size is week, day, hour or 15m; "" for no size (an explicit window or a schedule's interval).
	Size string
	// Column selects the rows of a window; "" keeps every row.
	Column string
	// Location counts local midnights and reads timestamps without a zone.
	Location *time.Location
	// Delay is how long after its end a window waits for late rows (metadata.window.delay).
	Delay time.Duration
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
	if w.Delay != "" {
		d, err := time.ParseDuration(w.Delay)
		if err != nil || d < 0 {
			return s, fmt.Errorf("window delay %q: want a duration such as \"2h\" or \"90m\"", w.Delay)
		}
		s.Delay = d
	}
	return s, nil
}

// Floor returns the start of the window of size that holds t, in loc.
func Floor(t time.Time, size string, loc *time.Location) (time.Time, error) {
	l := t.In(loc)
	switch size {
	case Week:
		back := (int(l.Weekday()) + 6) % 7 // Monday is 0 days back; Go's Sunday is 0
		return Midnight(l.Year(), l.Month(), l.Day()-back, loc), nil
	case Day:
		return Midnight(l.Year(), l.Month(), l.Day(), loc), nil
	case Hour:
		return floorClock(l, 60), nil
	case Quarter:
		return floorClock(l, 15), nil
	}
	return time.Time{}, fmt.Errorf("unknown window size %q: use week, day, hour or 15m", size)
}

// Midnight is the first instant of local day y-m-d in loc. Where midnight does not exist (a
// clock that springs forward at 00:00, as America/Santiago and America/Havana do) the day
// begins at the first instant after the gap (01:00); a day that a zone skipped whole
// (Pacific/Apia, 30 Dec 2011) begins where the next day does. time.Date alone is wrong here: it
// may put a gap's midnight before the gap, on the day before, and a window that started there
// would end where it starts (and Range would never get past it).
func Midnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC) // normalised: day 32 is the 1st
	l := t.In(loc)
	got := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case got.Before(want):
		// Normalised back before the gap: the day begins where the gap ends.
		_, end := t.ZoneBounds()
		return end
	case l.Hour() != 0 || l.Minute() != 0 || l.Second() != 0 || l.Nanosecond() != 0 || got.After(want):
		// Normalised past the gap: the day begins where the gap ends, which is the start of
		// t's zone period.
		start, _ := t.ZoneBounds()
		return start
	}
	return t
}

// Next returns the start of the window after the one that starts at start.
func Next(start time.Time, size string, loc *time.Location) time.Time {
	switch size {
	case Week:
		l := start.In(loc)
		return Midnight(l.Year(), l.Month(), l.Day()+7, loc)
	case Day:
		l := start.In(loc)
		return Midnight(l.Year(), l.Month(), l.Day()+1, loc)
	case Hour:
		return nextClock(start, time.Hour, 60, loc)
	default:
		return nextClock(start, 15*time.Minute, 15, loc)
	}
}

// floorClock is the start of the window of every minutes that holds l (in its zone): the last
// local time whose minutes are a multiple of every, or the clock change after it when the
// clock changed since by other than a multiple (Australia/Lord_Howe moves 30 minutes, so the
// hour after its change is 30 minutes long). Truncating the instant, not the wall time, keeps
// both passes of a repeated hour distinct.
func floorClock(l time.Time, every int) time.Time {
	c := l.Add(-time.Duration(l.Minute()%every)*time.Minute - time.Duration(l.Second())*time.Second - time.Duration(l.Nanosecond()))
	_, off := l.Zone()
	if _, coff := c.Zone(); coff == off {
		return c
	}
	// The clock changed between c and l: the window starts at the change. Go's zone periods
	// from a POSIX rule also end at each year's end, where the offset does not change: go
	// back past those.
	start, _ := l.ZoneBounds()
	for start.After(c) {
		before := start.Add(-time.Nanosecond)
		if _, boff := before.Zone(); boff != off {
			return start
		}
		start, _ = before.ZoneBounds()
	}
	return c
}

// nextClock is the start of the window of every minutes after the one that starts at start:
// step later, or the clock change within the step where the clock moved by other than a
// multiple of the size.
func nextClock(start time.Time, step time.Duration, every int, loc *time.Location) time.Time {
	n := start.Add(step)
	if f := floorClock(n.In(loc), every); f.After(start) {
		return f
	}
	return n
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
	return lay(start, end, size, loc)
}

// lay lays windows of size end to end from start, which starts one, until one reaches end (the
// last may end past it): the one loop of Range and Overlapping.
func lay(start, end time.Time, size string, loc *time.Location) ([]v1.LogicalWindow, error) {
	var out []v1.LogicalWindow
	for s := start; s.Before(end); {
		next := Next(s, size, loc)
		if !next.After(s) {
			// Never loop (and grow out) forever on a window that does not advance.
			return nil, fmt.Errorf("the %s window that starts at %s in %s does not end after it starts: this is a bug in ldp, please report it", size, s.Format(time.RFC3339), loc)
		}
		out = append(out, v1.LogicalWindow{Start: s, End: next})
		s = next
	}
	return out, nil
}

func describeStarts(size string) string {
	switch size {
	case Week:
		return "local midnight on Mondays"
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
	today := Midnight(n.Year(), n.Month(), n.Day(), loc)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yesterday":
		return v1.LogicalWindow{Start: Midnight(n.Year(), n.Month(), n.Day()-1, loc), End: today}, nil
	case "last-week":
		// Monday is 0 days back on a Monday; Go's Sunday is 0, so shift.
		back := (int(n.Weekday()) + 6) % 7
		return v1.LogicalWindow{Start: Midnight(n.Year(), n.Month(), n.Day()-back-7, loc), End: Midnight(n.Year(), n.Month(), n.Day()-back, loc)}, nil
	case "last-month":
		return v1.LogicalWindow{Start: Midnight(n.Year(), n.Month()-1, 1, loc), End: Midnight(n.Year(), n.Month(), 1, loc)}, nil
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
	today := Midnight(n.Year(), n.Month(), n.Day(), loc)
	f := strings.Fields(strings.ToLower(s))
	switch {
	case len(f) == 1 && f[0] == "today":
		return today, nil
	case len(f) == 1 && f[0] == "yesterday":
		return Midnight(n.Year(), n.Month(), n.Day()-1, loc), nil
	case len(f) == 3 && f[2] == "ago":
		k, err := strconv.Atoi(f[0])
		if err != nil || k < 0 {
			break
		}
		switch strings.TrimSuffix(f[1], "s") {
		case "day":
			return Midnight(n.Year(), n.Month(), n.Day()-k, loc), nil
		case "week":
			return Midnight(n.Year(), n.Month(), n.Day()-7*k, loc), nil
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
	if d, err := time.Parse("2006-01-02", s); err == nil {
		// A date is the day's first instant, which is not 00:00 where midnight is in a gap.
		return Midnight(d.Year(), d.Month(), d.Day(), loc), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
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
