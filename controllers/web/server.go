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
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ldp-dev/ldp/controllers"
)

//go:embed assets
var assets embed.FS

// Server is the page of the objects under Paths.
type Server struct {
	Paths      []string
	Reconciler *controllers.Reconciler
	Metrics    *controllers.Metrics
	Now        func() time.Time
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
		if rep, err := s.Reconciler.Status(r.Context(), s.Paths, s.now()); err == nil {
			s.Metrics.Observe(rep)
		}
		metrics.ServeHTTP(w, r)
	})
	return mux
}

// status answers the report, with an ETag of its content so the page's poll costs a 304 when
// nothing changed (the generated time is left out of the tag).
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	rep, err := s.Reconciler.Status(r.Context(), s.Paths, s.now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.Metrics.Observe(rep)
	gen := rep.Generated
	rep.Generated = time.Time{}
	tagged, _ := json.Marshal(rep)
	sum := sha256.Sum256(tagged)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	rep.Generated = gen
	writeJSON(w, rep)
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
	d, err := s.Reconciler.Cell(r.Context(), file, start, task, s.now())
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
