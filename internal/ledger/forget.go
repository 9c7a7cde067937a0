package ledger

import (
	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Forget appends to the ledger at path a runs.forgotten event naming the runs of workflow
// whose window is one of windows (by its String) and whose last attempt did not succeed, so
// that every fold of the ledger leaves them out; from and to are the range as it was asked,
// kept in the event. Succeeded runs are kept. It returns how many runs it forgot (none: no
// event is written).
func Forget(path, workflow string, windows map[string]bool, from, to string) (int, error) {
	events, _, err := Read(path)
	if err != nil {
		return 0, err
	}
	var ids []string
	status := map[string]string{}
	for _, e := range events {
		switch e.Type {
		case WorkflowStarted:
			p, _ := As[WorkflowStartedPayload](e)
			if p.Workflow == workflow && windows[p.Window.String()] && status[e.RunID] == "" {
				ids = append(ids, e.RunID)
				status[e.RunID] = "started"
			}
		case WorkflowFinished:
			p, _ := As[WorkflowFinishedPayload](e)
			if p.Workflow == workflow && p.Status != "" && status[e.RunID] != "" {
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
	e := NewEvent(uuid.Must(uuid.NewV7()).String(), 0, 0, RunsForgottenPayload{Workflow: workflow, From: from, To: to, RunIDs: gone})
	return len(gone), File{Path: path}.Append(e)
}
