package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/flock"
)

// syncBuffer is a bytes.Buffer safe to read while a process writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool, logs *syncBuffer) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the process logged:\n%s", what, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// writeAtomically writes a file as editors do: a temporary file renamed into place.
func writeAtomically(t *testing.T, path, body string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// freePort is an address on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func portOf(addr string) int {
	p, _ := strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
	return p
}

func TestWatchEndToEnd(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	specs := filepath.Join(l.dir, "specs")
	os.MkdirAll(filepath.Join(specs, "drops"), 0o755)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	os.WriteFile(filepath.Join(specs, "drops", "orders_"+yesterday+".csv"), []byte("order_id,amount\n1,10\n2,20\n"), 0o644)
	spec := func(table, schedule string) string {
		return fmt.Sprintf(`{"identifier": %q, "metadata": {"schedule": %q, "window": {"size": "day"},
			"source": {"format": "CSV", "path": "drops/orders_{window_start:%%Y-%%m-%%d}.csv"},
			"target": {"name": %q, "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`, table, schedule, table)
	}
	addr := freePort(t)
	logs := &syncBuffer{}
	w := l.cmd(nil, "watch", "specs", "--resync", "2s", "--debounce", "100ms", "--metrics-addr", addr)
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	waitFor(t, "the watcher to start", 30*time.Second, func() bool { return strings.Contains(logs.String(), "reconciled") }, logs)

	published := func(table string) func() bool {
		return func() bool {
			_, out, _ := l.run(t, nil, "commits", "specs/orders.json", "--json")
			return strings.Contains(out, yesterday) && strings.Contains(mustRead(t, filepath.Join(specs, "orders.json")), table)
		}
	}
	// Drop a spec: its due window (yesterday, by @daily) is published.
	writeAtomically(t, filepath.Join(specs, "orders.json"), spec("orders", "@daily"))
	waitFor(t, "the dropped spec's window to publish", 60*time.Second, published("orders"), logs)

	// Replace it with an invalid version: reported, and the last valid version stays in force.
	writeAtomically(t, filepath.Join(specs, "orders.json"), spec("orders", "61 * * * *"))
	waitFor(t, "the invalid spec to be reported", 30*time.Second, func() bool {
		return strings.Contains(logs.String(), "invalid cron expression") && strings.Contains(logs.String(), "keeping the last valid version in force")
	}, logs)

	// Fix it (a new table): it runs.
	writeAtomically(t, filepath.Join(specs, "orders.json"), spec("orders_v2", "@daily"))
	waitFor(t, "the fixed spec to run", 60*time.Second, func() bool {
		_, out, _ := l.run(t, nil, "query", "specs/orders.json", "SELECT count(*) AS n FROM orders_v2", "-o", "csv")
		return out == "n\n2\n"
	}, logs)

	// /healthz and /metrics answer. The watcher counts a window once its reconcile returns,
	// a moment after the commit the query above saw: wait for the count.
	metrics := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	waitFor(t, "the metrics to count two published windows", 30*time.Second, func() bool {
		m := metrics()
		return strings.Contains(m, `ldp_windows_total{object="orders",outcome="published"} 1`) && strings.Contains(m, `ldp_windows_total{object="orders_v2",outcome="published"} 1`)
	}, logs)
	if m := metrics(); !strings.Contains(m, "ldp_reconciles_total") || !strings.Contains(m, `ldp_last_success_timestamp_seconds{object="orders_v2"}`) {
		t.Errorf("metrics:\n%s", m)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v", err)
	}

	// Delete it: no longer scheduled.
	os.Remove(filepath.Join(specs, "orders.json"))
	waitFor(t, "the deleted spec to stop", 30*time.Second, func() bool { return strings.Contains(logs.String(), "no longer scheduled") }, logs)

	// SIGTERM: a clean exit 0, and the lock is free.
	w.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch exited with %v after SIGTERM:\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not exit after SIGTERM")
	}
	lock, err := flock.TryLock(filepath.Join(specs, ".ldp", "locks", "schedule.lock"))
	if err != nil {
		t.Fatalf("the lock is still held after watch exited: %v", err)
	}
	lock.Release()
}

