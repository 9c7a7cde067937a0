// Package web serves the status page of a folder of specs: the grid of windows by task that
// ldp status prints, as a page that refreshes itself, the JSON API it is drawn from
// (/api/status, /api/cell), Prometheus /metrics and /healthz. It is read-only: it plans in dry
// run and reads the ledger, and writes nothing.
package web

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/singleflight"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/report"
)

//go:embed assets
var assets embed.FS

// Server is the page of the objects under Paths.
type Server struct {
	Paths      []string
	Reconciler *controllers.Reconciler
	Metrics    *controllers.Metrics
	Now        func() time.Time
	// Hosts are the names, besides localhost, that a request's Host may give (the host of
	// --addr when it is a name). Any IP address may be given: DNS rebinding needs a name.
	Hosts []string
	// Env is the environment the page shows ("" is main): report.StatusIn.
	Env string
	// Status computes the report (a seam for tests); nil is report.StatusIn through Reconciler.
	Status func(ctx context.Context, paths []string, now time.Time) (*report.StatusReport, error)

	// flight makes the requests that arrive while the report is computed share that one
	// computation; last is its answer, held (once, encoded) for the requests of the next
	// freshFor: 64 pollers of a big object cost one plan, not 64 (issue 33, point 14).
	flight singleflight.Group
	mu     sync.Mutex
	last   *answer
}

// freshFor is how long an answer is served again without planning anew: the page polls every
// 3 s.
const freshFor = 2 * time.Second

// answer is one computed report, encoded once for every request that shares it.
type answer struct {
	body []byte
	etag string
	at   time.Time
	err  error
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Assets serves the page itself: its HTML, script and style, embedded.
func Assets() http.Handler {
	static, _ := fs.Sub(assets, "assets")
	return http.FileServerFS(static)
}

// Handler routes the page, its API, /metrics and /healthz.
func (s *Server) Handler() http.Handler {
	if s.Metrics == nil {
		s.Metrics = controllers.NewMetrics()
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", Assets())
	mux.HandleFunc("GET /api/status", s.status)
	mux.HandleFunc("GET /api/cell", s.cell)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	metrics := promhttp.HandlerFor(s.Metrics.Registry, promhttp.HandlerOpts{})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		s.report(r.Context()) // observes the metrics
		metrics.ServeHTTP(w, r)
	})
	return s.guardHost(mux)
}

// guardHost refuses a request whose Host is a name other than localhost or one of Hosts: a
// page on evil.example whose name is made to resolve to 127.0.0.1 (DNS rebinding) would
// otherwise read the page's API from the user's browser.
func (s *Server) guardHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
		ok := net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") ||
			slices.ContainsFunc(s.Hosts, func(n string) bool { return strings.EqualFold(n, host) })
		if !ok {
			http.Error(w, fmt.Sprintf("this page answers to its address or localhost, not to the host %q (ldp ui --addr names the host it serves)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// status answers the report, with an ETag of its content so the page's poll costs a 304 when
// nothing changed (the generated time is left out of the tag).
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	a := s.report(r.Context())
	if a.err != nil {
		http.Error(w, a.err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("ETag", a.etag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(a.body)
}

// report is the last answer while it is fresh, else the answer of the one computation every
// concurrent request waits for. The computation outlives a request that gives up, since
// others wait for it too.
func (s *Server) report(ctx context.Context) *answer {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last != nil && time.Since(last.at) < freshFor {
		return last
	}
	v, _, _ := s.flight.Do("status", func() (any, error) {
		a := s.compute(context.WithoutCancel(ctx))
		s.mu.Lock()
		s.last = a
		s.mu.Unlock()
		return a, nil
	})
	return v.(*answer)
}

func (s *Server) compute(ctx context.Context) *answer {
	status := s.Status
	if status == nil {
		status = func(ctx context.Context, paths []string, now time.Time) (*report.StatusReport, error) {
			return report.StatusIn(ctx, s.Reconciler, paths, now, s.Env)
		}
	}
	rep, err := status(ctx, s.Paths, s.now())
	if err != nil {
		return &answer{err: err, at: time.Now()}
	}
	s.Metrics.Observe(rep.States(), len(rep.Invalid))
	gen := rep.Generated
	rep.Generated = time.Time{}
	tagged, _ := json.Marshal(rep)
	sum := sha256.Sum256(tagged)
	rep.Generated = gen
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return &answer{err: err, at: time.Now()}
	}
	return &answer{body: append(body, '\n'), etag: `"` + hex.EncodeToString(sum[:8]) + `"`, at: time.Now()}
}

// cell answers one cell's detail; the file must be one of the page's objects.
func (s *Server) cell(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	file, start, task := q.Get("file"), q.Get("start"), q.Get("task")
	found, _, err := controllers.Discover(s.Paths, false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !slices.ContainsFunc(found, func(sc controllers.Scheduled) bool { return filepath.Clean(sc.Path) == filepath.Clean(file) }) {
		http.Error(w, "no such object on this page: "+file, http.StatusNotFound)
		return
	}
	d, err := report.CellIn(r.Context(), s.Reconciler, file, start, task, s.now(), s.Env)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	writeJSON(w, d)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// Listen binds addr (127.0.0.1:PORT unless the caller was told otherwise).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (pick another port with --addr)", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// NamesOf is the host of addr when it is a name, not an address: the name a request to a
// server bound there may give as its Host (Server.Hosts).
func NamesOf(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" || net.ParseIP(host) != nil {
		return nil
	}
	return []string{host}
}
