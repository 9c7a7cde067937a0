package v1

import (
	"testing"
	"time"
)

// TestWindowKey: a window's key is START/END as the idempotency keys spell the bounds, reads
// back as the same window, and a key that is not START/END is refused.
func TestWindowKey(t *testing.T) {
	for _, c := range []struct {
		w    LogicalWindow
		want WindowKey
	}{
		{LogicalWindow{}, ""},
		{LogicalWindow{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, "2026-01-01T00:00:00Z/2026-01-02T00:00:00Z"},
		{LogicalWindow{Start: time.Date(2026, 3, 29, 1, 0, 0, 0, time.FixedZone("CET", 3600)), End: time.Date(2026, 3, 29, 3, 0, 0, 0, time.FixedZone("CEST", 7200))}, "2026-03-29T00:00:00Z/2026-03-29T01:00:00Z"},
		{LogicalWindow{Start: time.Date(2026, 1, 1, 0, 0, 0, 500000000, time.UTC), End: time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)}, "2026-01-01T00:00:00.500000Z/2026-01-01T00:00:01Z"},
	} {
		k := c.w.Key()
		if k != c.want || c.w.String() != string(c.want) {
			t.Errorf("Key(%v) = %q, want %q", c.w, k, c.want)
		}
		if k == "" {
			continue
		}
		start, end, ok := k.Bounds()
		if !ok || KeyOf(start, end) != k {
			t.Errorf("Bounds(%q) = %q %q %v", k, start, end, ok)
		}
		back, err := k.Window()
		if err != nil || !back.Start.Equal(c.w.Start) || !back.End.Equal(c.w.End) || back.Key() != k {
			t.Errorf("Window(%q) = %v, %v; want %v", k, back, err, c.w)
		}
	}
	if KeyOf("", "") != "" {
		t.Error("KeyOf of no bounds is not the empty key")
	}
	for _, bad := range []WindowKey{"2026-01-01", "2026-01-01/2026-01-02", "x/2026-01-02T00:00:00Z"} {
		if w, err := bad.Window(); err == nil {
			t.Errorf("Window(%q) = %v, want an error", bad, w)
		}
	}
}
