package reconcile

import (
	"fmt"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// A scheduled window whose last run a data gate blocked, or whose last run failed with its
// attempts spent, is not run again at every tick, resync or unrelated file change (ldp watch
// ran such a window every few seconds, for ever): it is held until the evidence its last run
// saw (its spec, its source files) differs from what is there now. Asked for by name (ldp run
// --window, apply --window, a backfill) it runs.

// HoldKind is why a window is held.
type HoldKind string

// Hold kinds.
const (
	// HoldBlocked: a data gate held the last run back; the same data would be held again.
	HoldBlocked HoldKind = HoldKind(v1.Blocked)
	// HoldAttemptsSpent: the last run failed and spent every attempt its retries allow (or
	// failed with an error no attempt can fix).
	HoldAttemptsSpent HoldKind = "attempts_spent"
)

// Hold is why a window is held, and what releases it.
type Hold struct {
	Kind HoldKind `json:"kind"`
	// Task is the task whose outcome holds the window.
	Task string `json:"task"`
	// Checks are the checks that failed, for a window a data gate blocked (when known).
	Checks []string `json:"checks,omitempty"`
	// Attempts and MaxAttempts are the failed task's attempts spent and allowed.
	Attempts    int `json:"attempts,omitempty"`
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Message says it in a sentence, with the commands that run the window again.
	Message string `json:"message"`
}

// Spent reports whether attempt is the last one that max allows (at least one): the one rule
// of how far a failed window is tried, for a tick, a watcher and the controller's Jobs alike.
func Spent(attempt, maxAttempts int) bool { return attempt >= max(maxAttempts, 1) }

// MayHold reports whether a window whose last run is last could be held: a run that finished
// blocked or failed, and recorded the evidence it saw. Observation computes the evidence now
// of these windows only (a stat and a hash each), the planner decides.
func MayHold(last LastRun) bool {
	if !last.Finished || last.Evidence == "" || !last.RetryAt.IsZero() {
		return false
	}
	o := last.Outcome()
	return o == v1.Blocked || o == v1.Failed
}

// Held is the hold of window w of obj, or nil when it is not held: its last run may hold it
// (MayHold), the evidence now is what that run saw, and the run was blocked, or failed with
// every failed task's attempts spent. A failed task with attempts left does not hold.
func Held(obj Object, w v1.LogicalWindow, last *LastRun, evidence string) *Hold {
	if last == nil || !MayHold(*last) || evidence != last.Evidence {
		return nil
	}
	var h *Hold
	switch last.Outcome() {
	case v1.Blocked:
		for _, t := range Order(obj.Tasks) {
			if last.Tasks[t.ID] == v1.Blocked {
				h = &Hold{Kind: HoldBlocked, Task: t.ID, Checks: last.Checks[t.ID]}
				break
			}
		}
	case v1.Failed:
		for _, t := range Order(obj.Tasks) {
			if last.Tasks[t.ID] != v1.Failed {
				continue
			}
			spent, fatal := last.TaskAttempts[t.ID], last.Fatal[t.ID]
			if !fatal && !Spent(spent, t.MaxAttempts) {
				return nil // a retry can still fix it
			}
			if h == nil {
				h = &Hold{Kind: HoldAttemptsSpent, Task: t.ID, Attempts: spent, MaxAttempts: max(t.MaxAttempts, 1)}
			}
		}
	}
	if h != nil {
		h.Message = h.message(obj.File, w)
	}
	return h
}

func (h *Hold) message(file string, w v1.LogicalWindow) string {
	rerun := fmt.Sprintf("run `ldp run %s --window %s` or `ldp runs forget %s --from %s --to %s` to retry",
		file, w, file, v1.FormatInstant(w.Start), v1.FormatInstant(w.End))
	switch {
	case h.Kind == HoldBlocked && len(h.Checks) > 0:
		return fmt.Sprintf("blocked by %s %s; waiting for a change to source or spec, or %s",
			plural(len(h.Checks), "check", "checks"), strings.Join(h.Checks, ", "), rerun)
	case h.Kind == HoldBlocked:
		return fmt.Sprintf("blocked by a data gate in task %s; waiting for a change to source or spec, or %s", h.Task, rerun)
	case h.Attempts < h.MaxAttempts:
		return fmt.Sprintf("task %s failed with an error no retry can fix; waiting for a change to source or spec, or %s", h.Task, rerun)
	}
	return fmt.Sprintf("task %s failed %d of %d attempts; waiting for a change to source or spec, or %s",
		h.Task, h.Attempts, h.MaxAttempts, rerun)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
