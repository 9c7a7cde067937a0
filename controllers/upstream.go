package controllers

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// Wait is what one upstream object still lacks for a window (reconcile.Waits), and Stale what
// of it was replaced since the window ran (reconcile.StaleUpstream).
type (
	Wait  = reconcile.Wait
	Stale = reconcile.Stale
)

// maxListed is how many missing upstream windows a message names before it counts the rest.
const maxListed = 6

// WaitMessage is the one sentence every view (diff, apply, backfill, status, the page) gives a
// window that waits for an upstream object: "waiting: 3 of 24 hours of hourly_clicks not
// published: 04:00, 05:00, 06:00", each missing window named in the upstream's own zone, the
// list cut short when long.
func WaitMessage(w Wait) string {
	return fmt.Sprintf("waiting: %d of %d %s of %s not published: %s", len(w.Missing), w.Of, window.Unit(w.Size, w.Of), w.Upstream, listed(w.Missing, w.Size, w.Timezone))
}

// listed names windows of size in zone for people, the list cut short when long.
func listed(ws []v1.LogicalWindow, size, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	labels := make([]string, 0, min(len(ws), maxListed+1))
	for i, m := range ws {
		if i == maxListed && len(ws) > maxListed+1 {
			labels = append(labels, fmt.Sprintf("and %d more", len(ws)-maxListed))
			break
		}
		labels = append(labels, window.Label(m.Start, size, loc))
	}
	return strings.Join(labels, ", ")
}

// StaleMessage is the one sentence every view gives a stale window: "stale: hourly_clicks
// 04:00 replaced after this window ran; ldp apply --stale runs it again".
func StaleMessage(ss []Stale) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Upstream + " " + listed(s.Replaced, s.Size, s.Timezone)
	}
	return "stale: " + strings.Join(parts, "; ") + " replaced after this window ran"
}

// WaitMessages is WaitMessage of each wait, joined by "; ".
func WaitMessages(ws []Wait) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = WaitMessage(w)
	}
	return strings.Join(out, "; ")
}
