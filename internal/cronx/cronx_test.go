package cronx

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := []string{"5 2 * * *", "*/15 * * * *", "0 0 1 * *", "@hourly", "@daily", "@weekly", "@monthly", "30 2 * * 1-5"}
	for _, e := range good {
		if _, err := Parse(e); err != nil {
			t.Errorf("Parse(%q): %v", e, err)
		}
	}
	bad := map[string]string{
		"61 * * * *":     "above maximum",
		"* * * *":        "it has 4 fields",
		"0 0 0 * * *":    "it has 6 fields",
		"@every 5m":      "the descriptors are @hourly",
		"@yearly":        "the descriptors are",
		"x * * * *":      "invalid cron expression",
		"0 25 * * *":     "above maximum",
		"0 0 * * MON-XX": "invalid cron expression",
	}
	for e, want := range bad {
		_, err := Parse(e)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", e, err, want)
		}
	}
}

func TestScheduleOfWhen(t *testing.T) {
	for when, want := range map[string]string{"daily": "@daily", "Hourly": "@hourly", "WEEKLY": "@weekly", "monthly": "@monthly", "nightly": "", "": ""} {
		if got := ScheduleOfWhen(when); got != want {
			t.Errorf("ScheduleOfWhen(%q) = %q, want %q", when, got, want)
		}
	}
}
