package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
)

// TestEightProcessesShareALedger: eight ldp processes append to one ledger at once; every line
// parses, none is interleaved with another, none is lost.
func TestEightProcessesShareALedger(t *testing.T) {
	t.Parallel()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	l.write(t, "orders.csv", "order_id,amount\n1,10\n2,20\n")
	l.write(t, "export.json", `{"identifier": "export", "metadata": {"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "out", "format": "PARQUET", "path": "out/orders.parquet"},
		"quality": [{"check": "row_count", "min": 1}]}}`)
	const procs, runs = 8, 3
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < runs; i++ {
				if code, _, errs := l.run(t, nil, "run", "export.json"); code != 0 {
					t.Errorf("run: %d %s", code, errs)
				}
			}
		}()
	}
	wg.Wait()
	raw, err := os.ReadFile(filepath.Join(l.dir, ".ldp", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	perRun := map[string][]int{}
	for i, line := range lines {
		var e v1.LedgerEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d does not parse (interleaved?): %v\n%s", i+1, err, line)
		}
		perRun[e.RunID] = append(perRun[e.RunID], e.Seq)
	}
	if len(perRun) != procs*runs || len(lines) != procs*runs*5 {
		t.Fatalf("%d runs and %d lines, want %d runs of 5 events", len(perRun), len(lines), procs*runs)
	}
	for id, seqs := range perRun {
		if fmt.Sprint(seqs) != "[0 1 2 3 4]" {
			t.Errorf("run %s has events %v, want [0 1 2 3 4] in order", id, seqs)
		}
	}
	code, out, _ := l.run(t, nil, "runs", "export.json", "--limit", "0", "--json")
	var sums []v1.RunSummary
	if code != 0 || json.Unmarshal([]byte(out), &sums) != nil || len(sums) != procs*runs || sums[0].Status != "published" {
		t.Errorf("ldp runs: %d runs, exit %d", len(sums), code)
	}
}

// lineageServer records the OpenLineage events POSTed to it.
type lineageServer struct {
	mu     sync.Mutex
	events []map[string]any
	auth   []string
	paths  []string
}

