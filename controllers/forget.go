package controllers

import (
	"time"

	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// ForgetRuns appends a runs.forgotten event naming the runs of wf's windows from..to (as a
// backfill reads the range) that did not succeed, so that every fold of the ledger (the plan,
// ldp status, ldp runs, the page) leaves them out: the runs of windows run by mistake. It
// never touches a table: a window published stays published, and its succeeded runs are kept.
// It returns how many runs it forgot.
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
	events, _, err := ledger.Read(wf.Ledger)
	if err != nil {
		return 0, err
	}
	var ids []string
	status := map[string]string{}
	for _, e := range events {
		switch e.Type {
		case WorkflowStarted:
			p, _ := ledger.As[ledger.WorkflowStartedPayload](e)
			if p.Workflow == wf.Name && in[p.Window.String()] && status[e.RunID] == "" {
				ids = append(ids, e.RunID)
				status[e.RunID] = "started"
			}
		case WorkflowFinished:
			p, _ := ledger.As[ledger.WorkflowFinishedPayload](e)
			if p.Workflow == wf.Name && p.Status != "" && status[e.RunID] != "" {
				status[e.RunID] = string(p.Status) // the last attempt's outcome decides
			}
		}
	}
	var gone []string
	for _, id := range ids {
		if status[id] != string(v1.Succeeded) {
			gone = append(gone, id)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	e := ledger.NewEvent(uuid.Must(uuid.NewV7()).String(), 0, 0, ledger.RunsForgottenPayload{Workflow: wf.Name, From: from, To: to, RunIDs: gone})
	return len(gone), ledger.File{Path: wf.Ledger}.Append(e)
}
