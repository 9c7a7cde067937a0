package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/report"
)

func pageOf(t *testing.T) (*Server, *atomic.Int64) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "orders.json"), []byte(`{"identifier": "orders", "metadata": {"schedule": "*/15 * * * *", "window": {"size": "15m"},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%dT%H%M}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`), 0o644)
	var computed atomic.Int64
	rec := &controllers.Reconciler{}
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	return &Server{Paths: []string{dir}, Reconciler: rec, Now: func() time.Time { return now },
		Status: func(ctx context.Context, paths []string, now time.Time) (*report.StatusReport, error) {
			computed.Add(1)
			// Slow enough that every client asks while it is being computed, as a big
			// object's plan is (10-70 s in issue 33).
			time.Sleep(500 * time.Millisecond)
			return report.Status(ctx, rec, paths, now)
		}}, &computed
}

// TestConcurrentPollsShareOneReport: 64 clients polling /api/status at once get the same
// answer from one computation of the report, and a poll with its ETag costs a 304 without a
// new one (issue 33, point 14: each request planned on its own, 108 MB became 741 MB).
func TestConcurrentPollsShareOneReport(t *testing.T) {
	srv, computed := pageOf(t)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	const clients = 64
	bodies := make([]string, clients)
	etags := make([]string, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(ts.URL + "/api/status")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 {
				t.Errorf("client %d: %s %s", i, resp.Status, b)
			}
			bodies[i], etags[i] = string(b), resp.Header.Get("ETag")
		}()
	}
	wg.Wait()
	for i := range clients {
		if bodies[i] != bodies[0] || etags[i] != etags[0] || !strings.Contains(bodies[i], `"name": "orders"`) {
			t.Fatalf("client %d got another answer (%d bytes, ETag %s) than client 0 (%d bytes, ETag %s)", i, len(bodies[i]), etags[i], len(bodies[0]), etags[0])
		}
	}
	if n := computed.Load(); n > 2 {
		t.Errorf("the report was computed %d times for %d concurrent clients, want once (twice at most)", n, clients)
	}
	before := computed.Load()
	req, _ := http.NewRequest("GET", ts.URL+"/api/status", nil)
	req.Header.Set("If-None-Match", etags[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified || computed.Load() != before {
		t.Errorf("a poll with the answer's ETag: %s, %d more computations; want 304 and none", resp.Status, computed.Load()-before)
	}
}

// TestForeignHostIsRefused: a request whose Host is another name (DNS rebinding points
// evil.example at 127.0.0.1) is refused with 421; the bound address, localhost and a name the
// server was told to serve are answered.
func TestForeignHostIsRefused(t *testing.T) {
	srv, _ := pageOf(t)
	srv.Hosts = NamesOf("ldp.internal:8080")
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for host, want := range map[string]int{
		"evil.example":                   http.StatusMisdirectedRequest,
		"evil.example:" + port:           http.StatusMisdirectedRequest,
		"localhost.evil.example:" + port: http.StatusMisdirectedRequest,
		ts.Listener.Addr().String():      http.StatusOK,
		"localhost:" + port:              http.StatusOK,
		"[::1]:" + port:                  http.StatusOK,
		"ldp.internal:8080":              http.StatusOK,
	} {
		for _, path := range []string{"/api/status", "/", "/metrics"} {
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Host = host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s with Host %s: %s, want %d", path, host, resp.Status, want)
			}
		}
	}
}
