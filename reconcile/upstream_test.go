package reconcile

import (
	"reflect"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// hoursOf is a stand-in mapping of a day onto the UTC hours inside it (internal/window's
// Overlapping is the real one, tested there over clock changes).
func hoursOf(w v1.LogicalWindow) []v1.LogicalWindow {
	var out []v1.LogicalWindow
	for s := w.Start; s.Before(w.End); s = s.Add(time.Hour) {
		out = append(out, v1.LogicalWindow{Start: s, End: s.Add(time.Hour)})
	}
	return out
}

func hourly() Upstream {
	return Upstream{Name: "hourly_clicks", File: "hourly_clicks.json", Size: "hour", Zone: "UTC", Target: "t:clicks",
		Key: func(w v1.LogicalWindow) string { return "clicks@" + w.String() }, Windows: hoursOf}
}

// published is the keys of hourly_clicks for the hours of d1 whose numbers are given.
func published(hours ...int) map[string]map[string]bool {
	keys := map[string]bool{}
	for _, h := range hours {
		s := d1.Start.Add(time.Duration(h) * time.Hour)
		keys["clicks@"+v1.LogicalWindow{Start: s, End: s.Add(time.Hour)}.String()] = true
	}
	return map[string]map[string]bool{"t:clicks": keys}
}

func allBut(skip ...int) []int {
	var out []int
	for h := 0; h < 24; h++ {
		if !contains(skip, h) {
			out = append(out, h)
		}
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestWaits is the rule of dependencies across objects, on its own and as Plan applies it: a
// daily window whose hours are not all published waits, says which, and runs nothing, whatever
// it would have done; one whose hours are all in runs once; a done window is left done.
func TestWaits(t *testing.T) {
	daily := Object{Name: "daily_clicks", Tasks: []Task{keyed("daily_clicks", "t:daily")}, Upstreams: []Upstream{hourly()}}
	dayKey := "daily_clicks@" + d1.String()
	hourAt := func(h int) string { return v1.FormatInstant(d1.Start.Add(time.Duration(h) * time.Hour)) }
	for _, tc := range []struct {
		name    string
		keys    map[string]map[string]bool
		last    *LastRun
		opts    Options
		action  v1.Action
		missing []string
		reason  string
	}{
		{name: "no hour published: waits for all 24", keys: published(), action: v1.ActionWait, missing: func() []string {
			var m []string
			for h := 0; h < 24; h++ {
				m = append(m, hourAt(h))
			}
			return m
		}(), reason: ReasonUpstream},
		{name: "three hours missing: waits for them", keys: published(allBut(4, 5, 6)...), action: v1.ActionWait, missing: []string{hourAt(4), hourAt(5), hourAt(6)}, reason: ReasonUpstream},
		{name: "every hour published: runs", keys: published(allBut()...), action: Run, reason: ReasonNotDone},
		{name: "a failed day with an hour missing waits, not resumes", keys: published(allBut(23)...), last: &LastRun{RunID: "r1", Attempt: 1, Finished: true, Tasks: map[string]v1.Outcome{"daily_clicks": failed}},
			action: v1.ActionWait, missing: []string{hourAt(23)}, reason: ReasonUpstream},
		{name: "a replace waits for its upstream too", keys: published(allBut(0)...), opts: Options{Replace: true}, action: v1.ActionWait, missing: []string{hourAt(0)}, reason: ReasonUpstream},
		{name: "a published day is left alone, an hour missing or not", keys: func() map[string]map[string]bool {
			k := published(allBut(7)...)
			k["t:daily"] = map[string]bool{dayKey: true}
			return k
		}(), action: Skip, reason: ReasonWindowDone},
		{name: "a day not finished waits for its end, not its hours", keys: published(), opts: Options{Now: d1.Start.Add(12 * time.Hour)}, action: v1.ActionWait, reason: ReasonNotFinished},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := Observed{Keys: tc.keys, LastRuns: map[v1.WindowKey]LastRun{}}
			if tc.last != nil {
				obs.LastRuns[d1.Key()] = *tc.last
			}
			plans := Plan(daily, []v1.LogicalWindow{d1}, obs, tc.opts)
			wp := plans[0]
			if wp.Action != tc.action {
				t.Fatalf("action %s, want %s", wp.Action, tc.action)
			}
			if wp.Runs() == (tc.action == v1.ActionWait || tc.action == Skip) {
				t.Errorf("Runs() = %v with action %s", wp.Runs(), wp.Action)
			}
			if wp.WaitsUpstream() != (len(tc.missing) > 0) {
				t.Errorf("WaitsUpstream() = %v, want %v", wp.WaitsUpstream(), len(tc.missing) > 0)
			}
			var got []string
			for _, w := range wp.Waiting {
				if w.Upstream != "hourly_clicks" || w.Of != 24 || w.Size != "hour" {
					t.Errorf("wait %+v: want hourly_clicks, of 24 hours", w)
				}
				got = append(got, w.MissingStarts...)
			}
			if !reflect.DeepEqual(got, tc.missing) {
				t.Errorf("missing %v, want %v", got, tc.missing)
			}
			if r := wp.Tasks[0].Reason; r != tc.reason {
				t.Errorf("task reason %q, want %q", r, tc.reason)
			}
			if tc.action == v1.ActionWait && wp.Tasks[0].Action != Skip {
				t.Errorf("a waiting window's task is %s, want skip", wp.Tasks[0].Action)
			}
		})
	}
}

// TestWaitsReplaceKey: an upstream hour published under a replace key (ldp backfill --replace
// of it) counts as published, as the upstream's own plan counts it.
func TestWaitsReplaceKey(t *testing.T) {
	u := hourly()
	h0 := hoursOf(d1)[0]
	keys := published(allBut(0)...)
	keys["t:clicks"][v1.ReplaceKey(u.Key(h0), "abc")] = true
	obs := Observed{Keys: keys, SpecHashes: map[string][]string{"t:clicks": {"abc"}}}
	if w := Waits([]Upstream{u}, d1, obs); w != nil {
		t.Fatalf("waits %+v for an hour published under its replace key", w)
	}
}

// TestWaitsEachUpstream: a window with two upstreams lists each one's missing windows, in the
// order the spec names them, and none of one whose windows are all in.
func TestWaitsEachUpstream(t *testing.T) {
	views := Upstream{Name: "daily_views", File: "daily_views.json", Size: "day", Zone: "UTC", Target: "t:views",
		Key:     func(w v1.LogicalWindow) string { return "views@" + w.String() },
		Windows: func(w v1.LogicalWindow) []v1.LogicalWindow { return []v1.LogicalWindow{w} }}
	obs := Observed{Keys: published(allBut()...)}
	got := Waits([]Upstream{hourly(), views}, d1, obs)
	if len(got) != 1 || got[0].Upstream != "daily_views" || got[0].Of != 1 || len(got[0].Missing) != 1 || !got[0].Missing[0].Start.Equal(d1.Start) {
		t.Fatalf("waits %+v, want daily_views's one day", got)
	}
}

// lastOf is the last of runs as the observer folds it: with the consumed keys of the last
// run that succeeded.
func lastOf(runs ...LastRun) LastRun {
	last := runs[len(runs)-1]
	last.PublishedFrom = PublishedFrom(runs)
	return last
}

// TestStaleUpstream: a published day whose run consumed its 24 hours is stale once an hour is
// on main under a key the run did not consume (a replace), shown and left alone, replaced by
// Stale; a re-run that fails (its checks, say) publishes nothing and leaves it stale; the run
// that replaces it consumes the new key, after which it is not stale. A run that recorded
// nothing is never stale.
func TestStaleUpstream(t *testing.T) {
	u := hourly()
	daily := Object{Name: "daily_clicks", Tasks: []Task{keyed("daily_clicks", "t:daily")}, Upstreams: []Upstream{u}}
	keys := published(allBut()...)
	keys["t:daily"] = map[string]bool{"daily_clicks@" + d1.String(): true}
	obs := Observed{Keys: keys, SpecHashes: map[string][]string{"t:clicks": {"v2"}}, LastRuns: map[v1.WindowKey]LastRun{}}
	consumed := Consumed([]Upstream{u}, d1, obs)
	if len(consumed) != 24 {
		t.Fatalf("consumed %d keys, want 24", len(consumed))
	}
	ran := LastRun{RunID: "r1", Attempt: 1, Finished: true, Tasks: map[string]v1.Outcome{"daily_clicks": succeeded}, Consumed: consumed}
	obs.LastRuns[d1.Key()] = lastOf(ran)
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{}); p[0].Action != Skip || p[0].Stale != nil {
		t.Fatalf("before any replace: %s, stale %+v", p[0].Action, p[0].Stale)
	}

	h4 := hoursOf(d1)[4]
	keys["t:clicks"][v1.ReplaceKey(u.Key(h4), "v2")] = true
	p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{})
	if p[0].Action != Skip || len(p[0].Stale) != 1 || len(p[0].Stale[0].Replaced) != 1 || !p[0].Stale[0].Replaced[0].Start.Equal(h4.Start) {
		t.Fatalf("after hour 4's replace: %s, stale %+v; want skip, stale at hour 4", p[0].Action, p[0].Stale)
	}
	p = Plan(daily, []v1.LogicalWindow{d1}, obs, Options{Stale: true})
	if p[0].Action != Replace || p[0].Tasks[0].Reason != ReasonStale || len(p[0].Consumed) != 25 {
		t.Fatalf("with Stale: %s (%q), consumes %d keys; want replace, 25 keys", p[0].Action, p[0].Tasks[0].Reason, len(p[0].Consumed))
	}

	// The re-run failed its checks: it recorded the 25 keys it consumed, but its rows never
	// reached main, so the day is still stale, and --stale still replaces it.
	rerun := LastRun{RunID: "r2", Attempt: 1, Finished: true, Tasks: map[string]v1.Outcome{"daily_clicks": blocked}, Consumed: p[0].Consumed}
	obs.LastRuns[d1.Key()] = lastOf(ran, rerun)
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{}); p[0].State != v1.StatePublished || p[0].Action != Skip || len(p[0].Stale) != 1 {
		t.Fatalf("after a failed re-run: %s %s, stale %+v; want published, skip, stale", p[0].State, p[0].Action, p[0].Stale)
	}
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{Stale: true}); p[0].Action != Replace || p[0].Tasks[0].Reason != ReasonStale {
		t.Fatalf("after a failed re-run, with Stale: %s (%q); want replace", p[0].Action, p[0].Tasks[0].Reason)
	}

	// The replace ran and consumed the new key: no longer stale.
	good := LastRun{RunID: "r3", Attempt: 1, Finished: true, Tasks: map[string]v1.Outcome{"daily_clicks": succeeded}, Consumed: p[0].Consumed}
	obs.LastRuns[d1.Key()] = lastOf(ran, rerun, good)
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{Stale: true}); p[0].Action != Skip || p[0].Stale != nil {
		t.Fatalf("after the replace ran: %s, stale %+v", p[0].Action, p[0].Stale)
	}

	// A run that recorded no upstream keys (an older ldp) is never stale.
	ran.Consumed = nil
	obs.LastRuns[d1.Key()] = lastOf(ran)
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{Stale: true}); p[0].Action != Skip || p[0].Stale != nil {
		t.Fatalf("a run with nothing recorded: %s, stale %+v", p[0].Action, p[0].Stale)
	}

	// A stale day whose upstream also lacks an hour waits rather than replaces.
	ran.Consumed = consumed
	obs.LastRuns[d1.Key()] = lastOf(ran)
	delete(keys["t:clicks"], u.Key(hoursOf(d1)[9]))
	if p := Plan(daily, []v1.LogicalWindow{d1}, obs, Options{Stale: true}); p[0].Action != v1.ActionWait || !p[0].WaitsUpstream() {
		t.Fatalf("stale with an hour missing: %s, waiting %+v; want wait", p[0].Action, p[0].Waiting)
	}
}

