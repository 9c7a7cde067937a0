package ledger

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// RunSummary is one attempt of one run, as ldp runs shows it.
type RunSummary struct {
	RunID        string    `json:"run_id"`
	Attempt      int       `json:"attempt"`
	Pipeline     string    `json:"pipeline"`
	Window       string    `json:"logical_window,omitempty"`
	Status       string    `json:"status"`
	Started      time.Time `json:"started"`
	DurationS    float64   `json:"duration_s"`
	RowsRead     int64     `json:"rows_read"`
	RowsWritten  int64     `json:"rows_written"`
	ChecksPassed int       `json:"checks_passed"`
	ChecksFailed int       `json:"checks_failed"`
	SnapshotID   int64     `json:"snapshot_id,string,omitempty"`
	Key          string    `json:"idempotency_key,omitempty"`
	Error        string    `json:"error,omitempty"`
}

// StatusUnfinished is a run whose events end before run.finished (killed, or still running).
const StatusUnfinished = "unfinished"

// Summarize folds pipeline-run events into one summary per attempt of each run, newest first;
// with allAttempts false, only the last attempt of each run.
func Summarize(events []Event, allAttempts bool) []RunSummary {
	type key struct {
		run     string
		attempt int
	}
	byKey := map[key]*RunSummary{}
	var order []key
	for _, e := range events {
		if !strings.HasPrefix(e.Type, "run.") && e.Type != QualityEvaluated {
			continue
		}
		k := key{e.RunID, e.Attempt}
		s, ok := byKey[k]
		if !ok {
			s = &RunSummary{RunID: e.RunID, Attempt: e.Attempt, Status: StatusUnfinished, Started: e.TS}
			byKey[k] = s
			order = append(order, k)
		}
		p := e.Payload
		switch e.Type {
		case RunStarted:
			s.Started = e.TS
			s.Pipeline = str(p["pipeline"])
			s.Key = str(p["idempotency_key"])
			if w, ok := p["logical_window"].(map[string]any); ok {
				s.Window = str(w["start"]) + "/" + str(w["end"])
			}
		case RunExtracted:
			s.RowsRead = num(p["rows_read"])
		case QualityEvaluated:
			s.ChecksPassed, s.ChecksFailed = 0, 0
			if checks, ok := p["checks"].([]any); ok {
				for _, c := range checks {
					if m, ok := c.(map[string]any); ok && m["passed"] == true {
						s.ChecksPassed++
					} else {
						s.ChecksFailed++
					}
				}
			}
		case RunFinished:
			s.Status = str(p["status"])
			s.DurationS = float(p["duration_s"])
			s.RowsRead = num(p["rows_read"])
			s.RowsWritten = num(p["rows_written"])
			s.SnapshotID = num(p["snapshot_id"])
			s.Error = str(p["error"])
		}
	}
	var out []RunSummary
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

func num(v any) int64 {
	switch t := v.(type) {
	case json.Number:
		n, err := t.Int64()
		if err != nil {
			f, _ := t.Float64()
			return int64(f)
		}
		return n
	case float64:
		return int64(t)
	case int64:
		return t
	case int:
		return int64(t)
	}
	return 0
}

func float(v any) float64 {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case float64:
		return t
	}
	return 0
}
