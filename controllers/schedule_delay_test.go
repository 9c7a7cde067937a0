package controllers

import (
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// TestWindowOfFireWaitsTheDelay: a fire owns the last window that has waited its
// metadata.window.delay by the fire, sized or between fires, so every fire's window is
// finished when it fires; without a delay a fire owns the window that ends at or before it.
func TestWindowOfFireWaitsTheDelay(t *testing.T) {
	at := func(s string) time.Time {
		x, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	cases := []struct {
		name, schedule, size string
		delay                time.Duration
		fire                 string
		want                 string
	}{
		{"daily, no delay", "5 2 * * *", "day", 0, "2026-08-04T02:05:00Z", "2026-08-03T00:00:00Z/2026-08-04T00:00:00Z"},
		{"daily, a delay the fire has waited", "5 2 * * *", "day", 2 * time.Hour, "2026-08-04T02:05:00Z", "2026-08-03T00:00:00Z/2026-08-04T00:00:00Z"},
		{"daily, a delay longer than the fire's lead", "5 0 * * *", "day", 2 * time.Hour, "2026-08-04T00:05:00Z", "2026-08-02T00:00:00Z/2026-08-03T00:00:00Z"},
		{"between fires, no delay", "*/20 * * * *", "", 0, "2026-08-04T12:00:00Z", "2026-08-04T11:40:00Z/2026-08-04T12:00:00Z"},
		{"between fires, a delay of 30 minutes", "*/20 * * * *", "", 30 * time.Minute, "2026-08-04T12:00:00Z", "2026-08-04T11:00:00Z/2026-08-04T11:20:00Z"},
	}
	for _, c := range cases {
		wf := &Object{Schedule: c.schedule, Window: window.Spec{Size: c.size, Location: time.UTC, Delay: c.delay}}
		w, err := WindowOfFire(wf, at(c.fire))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if w.String() != c.want {
			t.Errorf("%s: the fire at %s owns %s, want %s", c.name, c.fire, w, c.want)
		}
		if !reconcile.Finished(w, c.delay, at(c.fire)) {
			t.Errorf("%s: window %s is not finished at its fire %s", c.name, w, c.fire)
		}
	}
}
