package reconcile

import (
	"slices"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Upstream is another object whose windows a window of this one waits for (a dataset
// config's metadata.upstream, a workflow task's upstream): its windows may be of another size
// and zone, so Windows maps a window of this object to those of the upstream that overlap it
// (controllers gives internal/window's mapping).
type Upstream struct {
	// Name and File name the upstream object; Size and Zone are its window's, for people.
	Name, File, Size, Zone string
	// Target is the identity of the table whose main holds the upstream's keys (in an
	// environment, the keys observed on its branch of the table where it has written it, else
	// main's: the observer reads them, this rule only looks them up), and Key the upstream's
	// idempotency key of one of its windows.
	Target string
	Key    func(v1.LogicalWindow) string
	// Windows are the upstream's windows that overlap a window of this object (its size is
	// checked when the object is loaded, so the mapping cannot fail here).
	Windows func(v1.LogicalWindow) []v1.LogicalWindow
}

// Wait is what one upstream still lacks for a window: Missing of its Of windows that overlap
// the window are not published on its table's main.
type Wait struct {
	Upstream string `json:"upstream"`
	File     string `json:"file"`
	Size     string `json:"size"`
	Timezone string `json:"timezone"`
	Of       int    `json:"of"`
	// Missing are the starts of the windows not published, in time order.
	Missing []v1.LogicalWindow `json:"-"`
	// MissingStarts are the same, as FormatInstant writes them, for JSON readers.
	MissingStarts []string `json:"missing"`
}

// ReasonUpstream is the reason of each task of a window that waits for its upstream windows.
const ReasonUpstream = "the window waits for its upstream windows"

// Waits is the one rule of dependencies across objects: window w of an object waits while any
// window of an upstream that overlaps it is not published (under its key or a replace key, as
// Published counts it) on the upstream's main. It returns, per upstream in the order given,
// what is missing; nil when every upstream window is published. A window with no upstream
// never waits.
func Waits(ups []Upstream, w v1.LogicalWindow, obs Observed) []Wait {
	var out []Wait
	for _, u := range ups {
		ws := u.Windows(w)
		wait := Wait{Upstream: u.Name, File: u.File, Size: u.Size, Timezone: u.Zone, Of: len(ws)}
		for _, uw := range ws {
			if !obs.Published(u.Target, u.Key(uw)) {
				wait.Missing = append(wait.Missing, uw)
				wait.MissingStarts = append(wait.MissingStarts, v1.FormatInstant(uw.Start))
			}
		}
		if len(wait.Missing) > 0 {
			out = append(out, wait)
		}
	}
	return out
}

// waitsUpstream is a window's action once its upstream windows are known: a window that would
// run (a run, a resume or a replace) waits while any is missing; a window done, held, waiting
// for its retry or not finished keeps its action, and shows no wait.
func waitsUpstream(action v1.Action, waits []Wait) (v1.Action, []Wait) {
	switch action {
	case v1.ActionRun, v1.ActionResume, v1.ActionReplace:
		if len(waits) > 0 {
			return v1.ActionWait, waits
		}
	}
	return action, nil
}

// ReasonStale is the reason of each task of a stale window that ldp apply --stale runs again.
const ReasonStale = "stale: an upstream window was replaced after this window ran"

// Stale is one upstream's windows that were published under a new key after a window of this
// object consumed them.
type Stale struct {
	Upstream string `json:"upstream"`
	File     string `json:"file"`
	Size     string `json:"size"`
	Timezone string `json:"timezone"`
	// Replaced are the upstream windows, in time order.
	Replaced []v1.LogicalWindow `json:"-"`
	// ReplacedStarts are the same, as FormatInstant writes them, for JSON readers.
	ReplacedStarts []string `json:"replaced"`
}

// publishedKeys are the keys of upstream window uw on the upstream's main: its key and each
// of its replace keys that is there.
func publishedKeys(u Upstream, uw v1.LogicalWindow, obs Observed) []string {
	var out []string
	for k := range v1.WindowKeys(u.Key(uw), obs.SpecHashes[u.Target]) {
		if obs.HasKey(u.Target, k) {
			out = append(out, k)
		}
	}
	return out
}

// Consumed are the keys of the upstream windows that overlap w that are on their tables' main
// now, sorted: what a run of w planned now consumes, recorded with the run (LastRun.Consumed).
func Consumed(ups []Upstream, w v1.LogicalWindow, obs Observed) []string {
	var out []string
	for _, u := range ups {
		for _, uw := range u.Windows(w) {
			out = append(out, publishedKeys(u, uw, obs)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// StaleUpstream is the rule of staleness: a published window is stale when an upstream window
// it overlaps is on main under a key the run that published it did not consume
// (last.PublishedFrom: the last run that succeeded, so a failed re-run does not hide it; the
// upstream was replaced: ldp backfill --replace under a changed spec, or a changed key), so
// its rows were made from the upstream's old data. Each new key makes it stale once: the run
// that replaces it, once it succeeds, consumed that key. A run that recorded nothing (no
// upstreams then, or an older ldp) says nothing, and the window is not stale.
func StaleUpstream(ups []Upstream, w v1.LogicalWindow, obs Observed, last *LastRun) []Stale {
	if last == nil || last.PublishedFrom == nil {
		return nil
	}
	var out []Stale
	for _, u := range ups {
		st := Stale{Upstream: u.Name, File: u.File, Size: u.Size, Timezone: u.Zone}
		for _, uw := range u.Windows(w) {
			for _, k := range publishedKeys(u, uw, obs) {
				if _, seen := slices.BinarySearch(last.PublishedFrom, k); !seen {
					st.Replaced = append(st.Replaced, uw)
					st.ReplacedStarts = append(st.ReplacedStarts, v1.FormatInstant(uw.Start))
					break
				}
			}
		}
		if len(st.Replaced) > 0 {
			out = append(out, st)
		}
	}
	return out
}
