package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchHoldsBlockedAndSpentWindows: ldp watch ran a window a data gate blocked, and one
// failed past its max_attempts, at every resync and every unrelated file change. Now the
// blocked window is attempted once across several resyncs and a change to another spec, and
// runs again (and publishes) once its source file changes; the failing one stops at its
// max_attempts (2). ldp diff and ldp status say which windows are held and why, and ldp
// schedule tick holds them too, until the late drop lands.
func TestWatchHoldsBlockedAndSpentWindows(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	specs := filepath.Join(l.dir, "specs")
	os.MkdirAll(filepath.Join(specs, "drops"), 0o755)
	const now = "2026-08-02T03:00:00Z"
	spec := func(name, extra string) string {
		return `{"identifier": "` + name + `", "metadata": {"schedule": "@daily", "window": {"size": "day"}` + extra + `,
			"source": {"format": "CSV", "path": "drops/` + name + `_{window_start:%Y-%m-%d}.csv"},
			"target": {"name": "` + name + `", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`
	}
	os.WriteFile(filepath.Join(specs, "gated.json"), []byte(spec("gated", `, "quality": [{"check": "range", "column": "amount", "min": 0}]`)), 0o644)
	os.WriteFile(filepath.Join(specs, "drops", "gated_2026-08-01.csv"), []byte("id,amount\n1,-5\n"), 0o644)
	os.WriteFile(filepath.Join(specs, "late.json"), []byte(spec("late", `, "retries": {"max_attempts": 2, "delay_s": 0}`)), 0o644)
	started := func(workflow string) int {
		b, _ := os.ReadFile(filepath.Join(specs, ".ldp", "events.jsonl"))
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"type":"workflow.started"`) && strings.Contains(line, `"workflow":"`+workflow+`"`) {
				n++
			}
		}
		return n
	}

	logs := &syncBuffer{}
	addr := freePort(t)
	w := l.cmd(nil, "watch", "specs", "--resync", "1s", "--debounce", "100ms", "--now", now, "--http", addr)
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	reconciles := func(n int) func() bool {
		return func() bool { return strings.Count(logs.String(), "msg=reconciled") >= n }
	}
	waitFor(t, "four reconciles", 90*time.Second, reconciles(4), logs)
	// A change to another spec file reconciles again: it leaves the held windows alone.
	writeAtomically(t, filepath.Join(specs, "other.json"), `{"identifier": "other", "metadata": {"source": {"format": "CSV", "path": "other.csv"},
		"target": {"name": "other", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`)
	waitFor(t, "a reconcile on the change", 60*time.Second, func() bool { return strings.Contains(logs.String(), "why=change") }, logs)
	n := strings.Count(logs.String(), "msg=reconciled")
	waitFor(t, "two more reconciles", 60*time.Second, reconciles(n+2), logs)
	if g, f := started("gated"), started("late"); g != 1 || f != 2 {
		t.Fatalf("the blocked window ran %d times (want 1), the failing one %d (want its 2 attempts):\n%s", g, f, logs.String())
	}

	// The page's /api/status, ldp status and ldp diff say which windows are held and why (the
	// watcher holds the lock; none of them takes it).
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	api, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, out, _ := l.run(t, nil, "status", "specs", "-o", "json", "--now", now)
	for _, b := range [][]byte{api, []byte(out)} {
		heldIn(t, b)
	}
	_, out, _ = l.run(t, nil, "status", "specs", "--now", now)
	if !strings.Contains(out, "held        2026-08-01T00:00:00Z/2026-08-02T00:00:00Z: task late failed 2 of 2 attempts") {
		t.Errorf("status does not say the window is held:\n%s", out)
	}
	_, out, _ = l.run(t, nil, "schedule", "list", "specs", "--now", now, "-o", "json")
	var list []struct {
		File string   `json:"file"`
		Due  []string `json:"due"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || len(list[0].Due)+len(list[1].Due) != 0 {
		t.Errorf("schedule list counts a held window as due (%v):\n%s", err, out)
	}
	code, out, _ := l.run(t, nil, "diff", "-f", "specs", "--now", now)
	if code != 0 || !strings.Contains(out, "held: blocked by check ") || !strings.Contains(out, "nothing would run: 2 windows are held until their source or spec changes") {
		t.Errorf("diff (exit %d) does not say the windows are held:\n%s", code, out)
	}

	// The blocked window's source is fixed: the watcher runs it again, and it publishes.
	os.WriteFile(filepath.Join(specs, "drops", "gated_2026-08-01.csv"), []byte("id,amount\n1,5\n2,7\n"), 0o644)
	waitFor(t, "the fixed window to publish", 60*time.Second, func() bool {
		_, out, _ := l.run(t, nil, "query", "specs/gated.json", "SELECT count(*) AS n FROM gated", "-o", "csv")
		return out == "n\n2\n"
	}, logs)
	if g, f := started("gated"), started("late"); g != 2 || f != 2 {
		t.Errorf("after the fix the gated window ran %d times (want 2), the failing one %d (want 2)", g, f)
	}

	w.Process.Signal(syscall.SIGTERM)
	if err := w.Wait(); err != nil {
		t.Fatalf("watch exited with %v:\n%s", err, logs.String())
	}

	// A tick holds the spent window as the watcher did, and runs it once its drop lands.
	if code, out, _ := l.run(t, nil, "schedule", "tick", "specs", "--now", now); code != 0 || started("late") != 2 {
		t.Fatalf("tick (exit %d) ran the held window (%d runs):\n%s", code, started("late"), out)
	}
	os.WriteFile(filepath.Join(specs, "drops", "late_2026-08-01.csv"), []byte("id,amount\n3,1\n"), 0o644)
	if code, out, _ := l.run(t, nil, "schedule", "tick", "specs", "--now", now); code != 0 || started("late") != 3 || !strings.Contains(out, "late 2026-08-01T00:00:00Z/2026-08-02T00:00:00Z: succeeded") {
		t.Fatalf("tick (exit %d) after the drop landed (%d runs):\n%s", code, started("late"), out)
	}
}

// heldIn checks that a status report (ldp status -o json, /api/status) says why the windows
// of 1 August are held.
func heldIn(t *testing.T, out []byte) {
	t.Helper()
	var rep struct {
		Objects []struct {
			Name string `json:"name"`
			Held []struct {
				Window  string `json:"window"`
				Kind    string `json:"kind"`
				Message string `json:"message"`
			} `json:"held"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	held := map[string]string{}
	for _, o := range rep.Objects {
		for _, h := range o.Held {
			if h.Window == "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z" {
				held[o.Name] = h.Kind + ": " + h.Message
			}
		}
	}
	if !strings.HasPrefix(held["gated"], "blocked: blocked by check ") || !strings.Contains(held["gated"], "waiting for a change to source or spec") ||
		!strings.HasPrefix(held["late"], "attempts_spent: task late failed 2 of 2 attempts; ") || !strings.Contains(held["late"], "ldp runs forget specs/late.json") {
		t.Fatalf("the status report says held: %q\n%s", held, out)
	}
}
