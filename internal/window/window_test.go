package window

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestDaysAcrossClockChanges: a day runs between local midnights, so the 2026 clock-change
// days are 23 and 25 hours long. The Paris rows are the windows of the shared key vectors.
func TestDaysAcrossClockChanges(t *testing.T) {
	cases := []struct {
		zone, day, start, end string
		hours                 float64
	}{
		{"Europe/Paris", "2026-08-02T12:00:00Z", "2026-08-01T22:00:00Z", "2026-08-02T22:00:00Z", 24},
		{"Europe/Paris", "2026-03-29T12:00:00Z", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 23},
		{"Europe/Paris", "2026-10-25T12:00:00Z", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 25},
		{"America/New_York", "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z", 23},
		{"America/New_York", "2026-11-01T12:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z", 25},
		{"UTC", "2026-09-01T12:00:00Z", "2026-09-01T00:00:00Z", "2026-09-02T00:00:00Z", 24},
	}
	for _, c := range cases {
		w, err := Of(utc(c.day), Day, zone(t, c.zone))
		if err != nil {
			t.Fatal(err)
		}
		if !w.Start.Equal(utc(c.start)) || !w.End.Equal(utc(c.end)) || w.End.Sub(w.Start).Hours() != c.hours {
			t.Errorf("%s day of %s = %s, want %s/%s (%vh)", c.zone, c.day, w, c.start, c.end, c.hours)
		}
	}
}

func TestRangeLaysWindowsEndToEnd(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	start := time.Date(2026, 3, 28, 0, 0, 0, 0, paris)
	end := time.Date(2026, 3, 31, 0, 0, 0, 0, paris)
	ws, err := Range(start, end, Day, paris)
	if err != nil {
		t.Fatal(err)
	}
	var hours []float64
	for i, w := range ws {
		hours = append(hours, w.End.Sub(w.Start).Hours())
		if i > 0 && !ws[i-1].End.Equal(w.Start) {
			t.Errorf("gap between %s and %s", ws[i-1], w)
		}
	}
	if len(ws) != 3 || hours[0] != 24 || hours[1] != 23 || hours[2] != 24 {
		t.Errorf("windows %v hours %v", ws, hours)
	}
	// Hours across New York's fall back: 25 one-hour windows in the local day.
	ny := zone(t, "America/New_York")
	hs, err := Range(time.Date(2026, 11, 1, 0, 0, 0, 0, ny), time.Date(2026, 11, 2, 0, 0, 0, 0, ny), Hour, ny)
	if err != nil || len(hs) != 25 {
		t.Errorf("hours of 2026-11-01 in New York: %d, %v; want 25", len(hs), err)
	}
	qs, _ := Range(utc("2026-01-01T13:00:00Z"), utc("2026-01-01T14:00:00Z"), Quarter, time.UTC)
	if len(qs) != 4 || qs[1].String() != "2026-01-01T13:15:00Z/2026-01-01T13:30:00Z" {
		t.Errorf("15m windows %v", qs)
	}
	_, err = Range(time.Date(2026, 3, 28, 1, 0, 0, 0, paris), end, Day, paris)
	if err == nil || !strings.Contains(err.Error(), "windows of that size start at local midnight") {
		t.Errorf("misaligned range err = %v", err)
	}
}

