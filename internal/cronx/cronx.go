// Package cronx parses the schedules of specs: 5-field cron expressions and the descriptors
// @hourly, @daily, @weekly (Sunday) and @monthly, read in a time zone.
//
// robfig/cron parses; the fires themselves are iterated here, because robfig's Next skips a
// fixed time in a spring-forward gap and fires it twice on a fall-back day (measured).
package cronx

import (
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// Descriptors are the @ forms a schedule may use.
var Descriptors = []string{"@hourly", "@daily", "@weekly", "@monthly"}

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse reads a schedule. @every and the other descriptors robfig knows are rejected, because
// a schedule must say which windows exist, not only how often to run.
func Parse(expr string) (*cron.SpecSchedule, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@") {
		ok := false
		for _, d := range Descriptors {
			if e == d {
				ok = true
			}
		}
		if !ok {
			return nil, fmt.Errorf("invalid schedule %q: the descriptors are %s; or write 5 cron fields (minute hour day-of-month month day-of-week)", expr, strings.Join(Descriptors, ", "))
		}
	} else if n := len(strings.Fields(e)); n != 5 {
		return nil, fmt.Errorf("invalid cron expression %q: it has %d fields, want 5 (minute hour day-of-month month day-of-week) or one of %s", expr, n, strings.Join(Descriptors, ", "))
	}
	s, err := parser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("invalid cron expression %q: %v", expr, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("invalid cron expression %q: not a calendar schedule", expr)
	}
	return spec, nil
}

// ScheduleOfWhen returns the schedule a contract "when" label means (hourly, daily, weekly,
// monthly in any case), or "" when the label means none.
func ScheduleOfWhen(when string) string {
	switch strings.ToLower(strings.TrimSpace(when)) {
	case "hourly":
		return "@hourly"
	case "daily":
		return "@daily"
	case "weekly":
		return "@weekly"
	case "monthly":
		return "@monthly"
	}
	return ""
}