func mustRead(t *testing.T, path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestWatchSIGTERMMidTask: the watcher is stopped right after staging a window (mid-task),
// SIGTERM arrives, then it resumes: the running task finishes and publishes, nothing new
// starts, and it exits 0 with the lock released.
func TestWatchSIGTERMMidTask(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	specs := filepath.Join(l.dir, "specs")
	os.MkdirAll(filepath.Join(specs, "drops"), 0o755)
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	os.WriteFile(filepath.Join(specs, "drops", "orders_"+yesterday+".csv"), []byte("order_id,amount\n1,10\n"), 0o644)
	os.WriteFile(filepath.Join(specs, "orders.json"), []byte(`{"identifier": "orders", "metadata": {"schedule": "@daily", "window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`), 0o644)
	logs := &syncBuffer{}
	w := l.cmd([]string{"LDP_FAULT=staged:stop"}, "watch", "specs", "--resync", "1h")
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	waitFor(t, "the watcher to stop mid-task", 60*time.Second, func() bool { return procState(w.Process.Pid) == 'T' }, logs)
	w.Process.Signal(syscall.SIGTERM)
	w.Process.Signal(syscall.SIGCONT)
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch exited with %v:\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("watch did not exit after SIGTERM")
	}
	_, out, _ := l.run(t, nil, "commits", "specs/orders.json", "--json")
	if !strings.Contains(out, yesterday) {
		t.Errorf("the task running at SIGTERM did not finish its publish:\n%s\n%s", out, logs.String())
	}
	lock, err := flock.TryLock(filepath.Join(specs, ".ldp", "locks", "schedule.lock"))
	if err != nil {
		t.Fatalf("the lock is still held: %v", err)
	}
	lock.Release()
}

// TestWatchSaysWhatItPassesOverAndWhyWindowsFail: a spec over 1 MB in the watched folder is
// said to be passed over (once), not ignored without a word, and a window that fails says why.
func TestWatchSaysWhatItPassesOverAndWhyWindowsFail(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	specs := filepath.Join(l.dir, "specs")
	os.MkdirAll(specs, 0o755)
	big := `{"identifier": "big", "description": "` + strings.Repeat("x", 1<<20) + `", "metadata": {"schedule": "@daily",
		"source": {"format": "CSV", "path": "big.csv"}, "target": {"name": "big", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`
	os.WriteFile(filepath.Join(specs, "big.json"), []byte(big), 0o644)
	// Its drop never lands: the window fails, naming the file.
	os.WriteFile(filepath.Join(specs, "orders.json"), []byte(`{"identifier": "orders", "metadata": {"schedule": "@daily", "window": {"size": "day"},
		"retries": {"max_attempts": 1},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`), 0o644)
	logs := &syncBuffer{}
	w := l.cmd(nil, "watch", "specs", "--resync", "1s", "--debounce", "100ms")
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	waitFor(t, "two reconciles", 60*time.Second, func() bool { return strings.Count(logs.String(), "reconciled") >= 2 }, logs)
	out := logs.String()
	if n := strings.Count(out, "passed over"); n != 1 || !strings.Contains(out, "big.json") || !strings.Contains(out, "larger than the 1048576-byte limit") {
		t.Errorf("the 1 MB spec was said to be passed over %d times, want once naming it:\n%s", n, out)
	}
	if !strings.Contains(out, "reason") || !strings.Contains(out, "does not exist") {
		t.Errorf("the failed window's line gives no reason:\n%s", out)
	}
}

