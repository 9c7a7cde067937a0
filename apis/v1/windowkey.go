package v1

import (
	"fmt"
	"strings"
	"time"
)

// WindowKey names one window wherever a window is a key: START/END, each bound as
// FormatInstant writes it (UTC). The ledger's last runs, plans, held windows, Jobs and the
// status page all key windows by it, so it is formatted and parsed here only.
type WindowKey string

// Key is w's key; "" for no window.
func (w LogicalWindow) Key() WindowKey {
	if w.IsZero() {
		return ""
	}
	return KeyOf(FormatInstant(w.Start), FormatInstant(w.End))
}

// KeyOf is the key of the window from start to end, each already written as FormatInstant
// writes it (a plan's Start and End, a ledger event's bounds).
func KeyOf(start, end string) WindowKey {
	if start == "" && end == "" {
		return ""
	}
	return WindowKey(start + "/" + end)
}

// Bounds are the key's START and END as written; ok is false for a key that is not START/END.
func (k WindowKey) Bounds() (start, end string, ok bool) {
	return strings.Cut(string(k), "/")
}

// Window is the window k names.
func (k WindowKey) Window() (LogicalWindow, error) {
	a, b, ok := k.Bounds()
	if !ok {
		return LogicalWindow{}, fmt.Errorf("window key %q is not START/END", string(k))
	}
	start, err := time.Parse(time.RFC3339Nano, a)
	if err != nil {
		return LogicalWindow{}, fmt.Errorf("window key %q: start: %w", string(k), err)
	}
	end, err := time.Parse(time.RFC3339Nano, b)
	if err != nil {
		return LogicalWindow{}, fmt.Errorf("window key %q: end: %w", string(k), err)
	}
	return LogicalWindow{Start: start.UTC(), End: end.UTC()}, nil
}

func (k WindowKey) String() string { return string(k) }