func TestParseWindowsAndShortcuts(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	// A Wednesday, shortly after midnight in Paris (still Tuesday in UTC).
	now := utc("2026-08-04T22:30:00Z")
	cases := map[string]string{
		"yesterday":             "2026-08-03T22:00:00Z/2026-08-04T22:00:00Z",
		"last-week":             "2026-07-26T22:00:00Z/2026-08-02T22:00:00Z",
		"last-month":            "2026-06-30T22:00:00Z/2026-07-31T22:00:00Z",
		"2026-08-01/2026-08-02": "2026-07-31T22:00:00Z/2026-08-01T22:00:00Z",
		"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z":     "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z",
		"2026-08-01T06:00:00+02:00/2026-08-01T07:00:00": "2026-08-01T04:00:00Z/2026-08-01T05:00:00Z",
	}
	for in, want := range cases {
		w, err := Parse(in, paris, now)
		if err != nil || w.String() != want {
			t.Errorf("Parse(%q) = %s, %v; want %s", in, w, err, want)
		}
	}
	// last-month across the spring change is 743 hours, not 744.
	w, _ := Parse("last-month", paris, utc("2026-04-10T10:00:00Z"))
	if w.End.Sub(w.Start).Hours() != 743 {
		t.Errorf("March 2026 in Paris = %v hours, want 743", w.End.Sub(w.Start).Hours())
	}
	for _, bad := range []string{"tomorrow", "2026-08-02/2026-08-01", "2026-08-01/soon", "2026-13-01/2026-13-02"} {
		if _, err := Parse(bad, paris, now); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestParseBound(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	now := utc("2026-08-04T22:30:00Z") // Wednesday 5 August, 00:30 in Paris
	cases := map[string]string{
		"today":                "2026-08-04T22:00:00Z",
		"Yesterday":            "2026-08-03T22:00:00Z",
		"7 days ago":           "2026-07-28T22:00:00Z",
		"1 day ago":            "2026-08-03T22:00:00Z",
		"2 weeks ago":          "2026-07-21T22:00:00Z",
		"2026-08-01":           "2026-07-31T22:00:00Z",
		"2026-08-01T00:00:00Z": "2026-08-01T00:00:00Z",
	}
	for in, want := range cases {
		got, err := ParseBound(in, paris, now)
		if err != nil || got.UTC().Format(time.RFC3339) != want {
			t.Errorf("ParseBound(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	// Counted back across the autumn change, a day is still a local midnight.
	if got, _ := ParseBound("3 days ago", paris, utc("2026-10-27T12:00:00Z")); got.UTC().Format(time.RFC3339) != "2026-10-23T22:00:00Z" {
		t.Errorf("3 days before 27 October in Paris = %v", got.UTC())
	}
	for _, bad := range []string{"tomorrow", "-3 days ago", "3 months ago", "days ago", "soon"} {
		if _, err := ParseBound(bad, paris, now); err == nil || !strings.Contains(err.Error(), `"7 days ago"`) {
			t.Errorf("ParseBound(%q) = %v, want a refusal naming the forms", bad, err)
		}
	}
}

func TestKeysOfParsedWindowsMatchTheVectors(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	w, err := Of(utc("2026-10-25T10:00:00Z"), Day, paris)
	if err != nil {
		t.Fatal(err)
	}
	if got := v1.IdempotencyKey("daily_orders", "iceberg:shop.orders", w); got != "975935cec3af1104a9aca7edfda3d95e39c0c9545ecec5fd2afe1900d93ad1cb" {
		t.Errorf("key of the fall-back day = %s", got)
	}
}

func TestPlaceholders(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	w := v1.LogicalWindow{Start: utc("2026-08-01T22:00:00Z"), End: utc("2026-08-02T22:00:00Z")}
	cases := map[string]string{
		"drops/orders_{window_start:%Y-%m-%d}.csv":                 "drops/orders_2026-08-02.csv",
		"drops/{window_start:%Y/%m/%d}/h{window_start:%H}.parquet": "drops/2026/08/02/h00.parquet",
		"x_{window_end:%Y%m%dT%H%M%S}_{window_start:%j_%a_%b}.csv": "x_20260803T000000_214_Sun_Aug.csv",
		"x_{window_start}.csv":                                     "x_2026-08-02T00:00:00+02:00.csv",
		"plain.csv":                                                "plain.csv",
		"{window_start:%%Y}":                                       "%Y",
	}
	for in, want := range cases {
		got, err := FillPath(in, w, paris)
		if err != nil || got != want {
			t.Errorf("FillPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := FillPath("drops/{window_start:%Y-%m-%d}.csv", v1.LogicalWindow{}, paris); err == nil || !strings.Contains(err.Error(), "placeholder {window_start:%Y-%m-%d}, which needs a window") {
		t.Errorf("no window: err = %v", err)
	}
	if _, err := FillPath("{window_start:%Q}", w, paris); err == nil {
		t.Error("unknown directive accepted")
	}
}

func TestFilter(t *testing.T) {
	paris := zone(t, "Europe/Paris")
	w := v1.LogicalWindow{Start: utc("2026-08-01T22:00:00Z"), End: utc("2026-08-02T22:00:00Z")}
	cases := map[string]string{
		"TIMESTAMP WITH TIME ZONE": `("c" >= TIMESTAMPTZ '2026-08-01 22:00:00Z' AND "c" < TIMESTAMPTZ '2026-08-02 22:00:00Z')`,
		"TIMESTAMP":                `("c" >= TIMESTAMP '2026-08-02 00:00:00' AND "c" < TIMESTAMP '2026-08-03 00:00:00')`,
		"DATE":                     `("c" >= DATE '2026-08-02' AND "c" < DATE '2026-08-03')`,
	}
	for typ, want := range cases {
		got, err := Filter("c", typ, w, paris)
		if err != nil || got != want {
			t.Errorf("Filter(%s) = %s, %v; want %s", typ, got, err, want)
		}
	}
	if _, err := Filter("c", "DATE", w, time.UTC); err == nil {
		t.Error("a DATE column with a window that is not at local midnight was accepted")
	}
	if _, err := Filter("c", "VARCHAR", w, time.UTC); err == nil {
		t.Error("a VARCHAR window column was accepted")
	}
}

func TestSecondPass(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	ny, _ := time.LoadLocation("America/New_York")
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t }
	for _, c := range []struct {
		loc        *time.Location
		start, end string
		want       bool
	}{
		{paris, "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", true},
		{paris, "2026-10-25T01:15:00Z", "2026-10-25T01:30:00Z", true},
		{paris, "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", false}, // the first pass
		{paris, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", false}, // the whole day
		{paris, "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z", false}, // spring: nothing repeats
		{ny, "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", true},
		{time.UTC, "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", false},
	} {
		if _, got := SecondPass(v1.LogicalWindow{Start: at(c.start), End: at(c.end)}, c.loc); got != c.want {
			t.Errorf("SecondPass(%s/%s in %s) = %v, want %v", c.start, c.end, c.loc, got, c.want)
		}
	}
}
