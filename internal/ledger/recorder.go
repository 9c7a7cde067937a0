package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/redact"
)

// Sink receives the events of a run as they happen. A sink that fails is reported as a
// warning and never fails the run.
type Sink interface {
	Emit(ctx context.Context, e v1.LedgerEvent) error
	// Close ends the run's events (flushes, fsyncs).
	Close() error
}

// Recorder numbers, redacts and sends the events of one attempt of one run.
type Recorder struct {
	RunID   string
	Attempt int
	sinks   []Sink
	seq     int
	now     func() time.Time
	warn    func(string)
	tableID string
}

// NewRecorder returns a recorder for attempt of run that sends to sinks; warn receives sink
// failures (nil discards them).
func NewRecorder(runID string, attempt int, sinks []Sink, warn func(string)) *Recorder {
	if warn == nil {
		warn = func(string) {}
	}
	return &Recorder{RunID: runID, Attempt: attempt, sinks: sinks, now: time.Now, warn: warn}
}

// SetTable records the table's UUID on the events from now on.
func (r *Recorder) SetTable(uuid string) {
	if r != nil {
		r.tableID = uuid
	}
}

// Record records one event of p's type.
// Every string of the payload passes through the redactor first.
func (r *Recorder) Record(ctx context.Context, p Payload) { r.emit(ctx, p.EventType(), p) }

// emit records one event of type typ with payload, any value that encodes as a JSON object
// (the package's tests write partial payloads as maps).
func (r *Recorder) emit(ctx context.Context, typ string, payload any) {
	if r == nil {
		return
	}
	e := v1.LedgerEvent{
		EventID: uuid.Must(uuid.NewV7()).String(), Type: typ, SchemaVersion: SchemaVersion,
		TS: r.now().UTC(), RunID: r.RunID, Attempt: r.Attempt, Seq: r.seq, TableUUID: r.tableID,
		Payload: redact.Value(jsonish(payload)).(map[string]any),
	}
	r.seq++
	for _, s := range r.sinks {
		if err := s.Emit(ctx, e); err != nil {
			r.warn(fmt.Sprintf("event sink: %s (the run goes on)", redact.String(err.Error())))
		}
	}
}

// Close ends the run's events in every sink.
func (r *Recorder) Close() {
	if r == nil {
		return
	}
	for _, s := range r.sinks {
		if err := s.Close(); err != nil {
			r.warn(fmt.Sprintf("event sink: %s", redact.String(err.Error())))
		}
	}
}

// jsonish turns a payload into plain JSON values (maps, slices, strings, numbers), so the
// redactor sees every string and sinks see what a reader of the file will.
func jsonish(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"error": "payload could not be encoded: " + err.Error()}
	}
	var out map[string]any
	// Numbers stay json.Number: a snapshot id does not fit a float64.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return map[string]any{"error": "payload could not be encoded: " + err.Error()}
	}
	if out == nil { // a nil payload
		out = map[string]any{}
	}
	return out
}

// FileSink appends to a JSONL file.
type FileSink struct {
	File
	wrote bool
}

func (s *FileSink) Emit(_ context.Context, e v1.LedgerEvent) error {
	s.wrote = true
	return s.Append(e)
}

func (s *FileSink) Close() error {
	if !s.wrote {
		return nil
	}
	return s.Sync()
}

// HeldSink keeps the events of one window's run (its workflow's and its tasks' recorders share
// it) and appends them to the file in one write, synced once, when the run ends (Flush). A
// backfill's window recorded 9 events, each an append of its own (the lock file opened and
// locked, the ledger opened, its last byte read, the line written), and synced the file
// twice: 4% of a backfill's CPU. What a reader of the file sees is the same lines in the same
// order, only later: a window's lines land together when it ends. A process killed mid-window
// leaves none of that window's lines (a plain run would leave its first ones): the window is
// then planned as missing rather than partial, and run again under a new run id, which the
// key on main keeps to one effect as it does for any re-run.
type HeldSink struct {
	File
	mu     sync.Mutex
	events []v1.LedgerEvent
}

// Emit keeps e for Flush.
func (s *HeldSink) Emit(_ context.Context, e v1.LedgerEvent) error {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	return nil
}

// Close does nothing: the sink is shared by the recorders of a run, and its owner writes the
// events with Flush when the last of them is done.
func (s *HeldSink) Close() error { return nil }

// Flush appends the events kept so far in one write and syncs the file.
func (s *HeldSink) Flush() error {
	s.mu.Lock()
	events := s.events
	s.events = nil
	s.mu.Unlock()
	return s.AppendSync(events...)
}

// NewEvent is one event of p's type written outside a run's Recorder (ldp runs forget).
func NewEvent(runID string, attempt, seq int, p Payload) v1.LedgerEvent {
	return v1.LedgerEvent{EventID: uuid.Must(uuid.NewV7()).String(), Type: p.EventType(), SchemaVersion: SchemaVersion,
		TS: time.Now().UTC(), RunID: runID, Attempt: attempt, Seq: seq, Payload: jsonish(p)}
}