// A YAML syntax error is not a deletion: the file is reported with its position, its last
// valid version stays in force, and the page lists it as invalid.
func TestWatchKeepsASpecWithASyntaxError(t *testing.T) {
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	specs := filepath.Join(l.dir, "specs")
	os.MkdirAll(specs, 0o755)
	spec := filepath.Join(specs, "orders.yaml")
	writeAtomically(t, spec, `identifier: orders
metadata:
  schedule: "@daily"
  window: {size: day}
  retries: {max_attempts: 1}
  source: {format: CSV, path: "drops/orders_{window_start:%Y-%m-%d}.csv"}
  target: {name: orders, format: ICEBERG, catalog: {identifier: shop}}
`)
	addr := freePort(t)
	logs := &syncBuffer{}
	w := l.cmd(nil, "watch", "specs", "--resync", "1s", "--debounce", "100ms", "--http", addr)
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Process.Kill()
	waitFor(t, "the watcher to start", 60*time.Second, func() bool { return strings.Contains(logs.String(), "reconciled") }, logs)

	writeAtomically(t, spec, "identifier: orders\nmetadata:\n  schedule: \"@daily\n  window: [day\n")
	waitFor(t, "the syntax error to be reported", 60*time.Second, func() bool {
		return strings.Contains(logs.String(), "keeping the last valid version in force")
	}, logs)
	out := logs.String()
	if strings.Contains(out, "no longer scheduled") {
		t.Errorf("a syntax error was taken for a deletion:\n%s", out)
	}
	if !regexp.MustCompile(`level=ERROR msg="invalid spec" problem="[^"]*orders\.yaml:\d+:\d+: [^"]+"`).MatchString(out) {
		t.Errorf("the syntax error's line does not say file:line:col: what:\n%s", out)
	}
	resp, err := http.Get("http://" + addr + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep struct {
		Invalid []struct {
			File     string   `json:"file"`
			Problems []string `json:"problems"`
		} `json:"invalid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Invalid) != 1 || !strings.HasSuffix(rep.Invalid[0].File, "orders.yaml") || len(rep.Invalid[0].Problems) == 0 {
		t.Errorf("the page's invalid list is %+v, want orders.yaml with its problem", rep.Invalid)
	}
}

// TestWatchJSONLogsAreJSONLines: under --log-format json every line on stderr is a JSON record,
// the runs' check lines too, and only the failed checks are logged (every one with -v).
func TestWatchJSONLogsAreJSONLines(t *testing.T) {
	t.Parallel()
	for _, verbose := range []bool{false, true} {
		l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
		specs := filepath.Join(l.dir, "specs")
		os.MkdirAll(specs, 0o755)
		os.WriteFile(filepath.Join(specs, "orders.csv"), []byte("order_id,amount\n1,10\n"), 0o644)
		os.WriteFile(filepath.Join(specs, "orders.json"), []byte(`{"identifier": "orders", "metadata": {"schedule": "@daily", "window": {"size": "day"},
			"retries": {"max_attempts": 1},
			"source": {"format": "CSV", "path": "orders.csv"},
			"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
			"quality": [{"check": "row_count", "min": 1}, {"check": "range", "column": "amount", "min": 100}]}}`), 0o644)
		logs := &syncBuffer{}
		args := []string{"watch", "specs", "--resync", "1s", "--debounce", "100ms", "--log-format", "json"}
		if verbose {
			args = append(args, "-v")
		}
		w := l.cmd(nil, args...)
		w.Stderr = logs
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a reconcile", 60*time.Second, func() bool { return strings.Contains(logs.String(), `"msg":"reconciled"`) }, logs)
		w.Process.Kill()
		w.Wait()
		out := logs.String()
		var failed, passed int
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("a line of --log-format json is not JSON: %q\n%s", line, out)
			}
			if rec["msg"] == "check" {
				if rec["passed"] == true {
					passed++
				} else {
					failed++
				}
			}
		}
		wantPassed := 0
		if verbose {
			wantPassed = 1
		}
		if failed != 1 || passed != wantPassed {
			t.Errorf("with -v %v: %d failed and %d passed check records, want 1 and %d:\n%s", verbose, failed, passed, wantPassed, out)
		}
	}
}
