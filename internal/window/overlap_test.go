package window

import (
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestOverlapping is the mapping of a dependency across window sizes: how many upstream windows
// a downstream window waits for, and which are first and last, over clock-change days.
func TestOverlapping(t *testing.T) {
	paris, ny, kolkata := zone(t, "Europe/Paris"), zone(t, "America/New_York"), zone(t, "Asia/Kolkata")
	day := func(y int, m time.Month, d int, loc *time.Location) v1.LogicalWindow {
		return v1.LogicalWindow{Start: Midnight(y, m, d, loc), End: Midnight(y, m, d+1, loc)}
	}
	for _, tc := range []struct {
		name        string
		down        v1.LogicalWindow
		size        string
		loc         *time.Location
		n           int
		first, last string // the first and the last window's start, RFC 3339 in loc
	}{
		{"paris day over paris hours, spring forward (23)", day(2026, 3, 29, paris), Hour, paris, 23, "2026-03-29T00:00:00+01:00", "2026-03-29T23:00:00+02:00"},
		{"paris day over paris hours, fall back (25)", day(2026, 10, 25, paris), Hour, paris, 25, "2026-10-25T00:00:00+02:00", "2026-10-25T23:00:00+01:00"},
		{"paris day over paris hours, plain day (24)", day(2026, 6, 15, paris), Hour, paris, 24, "2026-06-15T00:00:00+02:00", "2026-06-15T23:00:00+02:00"},
		{"new york day over new york hours, spring forward (23)", day(2026, 3, 8, ny), Hour, ny, 23, "2026-03-08T00:00:00-05:00", "2026-03-08T23:00:00-04:00"},
		{"new york day over new york hours, fall back (25)", day(2026, 11, 1, ny), Hour, ny, 25, "2026-11-01T00:00:00-04:00", "2026-11-01T23:00:00-05:00"},
		{"new york day over new york quarters, fall back (100)", day(2026, 11, 1, ny), Quarter, ny, 100, "2026-11-01T00:00:00-04:00", "2026-11-01T23:45:00-05:00"},
		{"utc day over kolkata hours: 25, half in at each end", day(2026, 3, 29, time.UTC), Hour, kolkata, 25, "2026-03-29T05:00:00+05:30", "2026-03-30T05:00:00+05:30"},
		{"utc day over utc hours on paris's spring day (24)", day(2026, 3, 29, time.UTC), Hour, time.UTC, 24, "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z"},
		{"paris day over utc hours, spring forward (23)", day(2026, 3, 29, paris), Hour, time.UTC, 23, "2026-03-28T23:00:00Z", "2026-03-29T21:00:00Z"},
		{"paris day over utc days: two", day(2026, 6, 15, paris), Day, time.UTC, 2, "2026-06-14T00:00:00Z", "2026-06-15T00:00:00Z"},
		{"paris hour over paris days: the day it lies in", v1.LogicalWindow{Start: time.Date(2026, 3, 29, 4, 0, 0, 0, paris), End: time.Date(2026, 3, 29, 5, 0, 0, 0, paris)}, Day, paris, 1, "2026-03-29T00:00:00+01:00", "2026-03-29T00:00:00+01:00"},
		{"new york hour over new york days: the repeated 01:00, second pass", v1.LogicalWindow{Start: time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)}, Day, ny, 1, "2026-11-01T00:00:00-04:00", "2026-11-01T00:00:00-04:00"},
		{"paris week over paris days, spring forward week (7)", v1.LogicalWindow{Start: Midnight(2026, 3, 23, paris), End: Midnight(2026, 3, 30, paris)}, Day, paris, 7, "2026-03-23T00:00:00+01:00", "2026-03-29T00:00:00+01:00"},
		{"paris day over paris weeks: the week it lies in", day(2026, 3, 29, paris), Week, paris, 1, "2026-03-23T00:00:00+01:00", "2026-03-23T00:00:00+01:00"},
		{"paris week over paris hours, fall back week (169)", v1.LogicalWindow{Start: Midnight(2026, 10, 19, paris), End: Midnight(2026, 10, 26, paris)}, Hour, paris, 169, "2026-10-19T00:00:00+02:00", "2026-10-25T23:00:00+01:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Overlapping(tc.down, tc.size, tc.loc)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.n {
				t.Fatalf("%d windows, want %d", len(got), tc.n)
			}
			if f := got[0].Start.In(tc.loc).Format(time.RFC3339); f != tc.first {
				t.Errorf("first starts %s, want %s", f, tc.first)
			}
			if l := got[len(got)-1].Start.In(tc.loc).Format(time.RFC3339); l != tc.last {
				t.Errorf("last starts %s, want %s", l, tc.last)
			}
			for i, w := range got {
				if !w.Start.Before(tc.down.End) || !w.End.After(tc.down.Start) {
					t.Errorf("window %d (%s) does not overlap %s", i, w, tc.down)
				}
				if i > 0 && !w.Start.Equal(got[i-1].End) {
					t.Errorf("window %d starts at %s, not where window %d ends (%s)", i, w.Start, i-1, got[i-1].End)
				}
			}
		})
	}
}

func TestOverlappingRefusesAnEmptyWindow(t *testing.T) {
	if _, err := Overlapping(v1.LogicalWindow{}, Hour, time.UTC); err == nil {
		t.Fatal("an empty window overlapped something")
	}
}

func TestWeekWindows(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	// Sunday 29 March 2026 (spring forward) lies in the week from Monday 23 March.
	w, err := Of(time.Date(2026, 3, 29, 12, 0, 0, 0, paris), Week, paris)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Start.In(paris).Format(time.RFC3339)+"/"+w.End.In(paris).Format(time.RFC3339), "2026-03-23T00:00:00+01:00/2026-03-30T00:00:00+02:00"; got != want {
		t.Fatalf("week %s, want %s", got, want)
	}
	if h := w.End.Sub(w.Start); h != 7*24*time.Hour-time.Hour {
		t.Fatalf("the week is %s long, want 167h", h)
	}
}

func TestLabel(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	at := time.Date(2026, 3, 29, 4, 0, 0, 0, paris)
	for _, tc := range []struct{ size, want string }{{Hour, "04:00"}, {Quarter, "04:00"}, {Day, "2026-03-29"}, {Week, "2026-03-29"}} {
		if got := Label(at, tc.size, paris); got != tc.want {
			t.Errorf("Label(%s) = %q, want %q", tc.size, got, tc.want)
		}
	}
	ny := zone(t, "America/New_York")
	first, second := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	if got := Label(first, Hour, ny) + ", " + Label(second, Hour, ny) + ", " + Label(second.Add(time.Hour), Hour, ny); got != "01:00 EDT, 01:00 EST, 02:00" {
		t.Errorf("the repeated hour is labelled %q", got)
	}
	if got := Unit(Hour, 3) + "/" + Unit(Day, 1) + "/" + Unit(Week, 2); got != "hours/day/weeks" {
		t.Errorf("units %q", got)
	}
}
