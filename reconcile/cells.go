package reconcile

import (
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// CellState is how one task stands in one window, as the status page colours it.
type CellState string

// Cell states. Blocked (a data gate held the task back) is kept apart from failed, and a
// failed task whose retry is due later is retrying, not failed.
const (
	CellPublished      CellState = "published"
	CellMissing        CellState = "missing"
	CellUnfinished     CellState = "unfinished"
	CellBlocked        CellState = "blocked"
	CellFailed         CellState = "failed"
	CellRetrying       CellState = "retrying"
	CellUpstreamFailed CellState = "upstream_failed"
	CellSkipped        CellState = "skipped"
)

// Cell is the state of task in the window p plans, from the window's last run and the task's
// plan: what the task's last attempt ended as, else unfinished when the run never finished,
// else published when its key is on main (or the whole window is), else missing.
func Cell(p WindowPlan, task string, now time.Time) CellState {
	if p.State == v1.StatePublished {
		return CellPublished
	}
	if lr := p.LastRun; lr != nil {
		switch lr.Tasks[task] {
		case v1.Succeeded:
			return CellPublished
		case v1.Skipped:
			return CellSkipped
		case v1.Blocked:
			return CellBlocked
		case v1.UpstreamFailed:
			return CellUpstreamFailed
		case v1.Failed:
			if RetryPending(lr, now) {
				return CellRetrying
			}
			return CellFailed
		}
		if !lr.Finished {
			return CellUnfinished
		}
	}
	for _, tp := range p.Tasks {
		if tp.ID == task && tp.Action == v1.ActionSkip && tp.Key != "" {
			return CellPublished
		}
	}
	return CellMissing
}

// CellRun is a run of equal cells: a row of the page is sent as runs, so its size grows with the
// changes of state, not with the windows.
type CellRun struct {
	State CellState `json:"s"`
	Count int       `json:"n"`
}

// RunLength encodes a row of cells.
func RunLength(cells []CellState) []CellRun {
	var out []CellRun
	for _, c := range cells {
		if n := len(out); n > 0 && out[n-1].State == c {
			out[n-1].Count++
			continue
		}
		out = append(out, CellRun{State: c, Count: 1})
	}
	return out
}
