package controllers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/testfiles"
	"github.com/ldp-dev/ldp/reconcile"
)

var aug1 = v1.LogicalWindow{Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}

var put = testfiles.Put

// pipelineSpec is a daily pipeline reading drops/<name>_<day>.csv into table <name>.
func pipelineSpec(name string) string {
	return fmt.Sprintf(`{"identifier": %q, "metadata": {"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/%s_{window_start:%%Y-%%m-%%d}.csv"},
		"target": {"name": %q, "format": "ICEBERG", "catalog": {"identifier": "lake"}},
		"quality": [{"check": "row_count", "min": 1}]}}`, name, name, name)
}

// chainWorkflow writes a workflow of four pipeline tasks: a -> b -> c, and d on its own.
func chainWorkflow(t *testing.T, retries string) (string, *Object) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		put(t, dir, n+".json", pipelineSpec(n))
		if n != "b" {
			put(t, dir, "drops/"+n+"_2026-08-01.csv", "id,v\n1,10\n")
		}
	}
	put(t, dir, "wf.json", `{"kind": "Workflow", "identifier": "chain", "metadata": {"window": {"size": "day"}`+retries+`}, "tasks": [
		{"id": "a", "pipeline": "a.json"}, {"id": "b", "pipeline": "b.json", "depends_on": ["a"]},
		{"id": "c", "pipeline": "c.json", "depends_on": ["b"]}, {"id": "d", "pipeline": "d.json"}]}`)
	wf, err := LoadWorkflow(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, wf
}

func statuses(res *WindowResult) string {
	var out []string
	for _, t := range res.Tasks {
		out = append(out, t.ID+"="+string(t.Status))
	}
	return strings.Join(out, " ")
}

// TestMiddleOfTheChainFails: b fails, so c is upstream_failed and d still runs; exit 1. After
// the cause is fixed, running the window again runs only what is left.
func TestMiddleOfTheChainFails(t *testing.T) {
	dir, wf := chainWorkflow(t, "")
	ctx := context.Background()
	r := &Runner{Sleep: func(time.Duration) { t.Fatal("no retry is configured, nothing may wait") }}
	res := r.Run(ctx, wf, aug1, RunOptions{})
	if got := statuses(res); got != "a=succeeded b=failed c=upstream_failed d=succeeded" {
		t.Fatalf("outcomes %s", got)
	}
	if res.Outcome() != v1.Failed || res.Status != v1.Failed {
		t.Errorf("outcome %s status %s, want failed", res.Outcome(), res.Status)
	}
	events, _, _ := ledger.Read(wf.Ledger)
	last := LastRuns(events, wf.Name)[aug1.Key()]
	if !last.Finished || last.Tasks["b"] != v1.Failed || last.Tasks["c"] != v1.UpstreamFailed {
		t.Errorf("ledger's last run %+v", last)
	}
	obs, err := Observe(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	plan := reconcile.Plan(wf.Planning(), []v1.LogicalWindow{aug1}, obs, reconcile.Options{})[0]
	if plan.State != v1.StateFailed || plan.Action != v1.ActionResume {
		t.Errorf("plan %s/%s, want failed/resume", plan.State, plan.Action)
	}
	// Fix the cause and resume as the next attempt of the same run.
	put(t, dir, "drops/b_2026-08-01.csv", "id,v\n2,20\n")
	res2 := r.Run(ctx, wf, aug1, RunOptions{Plan: &plan, RunID: plan.LastRun.RunID, Attempt: plan.LastRun.Attempt + 1})
	if got := statuses(res2); got != "a=skipped b=succeeded c=succeeded d=skipped" || res2.Outcome() != v1.Succeeded {
		t.Errorf("resume outcomes %s, run %s", got, res2.Outcome())
	}
	obs, _ = Observe(ctx, wf)
	if p := reconcile.Plan(wf.Planning(), []v1.LogicalWindow{aug1}, obs, reconcile.Options{}); reconcile.Pending(p) {
		t.Errorf("after the resume the window is still %s", p[0].State)
	}
}

// TestRetriesWaitWithFullJitter: a task failing with a retriable error is retried with the same
// run id and the attempt counting up, each wait random within [0, delay * backoff^(n-1)];
// a config error is not retried.
func TestRetriesWaitWithFullJitter(t *testing.T) {
	_, wf := chainWorkflow(t, `, "retries": {"max_attempts": 4, "delay_s": 10, "backoff": 3}`)
	var waits []time.Duration
	r := &Runner{Sleep: func(d time.Duration) { waits = append(waits, d) }, Rand: rand.New(rand.NewPCG(1, 2))}
	res := r.Run(context.Background(), wf, aug1, RunOptions{RunID: "wf-run"})
	var b TaskResult
	for _, tr := range res.Tasks {
		if tr.ID == "b" {
			b = tr
		}
	}
	if b.Status != v1.Failed || b.Attempts != 4 || len(waits) != 3 {
		t.Fatalf("b %+v after %d waits; want 4 attempts and 3 waits", b, len(waits))
	}
	for i, w := range waits {
		limit := 10 * time.Second
		for j := 0; j < i; j++ {
			limit *= 3
		}
		if w < 0 || w > limit {
			t.Errorf("wait %d = %v, outside [0, %v]", i+1, w, limit)
		}
	}
	events, _, _ := ledger.Read(wf.Ledger)
	var attempts []string
	for _, e := range events {
		if e.Type == ledger.TaskStarted && e.Payload["task"] == "b" {
			attempts = append(attempts, fmt.Sprint(e.Payload["task_attempt"]))
			if e.Payload["task_run_id"] != "wf-run/b" {
				t.Errorf("retry changed the task's run id: %v", e.Payload["task_run_id"])
			}
		}
	}
	if strings.Join(attempts, ",") != "1,2,3,4" {
		t.Errorf("task b attempts %v, want 1,2,3,4", attempts)
	}
	// The wait of a late attempt is capped at a day.
	if w := (Policy{Delay: time.Hour, Backoff: 10}).Wait(9, 0.999); w > MaxWait {
		t.Errorf("wait %v exceeds a day", w)
	}
}

func TestConfigErrorsAndGatesAreNotRetried(t *testing.T) {
	dir, wf := chainWorkflow(t, `, "retries": {"max_attempts": 5, "delay_s": 1}`)
	// b's rows fail its check (a data gate); d's window column does not exist (a config error).
	put(t, dir, "drops/b_2026-08-01.csv", "id,v\n")
	put(t, dir, "d.json", strings.Replace(pipelineSpec("d"), `{"size": "day"}`, `{"size": "day", "column": "nope"}`, 1))
	wf, err := LoadWorkflow(wf.File)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Sleep: func(time.Duration) { t.Error("a non-retriable error waited for a retry") }}
	res := r.Run(context.Background(), wf, aug1, RunOptions{})
	for _, tr := range res.Tasks {
		if (tr.ID == "b" || tr.ID == "d") && tr.Attempts != 1 {
			t.Errorf("%s was tried %d times", tr.ID, tr.Attempts)
		}
	}
	if got := statuses(res); got != "a=succeeded b=blocked c=upstream_failed d=failed" || res.Outcome() != v1.Failed {
		t.Errorf("outcomes %s, run %s", got, res.Outcome())
	}
}

