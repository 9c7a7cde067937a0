package controllers

import (
	"fmt"
	"strings"
	"time"

	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// Wait is what one upstream object still lacks for a window (reconcile.Waits).
type Wait = reconcile.Wait

// maxListed is how many missing upstream windows a message names before it counts the rest.
const maxListed = 6

// WaitMessage is the one sentence every view (diff, apply, backfill, status, the page) gives a
// window that waits for an upstream object: "waiting: 3 of 24 hours of hourly_clicks not
// published: 04:00, 05:00, 06:00", each missing window named in the upstream's own zone, the
// list cut short when long.
func WaitMessage(w Wait) string {
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil {
		loc = time.UTC
	}
	labels := make([]string, 0, min(len(w.Missing), maxListed+1))
	for i, m := range w.Missing {
		if i == maxListed && len(w.Missing) > maxListed+1 {
			labels = append(labels, fmt.Sprintf("and %d more", len(w.Missing)-maxListed))
			break
		}
		labels = append(labels, window.Label(m.Start, w.Size, loc))
	}
	return fmt.Sprintf("waiting: %d of %d %s of %s not published: %s", len(w.Missing), w.Of, window.Unit(w.Size, w.Of), w.Upstream, strings.Join(labels, ", "))
}

// WaitMessages is WaitMessage of each wait, joined by "; ".
func WaitMessages(ws []Wait) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = WaitMessage(w)
	}
	return strings.Join(out, "; ")
}
