package pipeline

import (
	"context"
	"sync"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/formats"
)

// Sniffs are the CSV layouts the windows of one backfill share. Each window reads a drop file
// of its own, and DuckDB sniffing a 10-row file costs more than reading it; the drops of one
// spec are nearly always one layout, so once a window of the backfill has published, the
// windows after it whose file starts with the same header line read it with that window's
// sniffed types and options, sniffing nothing. A file those do not read (a value of another
// type, a ragged row), or that holds no rows, is read again as a window alone reads it, so
// its error (or its empty window) is the one it always was.
//
// With Batch, the windows of one group are read and checked together (batch.go).
type Sniffs struct {
	mu sync.Mutex
	m  map[string]formats.Sniffed
	batches
}

// NewSniffs makes the shared sniffs of one backfill.
func NewSniffs() *Sniffs { return &Sniffs{m: map[string]formats.Sniffed{}} }

func (s *Sniffs) get(key string) (formats.Sniffed, bool) {
	if s == nil {
		return formats.Sniffed{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

func (s *Sniffs) put(key string, v formats.Sniffed) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok {
		s.m[key] = v
	}
}

// sniffing is how a run read its CSV file without DuckDB's second sniff: key names its layout
// (spec and header line), sniffed what read it, shared whether it came from another window.
type sniffing struct {
	key     string
	sniffed formats.Sniffed
	shared  bool
}

// fastCSV returns the expression that reads the run's CSV file at full with one sniff or none,
// and its columns; ok is false when the file is read by Read after a DESCRIBE (three sniffs).
// A run of no backfill sniffs its file once and shares it with no one (formats.SniffAlone).
func (r *run) fastCSV(ctx context.Context, full string) (string, *sniffing, bool) {
	src := r.p.Metadata.Source
	if src.Format != v1.FormatCSV {
		return "", nil, false
	}
	header, ok := formats.HeaderLine(full)
	if !ok {
		return "", nil, false
	}
	sn := &sniffing{key: r.res.SpecHash + "\x00" + header}
	if r.opts.Sniffs == nil {
		if sn.sniffed, ok = formats.SniffAlone(ctx, r.db, full, src.Options); !ok {
			return "", nil, false
		}
		return formats.SniffedSource(full, sn.sniffed), sn, true
	}
	if sn.sniffed, sn.shared = r.opts.Sniffs.get(sn.key); !sn.shared {
		if sn.sniffed, ok = formats.Sniff(ctx, r.db, full, src.Options); !ok {
			return "", nil, false
		}
	}
	return formats.SniffedSource(full, sn.sniffed), sn, true
}
