package window

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ldp-dev/ldp/internal/engine"
)

// A timestamp without a zone (a wall-clock time) is read in the window's zone as the instant
// the clock showed it. A clock change makes some wall-clock times ambiguous or nonexistent;
// each is read with the offset in force before the change:
//
//   - in the hour an autumn change repeats, the first pass (Europe/Paris 02:30 on the autumn
//     day is 02:30 summer time, 00:30 UTC), as Python reads it (fold=0) and as a schedule
//     fires a repeated time once, the first; the windows of the second pass hold no
//     wall-clock time;
//   - in the hour a spring change skips, the time the clock would have shown had it not moved
//     (Paris 02:30 on the spring day is 03:30 summer time, 01:30 UTC).
//
// So every wall-clock time maps to exactly one instant, hence to exactly one window of any
// size. Go's time.Date leaves the choice open and DuckDB's timezone() takes the second pass,
// so the rule is written out here, once in Go (Instant, and the bounds Filter compares
// wall-clock values with) and once in SQL (InstantSQL); a test holds the two together.

// period is a stretch of a zone's history at one offset, and the wall-clock times it owns.
type period struct {
	off time.Duration
	// lo and hi bound the wall-clock times (as UTC fields) read in this period, [lo, hi); a
	// zero time is unbounded.
	lo, hi time.Time
}

// periods are the stretches of loc's offsets that cover the instants [from, to).
func periods(loc *time.Location, from, to time.Time) []period {
	offset := func(t time.Time) time.Duration {
		_, o := t.In(loc).Zone()
		return time.Duration(o) * time.Second
	}
	var out []period
	t := from
	for {
		start, end := t.In(loc).ZoneBounds()
		if !end.IsZero() && !end.After(t) {
			// Go's ZoneBounds can answer an end at or before t past the tz database's listed
			// transitions (Africa/Cairo on 31 Dec 2040), and the walk never moved on.
			end = nextChange(t, to, offset)
		}
		p := period{off: offset(t)}
		if !start.IsZero() {
			p.lo = start.UTC().Add(max(offset(start.Add(-time.Nanosecond)), p.off))
		}
		if !end.IsZero() {
			p.hi = end.UTC().Add(max(p.off, offset(end)))
		}
		out = append(out, p)
		if end.IsZero() || !end.Before(to) {
			return out
		}
		t = end
	}
}

// nextChange is the first instant after t, up to to, at which offset differs from offset(t)
// (zero if none), found by stepping and then halving: for when ZoneBounds cannot be trusted.
func nextChange(t, to time.Time, offset func(time.Time) time.Duration) time.Time {
	const step = 15 * time.Minute
	off := offset(t)
	for lo := t; lo.Before(to); lo = lo.Add(step) {
		hi := lo.Add(step)
		if offset(hi) == off {
			continue
		}
		for hi.Sub(lo) > time.Nanosecond {
			mid := lo.Add(hi.Sub(lo) / 2)
			if offset(mid) == off {
				lo = mid
			} else {
				hi = mid
			}
		}
		return hi
	}
	return time.Time{}
}

// margin widens the stretch of history looked at around a window: offsets differ from UTC by
// less than a day, so a wall-clock time that maps into a window lies within a day of it.
const margin = 48 * time.Hour

// Instant is the instant the wall-clock time wall (its fields; its location is ignored) stands
// for in loc, by the rule above.
func Instant(wall time.Time, loc *time.Location) time.Time {
	n := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	for _, p := range periods(loc, n.Add(-margin), n.Add(margin)) {
		if (p.lo.IsZero() || !n.Before(p.lo)) && (p.hi.IsZero() || n.Before(p.hi)) {
			return n.Add(-p.off)
		}
	}
	return n // not reached: the periods own every wall-clock time
}

// wallRanges are the wall-clock times (as UTC fields) whose instants lie in w: no range for
// the second pass of a repeated hour, two for a window just after a spring change.
func wallRanges(w [2]time.Time, loc *time.Location) [][2]time.Time {
	var out [][2]time.Time
	for _, p := range periods(loc, w[0].Add(-margin), w[1].Add(margin)) {
		lo, hi := w[0].UTC().Add(p.off), w[1].UTC().Add(p.off)
		if !p.lo.IsZero() && lo.Before(p.lo) {
			lo = p.lo
		}
		if !p.hi.IsZero() && hi.After(p.hi) {
			hi = p.hi
		}
		if lo.Before(hi) {
			out = append(out, [2]time.Time{lo, hi})
		}
	}
	slices.SortFunc(out, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var merged [][2]time.Time
	for _, r := range out {
		if n := len(merged); n > 0 && !r[0].After(merged[n-1][1]) {
			if r[1].After(merged[n-1][1]) {
				merged[n-1][1] = r[1]
			}
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// wallFilter is the condition that keeps the rows whose wall-clock column c stands for an
// instant of w in loc: plain comparisons of the column (which Parquet statistics can skip
// files by), away from a clock change the window's own wall-clock bounds.
func wallFilter(c string, w [2]time.Time, loc *time.Location) string {
	rs := wallRanges(w, loc)
	if len(rs) == 0 {
		return "false"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s >= TIMESTAMP %s AND %s < TIMESTAMP %s", c, engine.Lit(r[0].Format("2006-01-02 15:04:05.999999")), c, engine.Lit(r[1].Format("2006-01-02 15:04:05.999999")))
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ")"
	}
	return "((" + strings.Join(parts, ") OR (") + "))"
}

// InstantSQL is the DuckDB expression (a TIMESTAMPTZ) of the instant the TIMESTAMP expression
// expr stands for in loc, by the rule above. DuckDB's timezone() reads a repeated time as its
// second pass; where it does, the first pass (the time read with the offset of three hours
// earlier) is taken instead, if it reads back as the same wall-clock time.
func InstantSQL(expr string, loc *time.Location) string {
	z := engine.Lit(loc.String())
	if loc == time.UTC {
		return "timezone('UTC', " + expr + ")"
	}
	a := fmt.Sprintf("timezone(%s, %s)", z, expr)
	before := a + " - INTERVAL 3 HOUR"
	off := fmt.Sprintf("(timezone(%s, %s) - timezone('UTC', %s))", z, before, before)
	b := fmt.Sprintf("timezone('UTC', %s - %s)", expr, off)
	return fmt.Sprintf("(CASE WHEN %[2]s < %[1]s AND timezone(%[3]s, %[2]s) = %[4]s THEN %[2]s ELSE %[1]s END)", a, b, z, expr)
}

// WallSQL is the DuckDB expression (a TIMESTAMP) of the wall-clock time the TIMESTAMPTZ
// expression expr shows in loc: how an instant is written into a column without a zone.
func WallSQL(expr string, loc *time.Location) string {
	return fmt.Sprintf("timezone(%s, %s)", engine.Lit(loc.String()), expr)
}
