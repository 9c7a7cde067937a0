package reconcile

import (
	"slices"
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
	CellBlocked        CellState = CellState(v1.Blocked)
	CellFailed         CellState = "failed"
	CellRetrying       CellState = "retrying"
	CellUpstreamFailed CellState = "upstream_failed"
	CellSkipped        CellState = "skipped"
	// CellWaiting is a window that is not finished (it has not ended, or waits its delay for
	// late rows): nothing is missing yet, it runs once it is finished.
	CellWaiting CellState = "waiting"
)

// cellRank orders cells worst first for a window's summary: the one fold's order (failed over
// blocked over done, Fold), with the states between.
var cellRank = []CellState{CellFailed, CellRetrying, CellBlocked, CellUpstreamFailed, CellUnfinished, CellMissing, CellSkipped, CellPublished}

// WorstCell is a whole window's state from its tasks' cells: the worst of them (a waiting
// cell, or none, counts as published, as the summary bar shows it).
func WorstCell(cells []CellState) CellState {
	worst := len(cellRank) - 1
	for _, c := range cells {
		if i := slices.Index(cellRank, c); i >= 0 && i < worst {
			worst = i
		}
	}
	return cellRank[worst]
}

// Cell is the state of task in the window p plans, from the window's last run and the task's
// plan: what the task's last attempt ended as, else unfinished when the run never finished,
// else published when its key is on main (or the whole window is), else waiting when the
// window is not finished, else missing.
func Cell(p WindowPlan, task string, now time.Time) CellState {
	if p.State == v1.StatePublished {
		return CellPublished
	}
	if lr := p.LastRun; lr != nil {
		if c := TryCell(*lr, task); c != "" {
			if c == CellFailed && RetryPending(lr, now) {
				return CellRetrying
			}
			return c
		}
	}
	for _, tp := range p.Tasks {
		if tp.ID == task && tp.Action == v1.ActionSkip && tp.Key != "" {
			return CellPublished
		}
	}
	if p.NotFinished {
		return CellWaiting
	}
	return CellMissing
}

// TryCell is how task ended in one attempt of a run: its outcome as a cell, unfinished when
// the attempt never finished and the task has no outcome, "" when the task did not run in it.
func TryCell(lr LastRun, task string) CellState {
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
		return CellFailed
	}
	if !lr.Finished {
		return CellUnfinished
	}
	return ""
}

// Earlier is what went wrong for task in a window before its last run: the cells of the
// attempts before the last one the task ran in (runs oldest first) that did not publish. A
// window published after a data gate held it back shows as published, and this keeps the
// gate from vanishing from the page.
func Earlier(runs []LastRun, task string) []CellState {
	var tries []CellState
	for _, r := range runs {
		if c := TryCell(r, task); c != "" {
			tries = append(tries, c)
		}
	}
	var out []CellState
	for i, c := range tries {
		if i < len(tries)-1 && c != CellPublished && c != CellSkipped {
			out = append(out, c)
		}
	}
	return out
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