func (s *lineageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var e map[string]any
	json.Unmarshal(b, &e)
	s.mu.Lock()
	s.events = append(s.events, e)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func runInProcess(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &streams{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

func get(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func TestOpenLineageReachesAServer(t *testing.T) {
	srv := &lineageServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "drops"), 0o755)
	os.WriteFile(filepath.Join(dir, "drops", "orders_2026-08-02.csv"), []byte("order_id,amount\n1,10\n2,20\n"), 0o644)
	spec := fmt.Sprintf(`{"identifier": "orders", "metadata": {
		"window": {"size": "day", "timezone": "Europe/Paris"},
		"source": {"name": "orders", "format": "CSV", "path": "drops/orders_{window_start:%%Y-%%m-%%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		"quality": [{"check": "row_count", "min": 1}, {"check": "range", "column": "amount", "min": 0}],
		"observability": {"sinks": [{"type": "openlineage", "url": %q, "api_key_env": "LINEAGE_TOKEN", "namespace": "team"}]}}}`, ts.URL)
	os.WriteFile(filepath.Join(dir, "orders.json"), []byte(spec), 0o644)
	env := map[string]string{"LINEAGE_TOKEN": "tok-123"}
	if code, _, errs := runInProcess(t, dir, env, "run", "orders.json", "--window", "2026-08-02/2026-08-03"); code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	if len(srv.events) != 2 {
		t.Fatalf("server got %d events, want START and COMPLETE", len(srv.events))
	}
	start, done := srv.events[0], srv.events[1]
	if start["eventType"] != "START" || done["eventType"] != "COMPLETE" {
		t.Errorf("event types %v %v", start["eventType"], done["eventType"])
	}
	for i := range srv.events {
		if srv.paths[i] != "/api/v1/lineage" || srv.auth[i] != "Bearer tok-123" {
			t.Errorf("event %d: path %q auth %q", i, srv.paths[i], srv.auth[i])
		}
	}
	checks := map[string]any{
		"schemaURL":     "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
		"job.namespace": "team",
		"job.name":      "orders",
		"run.facets.nominalTime.nominalStartTime": "2026-08-01T22:00:00Z",
		"run.facets.nominalTime.nominalEndTime":   "2026-08-02T22:00:00Z",
	}
	for path, want := range checks {
		if got := get(done, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if get(start, "run", "runId") != get(done, "run", "runId") || len(get(done, "run", "runId").(string)) != 36 {
		t.Errorf("runId %v / %v", get(start, "run", "runId"), get(done, "run", "runId"))
	}
	in := done["inputs"].([]any)[0]
	out := done["outputs"].([]any)[0]
	if get(in, "namespace") != "file" || !strings.HasSuffix(get(in, "name").(string), "drops/orders_2026-08-02.csv") {
		t.Errorf("input %v", in)
	}
	if fields := get(in, "facets", "schema", "fields").([]any); len(fields) != 2 {
		t.Errorf("schema facet %v", fields)
	}
	if as := get(in, "inputFacets", "dataQualityAssertions", "assertions").([]any); len(as) != 2 || get(as[1], "column") != "amount" || get(as[1], "success") != true {
		t.Errorf("assertions %v", as)
	}
	if get(out, "name") != "shop.orders" || get(out, "outputFacets", "outputStatistics", "rowCount") != float64(2) {
		t.Errorf("output %v", out)
	}

	// A blocked run ends with FAIL and its error message.
	os.WriteFile(filepath.Join(dir, "drops", "orders_2026-08-03.csv"), []byte("order_id,amount\n3,-5\n"), 0o644)
	if code, _, _ := runInProcess(t, dir, env, "run", "orders.json", "--window", "2026-08-03/2026-08-04"); code != 3 {
		t.Fatalf("blocked run exit %d, want 3", code)
	}
	fail := srv.events[len(srv.events)-1]
	if fail["eventType"] != "FAIL" || !strings.Contains(get(fail, "run", "facets", "errorMessage", "message").(string), "data gate") {
		t.Errorf("FAIL event %v", fail)
	}
}

func TestLineageServerDownOrHangingDoesNotFailTheRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer hang.Close()
	for name, url := range map[string]string{"down": down, "hanging": hang.URL} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "orders.csv"), []byte("order_id,amount\n1,10\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "orders.json"), []byte(fmt.Sprintf(`{"identifier": "orders", "metadata": {
				"source": {"format": "CSV", "path": "orders.csv"},
				"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
				"observability": {"sinks": [{"type": "openlineage", "url": %q, "timeout_s": 0.3}]}}}`, url)), 0o644)
			start := time.Now()
			code, out, errs := runInProcess(t, dir, nil, "run", "orders.json")
			if code != 0 || !strings.Contains(out, ": published") {
				t.Fatalf("run with the lineage server %s: exit %d\n%s%s", name, code, out, errs)
			}
			if !strings.Contains(errs, "warning: event sink: OpenLineage endpoint") {
				t.Errorf("no warning for the %s server: %q", name, errs)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("the run waited %v for a %s server", time.Since(start), name)
			}
			events, _, _ := ledger.Read(filepath.Join(dir, ".ldp", "events.jsonl"))
			if len(events) == 0 || events[len(events)-1].Type != ledger.RunFinished {
				t.Errorf("the ledger is incomplete: %d events", len(events))
			}
		})
	}
}

// TestSecretsStayOut: a run whose spec and error message hold each kind of secret leaves none
// of them in the ledger, the OpenLineage output, the logs or stderr.
func TestSecretsStayOut(t *testing.T) {
	dir := t.TempDir()
	secrets := []string{"hunter2pass", "ghp_abcdefghijklmnop1234", "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9.e30.sig", "MIIEvQIBADANBgkqhkiG"}
	path := "s3://ldp:hunter2pass@bucket/AKIAIOSFODNN7EXAMPLE/token=ghp_abcdefghijklmnop1234/orders.csv"
	spec := fmt.Sprintf(`{"identifier": "orders", "description": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "metadata": {
		"source": {"format": "CSV", "path": %q},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		"observability": {"sinks": [{"type": "openlineage", "path": "lineage.jsonl"}]}}}`, path)
	os.WriteFile(filepath.Join(dir, "orders.json"), []byte(spec), 0o644)
	code, out, errs := runInProcess(t, dir, nil, "-v", "run", "orders.json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the source is not there)\n%s", code, errs)
	}
	// An error message with a PEM block goes through the same redactor.
	var pem bytes.Buffer
	run(context.Background(), []string{"run", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG\n-----END PRIVATE KEY-----"}, &streams{Out: &pem, Err: &pem, Getenv: os.Getenv})
	ledgerText, _ := os.ReadFile(filepath.Join(dir, ".ldp", "events.jsonl"))
	lineage, _ := os.ReadFile(filepath.Join(dir, "lineage.jsonl"))
	if len(ledgerText) == 0 || len(lineage) == 0 {
		t.Fatalf("ledger %d bytes, lineage %d bytes: both must be written", len(ledgerText), len(lineage))
	}
	for name, text := range map[string]string{"ledger": string(ledgerText), "lineage": string(lineage), "stdout": out, "stderr": errs, "pem stderr": pem.String()} {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q:\n%s", name, s, text)
			}
		}
	}
	if !strings.Contains(errs, "s3://ldp:***@bucket") {
		t.Errorf("stderr does not show the redacted path: %q", errs)
	}
}

// TestLineageSinkThatNeverAnswersDoesNotSlowABackfill: one sink accepts connections and never
// answers, another is healthy. A backfill of 12 windows takes far less than its 24 events
// times the sink's timeout (each waited for it before: 1.0 s became 61 s), warns once about
// the silent sink, and the healthy one gets every event by the time the command exits
// (issue 33, point 9).
func TestLineageSinkThatNeverAnswersDoesNotSlowABackfill(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		silent.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	healthy := &lineageServer{}
	ts := httptest.NewServer(healthy)
	defer ts.Close()

	const windows, timeoutS = 12, 5
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "drops"), 0o755)
	for d := 1; d <= windows; d++ {
		os.WriteFile(filepath.Join(dir, "drops", fmt.Sprintf("orders_2026-08-%02d.csv", d)), []byte(fmt.Sprintf("order_id,amount\n%d,10\n", d)), 0o644)
	}
	silentURL := "http://" + silent.Addr().String()
	os.WriteFile(filepath.Join(dir, "orders.json"), []byte(fmt.Sprintf(`{"identifier": "orders", "metadata": {
		"window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%%Y-%%m-%%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}},
		"observability": {"sinks": [{"type": "openlineage", "url": %q, "timeout_s": %d},
		                            {"type": "openlineage", "url": %q, "namespace": "healthy"}]}}}`, silentURL, timeoutS, ts.URL)), 0o644)
	start := time.Now()
	code, out, errs := runInProcess(t, dir, nil, "backfill", "orders.json", "--from", "2026-08-01", "--to", "2026-08-13")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("backfill: exit %d\n%s%s", code, out, errs)
	}
	// Waiting for each event would take 2*windows*timeoutS = 120 s; half of it bounds a hang.
	if bound := time.Duration(windows*timeoutS) * time.Second; took > bound {
		t.Errorf("the backfill took %v with a sink that never answers, want well under %v", took, bound)
	}
	if n := strings.Count(errs, "warning: event sink: OpenLineage endpoint "+silentURL); n != 1 {
		t.Errorf("%d warnings about the silent sink, want 1:\n%s", n, errs)
	}
	if strings.Contains(errs, ts.URL) {
		t.Errorf("a warning about the healthy sink:\n%s", errs)
	}
	healthy.mu.Lock()
	defer healthy.mu.Unlock()
	if len(healthy.events) != 2*windows {
		t.Fatalf("the healthy sink got %d events, want START and COMPLETE of %d windows", len(healthy.events), windows)
	}
	types := map[any]int{}
	for _, e := range healthy.events {
		types[e["eventType"]]++
	}
	if types["START"] != windows || types["COMPLETE"] != windows {
		t.Errorf("event types %v", types)
	}
}
