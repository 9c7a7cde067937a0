package cronx

import (
	"strings"
	"testing"
	"time"
)

// TestFiresAcrossClockChanges checks every rule against a table of expected instants for both
// 2026 clock changes in Europe/Paris (29 March, 25 October) and America/New_York (8 March,
// 1 November).
func TestFiresAcrossClockChanges(t *testing.T) {
	cases := []struct {
		name, zone, spec, from, to string
		want                       []string
	}{
		{"Paris spring: a fixed time in the gap fires at its end", "Europe/Paris", "30 2 * * *", "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}},
		{"Paris fall: a repeated fixed time fires once, first", "Europe/Paris", "30 2 * * *", "2026-10-24T00:00:00Z", "2026-10-26T12:00:00Z",
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		{"Paris fall: a * hour fires in both passes", "Europe/Paris", "0 * * * *", "2026-10-24T23:30:00Z", "2026-10-25T02:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"Paris spring: a * hour skips the missing hour", "Europe/Paris", "0 * * * *", "2026-03-28T23:30:00Z", "2026-03-29T02:30:00Z",
			[]string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"}},
		{"New York spring gap", "America/New_York", "30 2 * * *", "2026-03-07T12:00:00Z", "2026-03-09T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		// Where midnight is in the gap, a daily fire is the day's first instant, 01:00 (where
		// internal/window begins the day).
		{"Santiago: midnight in the gap fires at 01:00", "America/Santiago", "0 0 * * *", "2026-09-05T00:00:00Z", "2026-09-08T12:00:00Z",
			[]string{"2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z", "2026-09-08T03:00:00Z"}},
		{"Havana: midnight in the gap fires at 01:00", "America/Havana", "@daily", "2026-03-07T00:00:00Z", "2026-03-09T12:00:00Z",
			[]string{"2026-03-07T05:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"}},
		{"New York fall repeat", "America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"New York fall, 15 minutes in both passes", "America/New_York", "*/30 * * * *", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z"}},
		{"weekly on Sunday in UTC", "UTC", "@weekly", "2026-08-01T00:00:00Z", "2026-08-20T00:00:00Z",
			[]string{"2026-08-02T00:00:00Z", "2026-08-09T00:00:00Z", "2026-08-16T00:00:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc, _ := time.LoadLocation(c.zone)
			spec, err := Parse(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			from, _ := time.Parse(time.RFC3339, c.from)
			to, _ := time.Parse(time.RFC3339, c.to)
			var got []string
			for _, f := range Fires(spec, from, to, loc) {
				got = append(got, f.UTC().Format(time.RFC3339))
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("fires\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestLatestAndNext(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	spec, _ := Parse("5 2 * * *")
	now, _ := time.Parse(time.RFC3339, "2026-08-05T02:05:00Z")
	latest, err := Latest(spec, now, paris)
	if err != nil || latest.UTC().Format(time.RFC3339) != "2026-08-05T00:05:00Z" {
		t.Errorf("Latest = %v, %v", latest, err)
	}
	next, err := Next(spec, now, paris)
	if err != nil || next.UTC().Format(time.RFC3339) != "2026-08-06T00:05:00Z" {
		t.Errorf("Next = %v, %v", next, err)
	}
	prev, _ := Previous(spec, latest, paris)
	if prev.UTC().Format(time.RFC3339) != "2026-08-04T00:05:00Z" {
		t.Errorf("Previous = %v", prev)
	}
}
