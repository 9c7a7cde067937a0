// Package ledger records what runs did: one JSON event per line in .ldp/events.jsonl next to
// the spec or workflow file, and in the sinks a spec names (another JSONL file, OpenLineage).
// The ledger is the history a user reads when something went wrong, and the half of the
// observed state (besides the keys on main) that the reconciler plans from.
//
// Appends are safe when several processes share one ledger: each line is written whole, in
// one write call, under an exclusive lock. A reader skips a torn last line (a killed writer)
// with a warning, ignores fields it does not know, and applies an event at most once per
// (run_id, attempt, seq).
package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/flock"
)

// SchemaVersion is the version of the event envelope.
const SchemaVersion = 1

// Event types of a pipeline run.
const (
	RunStarted          = "run.started"
	RunExtracted        = "run.extracted"
	QualityEvaluated    = "quality.evaluated"
	RunPublished        = "run.published"
	RunSkippedDuplicate = "run.skipped_duplicate"
	RunBlockedQuality   = "run.blocked_quality"
	RunFailed           = "run.failed"
	RunFinished         = "run.finished"
	// RunsForgotten (ldp runs forget) names runs, by run_ids, that every read of the ledger
	// leaves out from then on: the runs of windows run by mistake. The ledger stays
	// append-only; the forgotten runs' lines are still in the file.
	RunsForgotten = "runs.forgotten"
)

// PathFor is the ledger of a spec or workflow file: .ldp/events.jsonl in its folder.
func PathFor(specPath string) string {
	return filepath.Join(filepath.Dir(specPath), ".ldp", "events.jsonl")
}

// File is a JSONL file of events.
type File struct {
	Path string
}

// Append writes events to the file, each as one whole line, under the file's lock.
func (f File) Append(events ...v1.LedgerEvent) error { return f.append(events, false) }

// AppendSync is Append, and flushes the file to disk before it lets go of the lock, through
// the descriptor it wrote with (a run's last write: one open, not one for the write and one
// for Sync).
func (f File) AppendSync(events ...v1.LedgerEvent) error { return f.append(events, true) }

func (f File) append(events []v1.LedgerEvent, sync bool) error {
	if len(events) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	l, err := flock.Wait(context.Background(), f.Path+".lock", flock.WaitOptions{Timeout: 2 * time.Minute})
	if err != nil {
		return err
	}
	defer l.Release()
	// Read and write on one descriptor: the last byte is read where the line is appended (an
	// open of its own was a third of an append, which a run makes once an event).
	out, err := os.OpenFile(f.Path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// A torn last line from a killed writer would swallow this line's start: end it first.
	if st, err := out.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := out.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			buf = *bytes.NewBuffer(append([]byte{'\n'}, buf.Bytes()...))
		}
	}
	if _, err := out.Write(buf.Bytes()); err != nil {
		out.Close()
		return err
	}
	if sync {
		if err := out.Sync(); err != nil {
			out.Close()
			return err
		}
	}
	return out.Close()
}

// Sync flushes the file to disk (at the end of a run).
func (f File) Sync() error {
	out, err := os.OpenFile(f.Path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer out.Close()
	return out.Sync()
}

// Read returns the events of a ledger in file order, each (run_id, attempt, seq) once. Lines
// that do not parse (a torn line from a killed writer) are skipped and reported as warnings.
// A ledger that does not exist holds no events.
func Read(path string) ([]v1.LedgerEvent, []string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return ReadFrom(f, path)
}

// ReadFrom reads events from r; name labels warnings.
func ReadFrom(r io.Reader, name string) ([]v1.LedgerEvent, []string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	type id struct {
		run     string
		attempt int
		seq     int
	}
	seen := map[id]bool{}
	var out []v1.LedgerEvent
	var warns []string
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e v1.LedgerEvent
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber() // a snapshot id does not fit a float64
		if err := dec.Decode(&e); err != nil || e.Type == "" {
			warns = append(warns, fmt.Sprintf("%s:%d: skipped a line that is not a whole event (a writer was killed mid-line?)", name, line))
			continue
		}
		k := id{e.RunID, e.Attempt, e.Seq}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return dropForgotten(out), warns, sc.Err()
}

// dropForgotten leaves out the events of the runs a RunsForgotten event names, and of their
// tasks' runs (RUN/TASK), wherever they are in the file.
func dropForgotten(events []v1.LedgerEvent) []v1.LedgerEvent {
	gone := Forgotten(events)
	if len(gone) == 0 {
		return events
	}
	out := events[:0]
	for _, e := range events {
		if !IsForgotten(gone, e.RunID) {
			out = append(out, e)
		}
	}
	return out
}

// Forgotten is the set of run ids the RunsForgotten events among events name.
func Forgotten(events []v1.LedgerEvent) map[string]bool {
	var gone map[string]bool
	for _, e := range events {
		p, ok := As[RunsForgottenPayload](e)
		if !ok {
			continue
		}
		for _, id := range p.RunIDs {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[id] = true
		}
	}
	return gone
}

// IsForgotten reports whether run (a workflow's run, or a task's run RUN/TASK of it) is in gone.
func IsForgotten(gone map[string]bool, run string) bool {
	if gone[run] {
		return true
	}
	wf, _, ok := strings.Cut(run, "/")
	return ok && gone[wf]
}