// TestPublishedFrom: staleness is judged by the keys of the last run that succeeded, never by
// those of a later run that failed, was blocked or did not finish.
func TestPublishedFrom(t *testing.T) {
	run := func(finished bool, outcome v1.Outcome, consumed ...string) LastRun {
		return LastRun{RunID: "r", Attempt: 1, Finished: finished, Tasks: map[string]v1.Outcome{"a": outcome}, Consumed: consumed}
	}
	for _, c := range []struct {
		name    string
		history []LastRun
		want    []string
	}{
		{"no run", nil, nil},
		{"one success", []LastRun{run(true, succeeded, "k1")}, []string{"k1"}},
		{"a skipped duplicate counts as done", []LastRun{run(true, v1.Skipped, "k1")}, []string{"k1"}},
		{"a failed re-run keeps the success before it", []LastRun{run(true, succeeded, "k1"), run(true, failed, "k1", "k2")}, []string{"k1"}},
		{"a blocked re-run keeps the success before it", []LastRun{run(true, succeeded, "k1"), run(true, blocked, "k1", "k2")}, []string{"k1"}},
		{"an unfinished re-run keeps the success before it", []LastRun{run(true, succeeded, "k1"), run(false, succeeded, "k1", "k2")}, []string{"k1"}},
		{"a later success wins", []LastRun{run(true, succeeded, "k1"), run(true, failed, "k2"), run(true, succeeded, "k2")}, []string{"k2"}},
		{"never succeeded", []LastRun{run(true, failed, "k1")}, nil},
		{"the success recorded nothing (an older ldp)", []LastRun{run(true, succeeded), run(true, failed, "k2")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PublishedFrom(c.history); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("PublishedFrom = %v, want %v", got, c.want)
			}
		})
	}
}
