package ledger

import (
	"sort"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// StatusUnfinished is a run whose events end before run.finished (killed, or still running).
const StatusUnfinished = "unfinished"

// Summarize folds pipeline-run events into one summary per attempt of each run, newest first;
// with allAttempts false, only the last attempt of each run.
func Summarize(events []v1.LedgerEvent, allAttempts bool) []v1.RunSummary {
	type key struct {
		run     string
		attempt int
	}
	byKey := map[key]*v1.RunSummary{}
	var order []key
	for _, e := range events {
		if !strings.HasPrefix(e.Type, "run.") && e.Type != QualityEvaluated {
			continue
		}
		k := key{e.RunID, e.Attempt}
		s, ok := byKey[k]
		if !ok {
			s = &v1.RunSummary{RunID: e.RunID, Attempt: e.Attempt, Status: StatusUnfinished, Started: e.TS}
			byKey[k] = s
			order = append(order, k)
		}
		switch e.Type {
		case RunStarted:
			p, _ := As[RunStartedPayload](e)
			s.Started = e.TS
			s.Pipeline = p.Pipeline
			s.Key = p.IdempotencyKey
			if p.Window != nil {
				s.Window = p.Window.String()
			}
		case RunExtracted:
			p, _ := As[RunExtractedPayload](e)
			s.RowsRead = p.RowsRead
		case QualityEvaluated:
			p, _ := As[QualityEvaluatedPayload](e)
			s.ChecksPassed, s.ChecksFailed = 0, 0
			for _, c := range p.Checks {
				if c.Passed {
					s.ChecksPassed++
				} else {
					s.ChecksFailed++
				}
			}
		case RunFinished:
			p, _ := As[RunFinishedPayload](e)
			s.Status = p.Status
			s.DurationS = p.DurationS
			s.RowsRead = p.RowsRead
			s.RowsWritten = p.RowsWritten
			s.SnapshotID = p.SnapshotID
			s.Error = p.Error
		}
	}
	var out []v1.RunSummary
	last := map[string]int{}
	for _, k := range order {
		if k.attempt > last[k.run] {
			last[k.run] = k.attempt
		}
	}
	for _, k := range order {
		if !allAttempts && k.attempt != last[k.run] {
			continue
		}
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].Attempt > out[j].Attempt
	})
	return out
}
