package controllers

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// TestWatchDoesNotBlockOnARetry: one object's window fails with a retriable error and waits
// for its retry, while another object's due window publishes in the same reconcile; the
// watcher sleeps on nothing (it blocked on the backoff before), and asks to come back when the
// retry is due. A reconcile before then leaves the waiting window alone; one at the retry runs
// it as attempt 2 of the same run, which publishes once the drop has landed. The clock is a
// fake: no test sleeps.
func TestWatchDoesNotBlockOnARetry(t *testing.T) {
	dir := t.TempDir()
	spec := func(name, retries string) string {
		return `{"identifier": "` + name + `", "metadata": {"schedule": "0 1 * * *", "window": {"size": "day"}` + retries + `,
			"source": {"format": "CSV", "path": "drops/` + name + `_{window_start:%Y-%m-%d}.csv"},
			"target": {"name": "` + name + `", "format": "ICEBERG", "catalog": {"identifier": "lake"}}}}`
	}
	put(t, dir, "late.json", spec("late", `, "retries": {"max_attempts": 3, "delay_s": 600}`))
	put(t, dir, "ontime.json", spec("ontime", ""))
	put(t, dir, "drops/ontime_2026-08-01.csv", "id\n1\n")

	now := time.Date(2026, 8, 2, 3, 0, 0, 0, time.UTC)
	var logs bytes.Buffer
	r := &Runner{Now: func() time.Time { return now }, Rand: rand.New(rand.NewPCG(1, 2)), Log: &logs,
		Sleep: func(d time.Duration) { t.Fatalf("the watcher slept %s on a retry", d) }}
	w := &Watcher{Dir: dir, Runner: r, Now: func() time.Time { return now }, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	w.setup()
	ctx := context.Background()

	w.reconcile(ctx, "start")
	if keys := keysOn(t, dir, "ontime"); len(keys) != 1 {
		t.Fatalf("the on-time window published %d keys, want 1\n%s", len(keys), logs.String())
	}
	last := lastRun(t, dir, "late")
	if last.Attempt != 1 || last.Tasks["late"] != v1.Failed || last.RetryAt.IsZero() {
		t.Fatalf("the late window's run: %+v, want attempt 1 failed with a retry due\n%s", last, logs.String())
	}
	if wait := last.RetryAt.Sub(now); wait <= 0 || wait > 600*time.Second || !w.requeueAt.After(time.Now()) {
		t.Fatalf("retry due in %s (requeue at %s), want within the 600 s backoff", wait, w.requeueAt)
	}

	// Before the retry is due, the waiting window is left alone.
	now = now.Add(time.Millisecond)
	w.reconcile(ctx, "change")
	if again := lastRun(t, dir, "late"); again.RunID != last.RunID || again.Attempt != 1 {
		t.Fatalf("the waiting window ran before its retry: %+v", again)
	}

	// At the retry, with the drop landed: attempt 2 of the same run publishes.
	put(t, dir, "drops/late_2026-08-01.csv", "id\n7\n")
	now = last.RetryAt
	w.reconcile(ctx, "requeue")
	retried := lastRun(t, dir, "late")
	if retried.RunID != last.RunID || retried.Attempt != 2 || retried.Tasks["late"] != v1.Succeeded {
		t.Fatalf("the retry: %+v, want attempt 2 of run %s succeeded\n%s", retried, last.RunID, logs.String())
	}
	if keys := keysOn(t, dir, "late"); len(keys) != 1 {
		t.Fatalf("the late window published %d keys, want 1", len(keys))
	}
	if strings.Contains(logs.String(), "retrying in") {
		t.Errorf("the runner announced a sleep:\n%s", logs.String())
	}
}

func lastRun(t *testing.T, dir, name string) (out struct {
	RunID   string
	Attempt int
	Tasks   map[string]v1.Outcome
	RetryAt time.Time
}) {
	t.Helper()
	wf, err := LoadWorkflow(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	events, _, err := ledger.Read(wf.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	l := LastRuns(events, wf.Name)[aug1.Key()]
	out.RunID, out.Attempt, out.Tasks, out.RetryAt = l.RunID, l.Attempt, l.Tasks, l.RetryAt
	return out
}

func keysOn(t *testing.T, dir, name string) map[string]bool {
	t.Helper()
	wf, err := LoadWorkflow(filepath.Join(dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := Observe(context.Background(), wf)
	if err != nil {
		t.Fatal(err)
	}
	return obs.Keys[wf.Planning().Tasks[0].Target]
}
