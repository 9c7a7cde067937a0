package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// On a cluster a window's run is a Job: these are the decisions ldp controller adds to the
// plan, made here from plain records so they are table-tested without an API server.

// JobPhase is how a window's Job stands.
type JobPhase string

// Job phases: a Job blocked by a data gate failed with ldp's exit code 3.
const (
	JobActive    JobPhase = "active"
	JobSucceeded JobPhase = "succeeded"
	JobFailed    JobPhase = "failed"
	JobBlocked   JobPhase = JobPhase(v1.Blocked)
)

// State is the state a window is in when its last Job is in phase p.
func (p JobPhase) State() v1.WindowState {
	switch p {
	case JobActive:
		return v1.StateRunning
	case JobSucceeded:
		return v1.StatePublished
	case JobBlocked:
		return v1.StateBlocked
	}
	return v1.StateFailed
}

// JobRecord is one Job of a window: its attempt, its phase and when it started and finished.
// FirstAttempt is the first attempt counted against MaxAttempts (1 when 0): a retry asked for
// gives a spent window its attempts again, numbered on. RetryAt, when set, is the next
// attempt's time drawn at an earlier pass (the wait is drawn once, not at every pass).
type JobRecord struct {
	Window            string
	Attempt           int
	Phase             JobPhase
	Started, Finished time.Time
	FirstAttempt      int
	RetryAt           time.Time
}

// JobDecision is what to do about one window that is not done.
type JobDecision struct {
	Plan WindowPlan
	// Create a Job for Attempt now; else, with At set, not before At.
	Create  bool
	Attempt int
	At      time.Time
	// State is the window's state on the cluster: the plan's, or running, or failed or
	// blocked once its attempts are spent.
	State v1.WindowState
}

// JobPolicy bounds a window's Jobs: attempts in all, the wait after attempt n, and how many
// of the object's Jobs run at once.
type JobPolicy struct {
	MaxAttempts   int
	Wait          func(attempt int) time.Duration
	MaxConcurrent int
}

// DecideJobs takes the windows of a plan and the Jobs the object has, and says, window by
// window in order, whether to create a Job and for which attempt. A window whose last Job is
// running waits for it; one whose last Job failed is the next attempt of the same run once
// the wait after that attempt has passed, until MaxAttempts; one whose last Job succeeded is
// done even when no key vouches for it (a Job's success is the cluster's ledger). No more
// than MaxConcurrent Jobs run at once, counting those running.
func DecideJobs(plans []WindowPlan, jobs []JobRecord, pol JobPolicy, now time.Time) []JobDecision {
	last := map[v1.WindowKey]JobRecord{}
	running := 0
	for _, j := range jobs {
		if l, ok := last[v1.WindowKey(j.Window)]; !ok || j.Attempt > l.Attempt {
			last[v1.WindowKey(j.Window)] = j
		}
		if j.Phase == JobActive {
			running++
		}
	}
	limit := max(pol.MaxConcurrent, 1)
	maxAttempts := max(pol.MaxAttempts, 1)
	var out []JobDecision
	for _, p := range plans {
		if !p.Runs() {
			continue
		}
		d := JobDecision{Plan: p, State: p.State}
		j, seen := last[p.Key()]
		switch {
		case !seen:
			d.Attempt = 1
		case j.Phase == JobActive, j.Phase == JobSucceeded, Spent(j.Attempt-max(j.FirstAttempt, 1)+1, maxAttempts):
			d.State = j.Phase.State()
			out = append(out, d)
			continue
		default:
			d.State, d.Attempt = j.Phase.State(), j.Attempt+1
			if pol.Wait != nil || !j.RetryAt.IsZero() {
				at := j.RetryAt
				if at.IsZero() {
					at = j.Finished.Add(pol.Wait(j.Attempt - max(j.FirstAttempt, 1) + 1))
				}
				if at.After(now) {
					d.At = at
					out = append(out, d)
					continue
				}
			}
		}
		if running < limit {
			d.Create = true
			running++
		}
		out = append(out, d)
	}
	return out
}

// JobName is the name of attempt's Job of an object's window: the object's name cut to fit,
// and a hash of the kind, namespace, name, window and attempt. Being deterministic, it makes
// the API server's create-if-absent the lease: two controllers never start the same attempt.
func JobName(kind, namespace, name, window string, attempt int) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{kind, namespace, name, window, strconv.Itoa(attempt)}, "\x00")))
	base := strings.Trim(name, "-.")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-.")
	}
	return base + "-" + hex.EncodeToString(sum[:])[:12]
}

// JobRunID is the run id every attempt of an object's window shares, so attempt n+1 fences n.
func JobRunID(kind, namespace, name, window string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{"run", kind, namespace, name, window}, "\x00")))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// CountStates counts the decisions' states with the windows that need no Job (done ones),
// the counts a status shows.
func CountStates(plans []WindowPlan, decisions []JobDecision) map[string]int32 {
	out := map[string]int32{}
	decided := map[v1.WindowKey]v1.WindowState{}
	for _, d := range decisions {
		decided[d.Plan.Key()] = d.State
	}
	for _, p := range plans {
		s, ok := decided[p.Key()]
		if !ok {
			s = p.State
		}
		out[string(s)]++
	}
	return out
}

// LastDone is the latest window of plans that is done (published by its keys, or by its Job).
func LastDone(plans []WindowPlan, decisions []JobDecision) string {
	done := map[v1.WindowKey]bool{}
	for _, d := range decisions {
		if d.State == v1.StatePublished {
			done[d.Plan.Key()] = true
		}
	}
	var all []string
	for _, p := range plans {
		if w := p.Key(); !p.Runs() || done[w] {
			all = append(all, string(w))
		}
	}
	if len(all) == 0 {
		return ""
	}
	slices.Sort(all)
	return all[len(all)-1]
}
