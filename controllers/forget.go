package controllers

import (
	"time"

	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// ForgetRuns appends a runs.forgotten event naming the runs of wf's windows from..to (as a
// backfill reads the range) that did not succeed, so that every fold of the ledger (the plan,
// ldp status, ldp runs, the page) leaves them out: the runs of windows run by mistake. It
// never touches a table: a window published stays published, and its succeeded runs are kept.
// It returns how many runs it forgot. Which runs those are is the ledger's (ledger.Forget);
// the windows of the range are the workflow's.
func ForgetRuns(wf *Object, from, to string, now time.Time) (int, error) {
	windows, err := Desired{From: from, To: to, Now: now}.Windows(wf)
	if err != nil {
		return 0, err
	}
	if len(windows) == 0 {
		return 0, ldperr.Configf(wf.File, "the range %s to %s holds no complete window", from, orEnd(to))
	}
	in := map[string]bool{}
	for _, w := range windows {
		in[w.String()] = true
	}
	return ledger.Forget(wf.Ledger, wf.Name, in, from, to)
}
