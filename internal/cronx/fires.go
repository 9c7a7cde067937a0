package cronx

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Latest returns the latest fire of spec at or before now, read in loc. It looks back at most
// 400 days. (The DST rules of the contract come with ldp schedule; this is robfig's iteration.)
func Latest(spec *cron.SpecSchedule, now time.Time, loc *time.Location) (time.Time, error) {
	s := *spec
	s.Location = loc
	var last time.Time
	for t := s.Next(now.Add(-400 * 24 * time.Hour)); !t.IsZero() && !t.After(now); t = s.Next(t) {
		last = t
	}
	if last.IsZero() {
		return last, fmt.Errorf("the schedule has no fire in the 400 days before %s", now.UTC().Format(time.RFC3339))
	}
	return last, nil
}

// Previous returns the fire before fire.
func Previous(spec *cron.SpecSchedule, fire time.Time, loc *time.Location) (time.Time, error) {
	return Latest(spec, fire.Add(-time.Second), loc)
}
