package controllers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/reconcile"
)

// TestFoldReadsBothWindowShapes: a ledger written before issue 30 carries a workflow event's
// window as "START/END", newer lines carry the object; the observer's fold (the plan's) and
// LastRuns (ldp status's, the tests') read both as one window, whose last run is the newer.
func TestFoldReadsBothWindowShapes(t *testing.T) {
	lines := strings.Join([]string{
		`{"type":"workflow.started","run_id":"r1","attempt":1,"seq":0,"payload":{"file":"daily.json","logical_window":"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z","tasks":["load"],"workflow":"daily"}}`,
		`{"type":"task.finished","run_id":"r1","attempt":1,"seq":1,"payload":{"attempts":1,"error":"","kind":"pipeline","status":"succeeded","task":"load","task_attempt":1,"task_run_id":"r1/load"}}`,
		`{"type":"workflow.finished","run_id":"r1","attempt":1,"seq":2,"payload":{"logical_window":"2026-08-01T00:00:00Z/2026-08-02T00:00:00Z","status":"succeeded","tasks":{"load":"succeeded"},"workflow":"daily"}}`,
		`{"type":"workflow.started","run_id":"r2","attempt":1,"seq":0,"payload":{"evidence":"e2","file":"daily.json","logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"},"replace":true,"tasks":["load"],"workflow":"daily"}}`,
		`{"type":"task.finished","run_id":"r2","attempt":1,"seq":1,"payload":{"attempts":1,"error":"no file","failed_checks":["n"],"kind":"pipeline","retriable":false,"retry_at":"2026-08-03T02:10:00Z","status":"failed","task":"load","task_attempt":3,"task_run_id":"r2/load"}}`,
		`{"type":"workflow.finished","run_id":"r2","attempt":1,"seq":2,"payload":{"logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"},"status":"failed","tasks":{"load":"failed"},"workflow":"daily"}}`,
	}, "\n") + "\n"
	st, path := observeLedger(t, lines)
	events, _, err := ledger.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	retry := time.Date(2026, 8, 3, 2, 10, 0, 0, time.UTC)
	for name, last := range map[string]map[v1.WindowKey]reconcile.LastRun{"observer": st.fold.lastRuns("daily", ""), "LastRuns": LastRuns(events, "daily")} {
		if len(last) != 1 {
			t.Fatalf("%s: windows %v, want one", name, last)
		}
		lr, ok := last[aug1.Key()]
		if !ok || lr.RunID != "r2" || !lr.Finished || lr.Tasks["load"] != v1.Failed || lr.Evidence != "e2" || !lr.RetryAt.Equal(retry) ||
			lr.TaskAttempts["load"] != 3 || !lr.Fatal["load"] || strings.Join(lr.Checks["load"], ",") != "n" {
			t.Errorf("%s: last run of %s is %+v, want r2, failed at attempt 3, fatal, retry at %s", name, aug1, lr, retry)
		}
	}
	if h := st.fold.history("daily", "")[aug1.Key()]; len(h) != 2 || h[0].RunID != "r1" || h[0].Tasks["load"] != v1.Succeeded {
		t.Errorf("history %+v, want r1 (the old line) then r2", h)
	}
}

// TestFoldKeepsEnvironmentsApart: a run of a window in dev is not the window's run on main,
// nor main's dev's: each environment's last run, history and dbt build are its own.
func TestFoldKeepsEnvironmentsApart(t *testing.T) {
	lines := strings.Join([]string{
		`{"type":"workflow.started","run_id":"m1","attempt":1,"seq":0,"payload":{"file":"daily.json","logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"},"tasks":["load"],"workflow":"daily"}}`,
		`{"type":"task.finished","run_id":"m1","attempt":1,"seq":1,"payload":{"attempts":1,"error":"no file","kind":"pipeline","status":"failed","task":"load","task_attempt":1,"task_run_id":"m1/load"}}`,
		`{"type":"workflow.started","run_id":"d1","attempt":1,"seq":0,"payload":{"env":"dev","file":"daily.json","logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"},"tasks":["load"],"workflow":"daily"}}`,
		`{"type":"task.finished","run_id":"d1","attempt":1,"seq":1,"payload":{"attempts":1,"error":"","fingerprint":"fp-dev","kind":"dbt","status":"succeeded","task":"load","task_attempt":1,"task_run_id":"d1/load"}}`,
		`{"type":"workflow.finished","run_id":"d1","attempt":1,"seq":2,"payload":{"env":"dev","logical_window":{"end":"2026-08-02T00:00:00Z","start":"2026-08-01T00:00:00Z"},"status":"succeeded","tasks":{"load":"succeeded"},"workflow":"daily"}}`,
	}, "\n") + "\n"
	st, _ := observeLedger(t, lines)
	if lr := st.fold.lastRuns("daily", "")[aug1.Key()]; lr.RunID != "m1" || lr.Tasks["load"] != v1.Failed || lr.Finished {
		t.Errorf("main's last run %+v, want m1, failed, unfinished", lr)
	}
	if lr := st.fold.lastRuns("daily", "dev")[aug1.Key()]; lr.RunID != "d1" || lr.Tasks["load"] != v1.Succeeded || !lr.Finished {
		t.Errorf("dev's last run %+v, want d1, succeeded", lr)
	}
	if h := st.fold.history("daily", "qa"); len(h) != 0 {
		t.Errorf("qa's history %v, want none", h)
	}
	if fp := st.fold.lastBuild("daily", "dev", aug1.String(), "load"); fp != "fp-dev" {
		t.Errorf("dev's last build %q, want fp-dev", fp)
	}
	if fp := st.fold.lastBuild("daily", "", aug1.String(), "load"); fp != "" {
		t.Errorf("main's last build %q, want none (main's run failed)", fp)
	}
	wf := &Object{Name: "daily", File: "daily.json"}
	if in, err := wf.InEnv("dev"); err != nil || in.Env != "dev" || wf.Env != "" {
		t.Errorf("InEnv: %+v %v (the object itself must stay on main)", in, err)
	}
	wf.Env = "dev"
	if _, err := wf.InEnv("qa"); err == nil || !strings.Contains(err.Error(), "runs in environment dev (metadata.env), not qa") {
		t.Errorf("InEnv of another environment: %v", err)
	}
	if _, err := (&Object{}).InEnv("Dev"); err == nil {
		t.Error("InEnv of a bad name: no error")
	}
}

// observeLedger writes lines as a ledger file and observes it as a reconcile does.
func observeLedger(t *testing.T, lines string) (*ledgerState, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := new(Observer).ledger(path)
	if err != nil {
		t.Fatal(err)
	}
	return st, path
}
