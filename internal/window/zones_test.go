package window

import (
	"archive/zip"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// zoneNames lists the zones of the tz database: the files of /usr/share/zoneinfo, else those
// of Go's own zoneinfo.zip. Both hold non-zone files (zone1970.tab, leapseconds, the posix/
// and right/ copies); a name is kept only when time.LoadLocation takes it.
func zoneNames(t *testing.T) []string {
	t.Helper()
	var names []string
	keep := func(name string) {
		first := strings.Split(name, "/")[0]
		if first == "posix" || first == "right" || first == "Etc" || strings.ContainsAny(name, ".") || strings.ToLower(name) == name {
			return // copies, fixed offsets (no clock change to test) and index files
		}
		if _, err := time.LoadLocation(name); err == nil {
			names = append(names, name)
		}
	}
	root := "/usr/share/zoneinfo"
	if _, err := os.Stat(filepath.Join(root, "zone1970.tab")); err == nil {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, path)
				keep(filepath.ToSlash(rel))
			}
			return nil
		})
	} else if z, err := zip.OpenReader(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")); err == nil {
		defer z.Close()
		for _, f := range z.File {
			keep(f.Name)
		}
	}
	if len(names) < 300 {
		t.Fatalf("found %d zones of the tz database (in /usr/share/zoneinfo or Go's zoneinfo.zip), want the whole database", len(names))
	}
	return names
}

// checkLaid fails unless ws are the windows of size laid from start to end in loc: non-empty,
// contiguous, strictly increasing, each the window Of its own start (the scheduler's window).
func checkLaid(t *testing.T, name, size string, loc *time.Location, start, end time.Time, ws []v1.LogicalWindow) bool {
	t.Helper()
	if len(ws) == 0 || !ws[0].Start.Equal(start) || !ws[len(ws)-1].End.Equal(end) {
		t.Errorf("%s %s windows from %s to %s: %d windows, want them to run from start to end", name, size, start, end, len(ws))
		return false
	}
	for i, w := range ws {
		if !w.End.After(w.Start) || (i > 0 && !w.Start.Equal(ws[i-1].End)) {
			t.Errorf("%s %s window %d %s: want non-empty and starting where window %d ends", name, size, i, Describe(w, loc), i-1)
			return false
		}
		// Only days that are not 24 hours long need the slower check of the scheduler's window.
		if size != Day || w.End.Sub(w.Start) != 24*time.Hour {
			if of, err := Of(w.Start, size, loc); err != nil || of != w {
				t.Errorf("%s %s window %s: the window Of its start is %s (%v)", name, size, Describe(w, loc), Describe(of, loc), err)
				return false
			}
		}
	}
	return true
}

// TestWindowsOverEveryZone lays windows of every size over every zone of the tz database
// across 2000-2040. Days run over the whole span; hours and quarters over the two days each
// side of every clock change of a zone in that span (between clock changes they are fixed
// lengths of time), which keeps the test to seconds.
func TestWindowsOverEveryZone(t *testing.T) {
	from, to := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2041, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range zoneNames(t) {
		loc, _ := time.LoadLocation(name)
		start, end := Midnight(2000, 1, 1, loc), Midnight(2041, 1, 1, loc)
		ws, err := Range(start, end, Day, loc)
		if err != nil {
			t.Errorf("%s days: %v", name, err)
			continue
		}
		if !checkLaid(t, name, Day, loc, start, end, ws) {
			continue
		}
		for at := from; at.Before(to); {
			_, change := at.In(loc).ZoneBounds()
			if change.IsZero() || !change.Before(to) {
				break
			}
			if !change.After(at) {
				// Go's periods from a zone's POSIX rule also end at each year's end, where
				// ZoneBounds can return at itself: step past it.
				at = at.Add(time.Second)
				continue
			}
			_, before := change.Add(-time.Second).In(loc).Zone()
			if _, after := change.In(loc).Zone(); before == after {
				at = change
				continue // not a clock change
			}
			for _, size := range []string{Hour, Quarter} {
				s, _ := Floor(change.Add(-48*time.Hour), size, loc)
				e, _ := Floor(change.Add(48*time.Hour), size, loc)
				ws, err := Range(s, e, size, loc)
				if err != nil {
					t.Errorf("%s %s windows around %s: %v", name, size, change, err)
					continue
				}
				checkLaid(t, name, size, loc, s, e, ws)
			}
			at = change
		}
	}
}

// TestDayWhoseMidnightIsInAGap: where clocks spring forward at midnight the day begins at
// 01:00, and a range over that day ends (it used to loop on 5 Sep until memory ran out).
func TestDayWhoseMidnightIsInAGap(t *testing.T) {
	cases := []struct {
		zone, from, to string
		want           []string
	}{
		{"America/Santiago", "2026-09-05", "2026-09-08", []string{
			"2026-09-05T04:00:00Z/2026-09-06T04:00:00Z", // 00:00 -04 to 01:00 -03: 23 hours
			"2026-09-06T04:00:00Z/2026-09-07T03:00:00Z",
			"2026-09-07T03:00:00Z/2026-09-08T03:00:00Z",
		}},
		{"America/Havana", "2026-03-07", "2026-03-09", []string{
			"2026-03-07T05:00:00Z/2026-03-08T05:00:00Z",
			"2026-03-08T05:00:00Z/2026-03-09T04:00:00Z",
		}},
		// Samoa skipped 30 Dec 2011: 29 Dec ends where 31 Dec begins.
		{"Pacific/Apia", "2011-12-29", "2012-01-01", []string{
			"2011-12-29T10:00:00Z/2011-12-30T10:00:00Z",
			"2011-12-30T10:00:00Z/2011-12-31T10:00:00Z",
		}},
	}
	for _, c := range cases {
		loc := zone(t, c.zone)
		from, err := ParseBound(c.from, loc, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		to, err := ParseBound(c.to, loc, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := Range(from, to, Day, loc)
		if err != nil {
			t.Fatalf("%s: %v", c.zone, err)
		}
		var got []string
		for _, w := range ws {
			got = append(got, w.String())
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s days %s to %s:\n got %v\nwant %v", c.zone, c.from, c.to, got, c.want)
		}
		// The window a tick takes for a time on the gap day is that day, not an empty one.
		w, err := Of(ws[1].Start.Add(time.Hour), Day, loc)
		if err != nil || w.String() != c.want[1] {
			t.Errorf("%s: the day of %s is %s (%v), want %s", c.zone, ws[1].Start.Add(time.Hour), w, err, c.want[1])
		}
	}
}
