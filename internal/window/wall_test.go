package window

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// TestEveryWallClockTimeInOneWindow: around both 2026 clock changes of three zones (one with a
// half-hour change), every wall-clock time every 5 minutes (and the last microsecond of each
// hour) is kept by exactly one window of each size, as DuckDB evaluates Filter's conditions,
// and that window holds the instant Instant reads it as; InstantSQL agrees with Instant. The
// repeated hour's rows were kept by both of its passes (12 rows loaded as 15).
func TestEveryWallClockTimeInOneWindow(t *testing.T) {
	ctx := context.Background()
	db, err := engine.OpenPrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct{ zone, day string }{
		{"Europe/Paris", "2026-10-25"}, {"Europe/Paris", "2026-03-29"},
		{"America/New_York", "2026-11-01"}, {"America/New_York", "2026-03-08"},
		{"Australia/Lord_Howe", "2026-04-05"}, {"Australia/Lord_Howe", "2026-10-04"},
	}
	for _, c := range cases {
		loc := zone(t, c.zone)
		d, _ := time.Parse("2006-01-02", c.day)
		var walls []time.Time
		for n := d.AddDate(0, 0, -1); n.Before(d.AddDate(0, 0, 2)); n = n.Add(5 * time.Minute) {
			walls = append(walls, n)
			if n.Minute() == 55 {
				walls = append(walls, n.Add(5*time.Minute-time.Microsecond))
			}
		}
		var vals []string
		for _, n := range walls {
			vals = append(vals, "(TIMESTAMP '"+n.Format("2006-01-02 15:04:05.999999")+"')")
		}
		if err := db.Exec(ctx, "CREATE OR REPLACE TABLE walls AS SELECT * FROM (VALUES "+strings.Join(vals, ", ")+") v(n)"); err != nil {
			t.Fatal(err)
		}
		// DuckDB's reading of each wall-clock time by InstantSQL, against Go's.
		_, rows, err := db.Rows(ctx, "SELECT strftime(n, '%Y-%m-%d %H:%M:%S.%f'), epoch_us("+InstantSQL("n", loc)+") FROM walls ORDER BY n")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			n, _ := time.Parse("2006-01-02 15:04:05.000000", r[0].(string))
			if got, want := time.UnixMicro(r[1].(int64)).UTC(), Instant(n, loc); !got.Equal(want) {
				t.Errorf("%s %s: InstantSQL reads %s, Instant %s", c.zone, r[0], got, want)
			}
		}
		for _, size := range []string{Quarter, Hour, Day} {
			start := time.Date(d.Year(), d.Month(), d.Day()-2, 0, 0, 0, 0, loc)
			ws, err := Range(start, time.Date(d.Year(), d.Month(), d.Day()+3, 0, 0, 0, 0, loc), size, loc)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for i, w := range ws {
				f, err := Filter("n", "TIMESTAMP", w, loc)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, fmt.Sprintf("SELECT n, %d AS w FROM walls WHERE %s", i, f))
			}
			_, rows, err := db.Rows(ctx, "SELECT strftime(n, '%Y-%m-%d %H:%M:%S.%f'), list(w ORDER BY w)::VARCHAR FROM ("+strings.Join(parts, " UNION ALL ")+") GROUP BY n")
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, r := range rows {
				got[r[0].(string)] = r[1].(string)
			}
			for _, n := range walls {
				key := n.Format("2006-01-02 15:04:05.000000")
				in := Instant(n, loc)
				want := -1
				for i, w := range ws {
					if !in.Before(w.Start) && in.Before(w.End) {
						want = i
					}
				}
				if got[key] != fmt.Sprintf("[%d]", want) {
					t.Errorf("%s %s windows: wall-clock %s (%s) is kept by windows %q, want [%d] (%s)", c.zone, size, key, in.Format(time.RFC3339), got[key], want, ws[max(want, 0)])
				}
			}
		}
	}
}

// TestRepeatedHourIsItsFirstPass: the rule, spelled out for Paris.
func TestRepeatedHourIsItsFirstPass(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	for wall, want := range map[string]string{
		"2026-10-25 01:59:00": "2026-10-24T23:59:00Z",
		"2026-10-25 02:00:00": "2026-10-25T00:00:00Z", // first pass (+02:00), not 01:00Z
		"2026-10-25 02:30:00": "2026-10-25T00:30:00Z",
		"2026-10-25 03:00:00": "2026-10-25T02:00:00Z",
		"2026-03-29 01:59:00": "2026-03-29T00:59:00Z",
		"2026-03-29 02:30:00": "2026-03-29T01:30:00Z", // skipped: read at +01:00, i.e. 03:30 summer time
		"2026-03-29 03:00:00": "2026-03-29T01:00:00Z",
		"2026-08-01 12:00:00": "2026-08-01T10:00:00Z",
	} {
		n, _ := time.Parse("2006-01-02 15:04:05", wall)
		if got := Instant(n, paris).Format(time.RFC3339); got != want {
			t.Errorf("Instant(%s) = %s, want %s", wall, got, want)
		}
	}
	// The second pass's windows keep no wall-clock time; the first pass's keep the hour.
	second := v1.LogicalWindow{Start: utc("2026-10-25T01:00:00Z"), End: utc("2026-10-25T01:15:00Z")}
	if f, _ := Filter("ts", "TIMESTAMP", second, paris); f != "false" {
		t.Errorf("second pass 02:00-02:15 CET: %s, want false", f)
	}
	first := v1.LogicalWindow{Start: utc("2026-10-25T00:00:00Z"), End: utc("2026-10-25T00:15:00Z")}
	if f, _ := Filter("ts", "TIMESTAMP", first, paris); f != `("ts" >= TIMESTAMP '2026-10-25 02:00:00' AND "ts" < TIMESTAMP '2026-10-25 02:15:00')` {
		t.Errorf("first pass 02:00-02:15 CEST: %s", f)
	}
}

// TestInstantPastTheListedTransitions: past the tz database's listed transitions Go's
// ZoneBounds can answer an end before the time asked (Africa/Cairo on 31 Dec 2040), and the
// walk of periods never ended. Every zone, around each year's end from 2036 to 2044: Instant
// returns, and away from a clock change it is the wall-clock time read back.
func TestInstantPastTheListedTransitions(t *testing.T) {
	for _, name := range zoneNames(t) {
		loc, _ := time.LoadLocation(name)
		for y := 2036; y <= 2044; y++ {
			for _, wall := range []time.Time{time.Date(y, 12, 31, 22, 0, 0, 0, time.UTC), time.Date(y, 1, 1, 0, 30, 0, 0, time.UTC), time.Date(y, 1, 1, 2, 0, 0, 0, time.UTC)} {
				done := make(chan time.Time, 1)
				go func() { done <- Instant(wall, loc) }()
				var got time.Time
				select {
				case got = <-done:
				case <-time.After(time.Minute):
					t.Fatalf("%s: Instant(%s) did not return", name, wall.Format("2006-01-02 15:04"))
				}
				_, before := got.Add(-3 * time.Hour).In(loc).Zone()
				_, after := got.Add(3 * time.Hour).In(loc).Zone()
				if back := got.In(loc).Format("2006-01-02 15:04"); before == after && back != wall.Format("2006-01-02 15:04") {
					t.Errorf("%s: Instant(%s) = %s, which reads back as %s", name, wall.Format("2006-01-02 15:04"), got, back)
				}
			}
		}
	}
}