func TestDueWindowOfASchedule(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	wf := &Object{Schedule: "5 2 * * *", File: "wf.json"}
	wf.Window.Location, wf.Window.Size = paris, "day"
	w, err := DueWindow(wf, time.Date(2026, 8, 5, 0, 30, 0, 0, time.UTC)) // 02:30 in Paris
	if err != nil || w.String() != "2026-08-03T22:00:00Z/2026-08-04T22:00:00Z" {
		t.Errorf("due window %s, %v; want 4 August in Paris", w, err)
	}
	hourly := &Object{Schedule: "@hourly"}
	hourly.Window.Location = time.UTC
	w, _ = DueWindow(hourly, time.Date(2026, 8, 5, 10, 30, 0, 0, time.UTC))
	if w.String() != "2026-08-05T09:00:00Z/2026-08-05T10:00:00Z" {
		t.Errorf("hourly due window %s", w)
	}
	interval := &Object{Schedule: "0 */6 * * *"}
	interval.Window.Location = time.UTC
	w, _ = DueWindow(interval, time.Date(2026, 8, 5, 13, 0, 0, 0, time.UTC))
	if w.String() != "2026-08-05T06:00:00Z/2026-08-05T12:00:00Z" {
		t.Errorf("interval due window %s", w)
	}
}

// TestLastRunsKeepsWorkflowsApart: two workflows in one folder share its ledger; each reads
// only its own runs.
func TestLastRunsKeepsWorkflowsApart(t *testing.T) {
	ev := func(run, wf, typ string, payload map[string]any) v1.LedgerEvent {
		if payload == nil {
			payload = map[string]any{}
		}
		payload["workflow"] = wf
		payload["logical_window"] = aug1.String()
		return v1.LedgerEvent{RunID: run, Attempt: 1, Type: typ, Payload: payload}
	}
	events := []v1.LedgerEvent{
		ev("a", "first", ledger.WorkflowStarted, nil),
		ev("a", "first", ledger.TaskFinished, map[string]any{"task": "x", "status": v1.Failed}),
		ev("a", "first", ledger.WorkflowFinished, nil),
		ev("b", "second", ledger.WorkflowStarted, nil),
		ev("b", "second", ledger.TaskFinished, map[string]any{"task": "y", "status": v1.Succeeded}),
		ev("b", "second", ledger.WorkflowFinished, nil),
	}
	if got := LastRuns(events, "first")[aug1.Key()]; got.RunID != "a" || got.Tasks["x"] != v1.Failed {
		t.Errorf("first's last run %+v", got)
	}
	if got := LastRuns(events, "second")[aug1.Key()]; got.RunID != "b" || got.Tasks["y"] != v1.Succeeded {
		t.Errorf("second's last run %+v", got)
	}
}
