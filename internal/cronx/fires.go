package cronx

import (
	"fmt"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
)

// starBit marks a field written as * in robfig's bit sets.
const starBit = 1 << 63

// Fires returns the fires of spec in (after, until], read in loc, in time order, with the
// contract's rules for clock changes (robfig's Next skips a fixed time in a spring-forward gap
// and fires a repeated fixed time twice, measured):
//   - a fixed time in a gap fires at the end of the gap (30 2 * * * fires at 03:00 on the
//     spring-forward day in Paris);
//   - a fixed time that happens twice fires once, at its first time;
//   - a time whose hour is * (0 * * * *) fires in both passes of the repeated hour.
func Fires(spec *cron.SpecSchedule, after, until time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	seen := map[int64]bool{}
	start := after.In(loc)
	day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	last := until.In(loc)
	end := time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, time.UTC)
	for ; !day.After(end); day = day.AddDate(0, 0, 1) {
		for _, t := range firesOnDay(spec, day.Year(), day.Month(), day.Day(), loc) {
			if t.After(after) && !t.After(until) && !seen[t.UnixNano()] {
				seen[t.UnixNano()] = true
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// firesOnDay lists the fires of one local calendar day.
func firesOnDay(s *cron.SpecSchedule, y int, m time.Month, d int, loc *time.Location) []time.Time {
	if 1<<uint(m)&s.Month == 0 {
		return nil
	}
	noon := time.Date(y, m, d, 12, 0, 0, 0, loc)
	domMatch := 1<<uint(d)&s.Dom > 0
	dowMatch := 1<<uint(noon.Weekday())&s.Dow > 0
	if s.Dom&starBit > 0 || s.Dow&starBit > 0 {
		if !(domMatch && dowMatch) {
			return nil
		}
	} else if !(domMatch || dowMatch) {
		return nil
	}
	starHour := s.Hour&starBit > 0
	var out []time.Time
	for h := 0; h < 24; h++ {
		if 1<<uint(h)&s.Hour == 0 {
			continue
		}
		for mi := 0; mi < 60; mi++ {
			if 1<<uint(mi)&s.Minute == 0 {
				continue
			}
			out = append(out, wallTimes(y, m, d, h, mi, loc, starHour)...)
		}
	}
	return out
}

// wallTimes returns the instants a local wall time stands for: none would be wrong for a gap
// (it fires at the gap's end), both passes of a repeated time when the hour is *, else the
// first.
func wallTimes(y int, m time.Month, d, h, mi int, loc *time.Location, both bool) []time.Time {
	t := time.Date(y, m, d, h, mi, 0, 0, loc)
	if t.Hour() != h || t.Minute() != mi || t.Day() != d {
		// In a spring-forward gap. Go normalised the time to one side of it (which side is not
		// specified); the transition next to it is where the gap ends, and that is the fire.
		start, end := t.ZoneBounds()
		for _, b := range []time.Time{start, end} {
			if !b.IsZero() && b.Sub(t).Abs() <= 3*time.Hour {
				return []time.Time{b}
			}
		}
		return nil
	}
	var out []time.Time
	for _, c := range []time.Time{t.Add(-time.Hour), t, t.Add(time.Hour)} {
		l := c.In(loc)
		if l.Year() == y && l.Month() == m && l.Day() == d && l.Hour() == h && l.Minute() == mi {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	if !both && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// Latest returns the latest fire of spec at or before now, read in loc, looking back at most
// 400 days.
func Latest(spec *cron.SpecSchedule, now time.Time, loc *time.Location) (time.Time, error) {
	for back := 1; back <= 400; back *= 2 {
		fires := Fires(spec, now.Add(-time.Duration(back)*24*time.Hour), now, loc)
		if len(fires) > 0 {
			return fires[len(fires)-1], nil
		}
	}
	return time.Time{}, fmt.Errorf("the schedule has no fire in the 400 days before %s", now.UTC().Format(time.RFC3339))
}

// Previous returns the fire before fire.
func Previous(spec *cron.SpecSchedule, fire time.Time, loc *time.Location) (time.Time, error) {
	return Latest(spec, fire.Add(-time.Nanosecond), loc)
}

// Next returns the first fire after t.
func Next(spec *cron.SpecSchedule, t time.Time, loc *time.Location) (time.Time, error) {
	for ahead := 1; ahead <= 800; ahead *= 2 {
		fires := Fires(spec, t, t.Add(time.Duration(ahead)*24*time.Hour), loc)
		if len(fires) > 0 {
			return fires[0], nil
		}
	}
	return time.Time{}, fmt.Errorf("the schedule has no fire in the 800 days after %s", t.UTC().Format(time.RFC3339))
}
