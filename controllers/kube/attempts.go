package kube

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ldp-dev/ldp/apis/k8s"
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/reconcile"
)

// AnnotRetry on an object asks for its spent windows (failed or blocked at their last
// attempt) to run again: each new value gives them their attempts again, numbered on from the
// last (kubectl annotate pipeline NAME ldp.dev/retry="$(date +%s)" --overwrite).
const AnnotRetry = "ldp.dev/retry"

// lostAfter is how long a remembered running attempt whose Job is not listed is taken as
// running: the cache sees a Job created moments ago soon after. Past it, the Job went without
// an outcome (deleted before the controller saw it finish) and the attempt failed.
const lostAfter = 30 * time.Second

// phases are the outcomes status.attempts writes, as the windows' states.
var phases = map[string]reconcile.JobPhase{
	string(v1.StateRunning): reconcile.JobActive,
	string(v1.StateFailed):  reconcile.JobFailed,
	string(v1.StateBlocked): reconcile.JobBlocked,
}

// memoryOf reads status.attempts.
func memoryOf(in []k8s.WindowAttempts) []reconcile.Memory {
	var out []reconcile.Memory
	for _, a := range in {
		p, ok := phases[a.Outcome]
		if !ok || a.Window == "" || a.Attempt < 1 {
			continue // not ldp's: ignored, as a status written by hand may be
		}
		out = append(out, reconcile.Memory{JobRecord: reconcile.JobRecord{Window: a.Window, Attempt: int(a.Attempt), Phase: p,
			Started: timeOf(a.Started), Finished: timeOf(a.Finished), FirstAttempt: int(a.FirstAttempt)},
			RetryAt: timeOf(a.NextAttemptAt), Retry: a.Retry})
	}
	return out
}

// remember writes the pass's memory in status.attempts and counts what fell past its bound.
func (r *Reconciler) remember(st *k8s.Status, obj k8s.Object, keep, forgotten []reconcile.Memory) {
	st.Attempts = nil
	for _, m := range keep {
		st.Attempts = append(st.Attempts, k8s.WindowAttempts{
			Window: m.Window, Attempt: int32(m.Attempt), Outcome: string(m.Phase.State()),
			Job:     reconcile.JobName(obj.Kind(), obj.GetNamespace(), obj.GetName(), m.Window, m.Attempt),
			Started: timeOrNil(m.Started), Finished: timeOrNil(m.Finished), NextAttemptAt: timeOrNil(m.RetryAt),
			Retry: m.Retry, FirstAttempt: int32(m.FirstAttempt),
		})
	}
	for _, m := range forgotten {
		if st.ForgottenWindows == nil {
			st.ForgottenWindows = map[string]int32{}
		}
		st.ForgottenWindows[string(m.Phase.State())]++
	}
}

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func timeOrNil(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}
