package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/reconcile"
)

// Observe reads what is done for wf: the keys on main of each table its tasks publish to (one
// walk of each table's history for the whole plan) and, from the ledger, the last run of each
// window. Nothing is created: a table or catalog that does not exist holds no key.
func Observe(ctx context.Context, wf *Object) (reconcile.Observed, error) {
	o := new(Observer)
	defer o.Close()
	return o.Observe(ctx, wf)
}

// Observer observes many workflows, reading each ledger once: the workflows of a folder share
// its ledger, and reading it whole for each of a thousand specs made ldp diff take minutes.
// Later calls read only what was appended since (a tick's own runs). Not safe for concurrent
// use; Close releases the catalogs it opened.
type Observer struct {
	ledgers  map[string]*ledgerState
	catalogs map[string]*lake.Catalog
}

// Close releases the catalogs the observer opened.
func (o *Observer) Close() {
	for _, c := range o.catalogs {
		c.Close()
	}
	o.catalogs = nil
}

// catalog opens the catalog c names once per observer; a catalog that does not exist yet is
// nil and is looked for again next time (a tick's runs may create it).
func (o *Observer) catalog(ctx context.Context, c *v1.Catalog, base string) (*lake.Catalog, error) {
	k := lake.WarehouseDir(c, base) + "\x00" + c.Identifier
	if cat := o.catalogs[k]; cat != nil {
		return cat, nil
	}
	cat, err := lake.OpenExisting(ctx, c, base)
	if err != nil || cat == nil {
		return nil, err
	}
	if o.catalogs == nil {
		o.catalogs = map[string]*lake.Catalog{}
	}
	o.catalogs[k] = cat
	return cat, nil
}

type ledgerState struct {
	offset int64
	fold   *runFold
}

// Observe is the package's Observe, with the ledger read incrementally.
func (o *Observer) Observe(ctx context.Context, wf *Object) (reconcile.Observed, error) {
	obs := reconcile.Observed{Keys: map[string]map[string]bool{}, SpecHashes: map[string][]string{}, LastRuns: map[v1.WindowKey]reconcile.LastRun{}}
	// The tables whose keys the plan reads: each keyed task's, and each upstream's (whose
	// windows a window waits for).
	var tables []*v1.Pipeline
	for _, t := range wf.Planning().Tasks {
		if t.Keyed() {
			tables = append(tables, wf.Pipelines[t.ID])
		}
	}
	for _, u := range wf.Upstreams {
		tables = append(tables, u.Pipeline)
	}
	for _, p := range tables {
		target := p.TargetIdentity()
		if obs.Keys[target] != nil {
			continue
		}
		cat, err := o.catalog(ctx, p.Metadata.Target.Catalog, p.BaseDir)
		if err != nil {
			return obs, err
		}
		var keys map[string]bool
		var hashes []string
		if wf.Env != "" {
			keys, hashes, err = keysInEnv(ctx, cat, lake.RefOf(p.Metadata.Target), wf.Env, time.Now())
		} else {
			keys, hashes, err = cachedKeysOnMain(ctx, cat, lake.RefOf(p.Metadata.Target), wf.Ledger)
		}
		if err != nil {
			return obs, err
		}
		if len(keys) == 0 {
			// A table the catalog lost (its file deleted) is not "nothing done yet": its
			// published windows would be run again over its hidden data.
			if err := lake.LostTable(p.Metadata.Target.Catalog, p.BaseDir, lake.RefOf(p.Metadata.Target), cat); err != nil {
				return obs, err
			}
		}
		obs.Keys[target], obs.SpecHashes[target] = keys, hashes
	}
	st, err := o.ledger(wf.Ledger)
	if err != nil {
		return obs, err
	}
	obs.LastRuns = st.fold.lastRuns(wf.Name, wf.Env)
	obs.Evidence = evidenceNow(wf, obs.LastRuns)
	return obs, nil
}

// ledger brings the fold of path up to date with the whole lines appended since the last read.
func (o *Observer) ledger(path string) (*ledgerState, error) {
	if o.ledgers == nil {
		o.ledgers = map[string]*ledgerState{}
	}
	st := o.ledgers[path]
	if st == nil {
		st = &ledgerState{fold: newRunFold()}
		o.ledgers[path] = st
	}
	if path == "" {
		return st, nil // an object with no ledger (ldp controller's, loaded from memory)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(st.offset, io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	// A line still being written is left for the next read.
	whole := bytes.LastIndexByte(b, '\n') + 1
	st.fold.add(runEvents(b[:whole]))
	st.offset += int64(whole)
	return st, nil
}

// runEvent is a workflow, task or runs.forgotten event as the fold reads it: the envelope,
// and the payload left as bytes for the fold to decode into the struct of its type.
type runEvent struct {
	Type    string          `json:"type"`
	RunID   string          `json:"run_id"`
	Attempt int             `json:"attempt"`
	Payload json.RawMessage `json:"payload"`
}

// payloadOf decodes e's payload as P; ok is false when it does not fit.
func payloadOf[P ledger.Payload](e runEvent) (p P, ok bool) {
	return p, json.Unmarshal(e.Payload, &p) == nil
}

// runEvents decodes the workflow and task events of ledger lines. Most lines are the events
// of pipeline runs, which the fold does not need: they are passed over without decoding (ldp
// writes every event as one compact JSON line), and the rest decode into their payload
// structs, not a map. A line that is not a whole event (a writer killed mid-line) is passed over, as
// ledger.Read does.
func runEvents(b []byte) []runEvent {
	var out []runEvent
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if !bytes.Contains(line, []byte(`"type":"workflow.`)) && !bytes.Contains(line, []byte(`"type":"task.finished"`)) && !bytes.Contains(line, []byte(`"type":"`+ledger.RunsForgotten+`"`)) {
			continue
		}
		var e runEvent
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// keysOnMain returns the idempotency keys ever published on a table's main branch, those of
// expired snapshots included (the table's key index), and the distinct spec hashes of its
// keyed publishes (a window's replace keys are made from them); a nil catalog (not created
// yet) holds no key.
func keysOnMain(ctx context.Context, cat *lake.Catalog, ref lake.Ref) (map[string]bool, []string, error) {
	keys := map[string]bool{}
	if cat == nil {
		return keys, nil, nil
	}
	tbl, err := cat.Load(ctx, ref)
	var nf *lake.NotFoundError
	if errors.As(err, &nf) {
		return keys, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	all, err := lake.KeysOnMain(ctx, tbl)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for k, e := range all {
		keys[k] = true
		if e.SpecHash != "" {
			seen[e.SpecHash] = true
		}
	}
	return keys, slices.Sorted(maps.Keys(seen)), nil
}

// keysInEnv is keysOnMain for environment env: the keys on its branch of the table (its own
// windows, and main's as they were at the fork), or main's where env has not written the
// table (its branch would fork from main's head). The folder's key cache holds main's keys
// only: a branch's are read from the table.
func keysInEnv(ctx context.Context, cat *lake.Catalog, ref lake.Ref, env string, now time.Time) (map[string]bool, []string, error) {
	if cat == nil {
		return map[string]bool{}, nil, nil
	}
	tbl, err := cat.Load(ctx, ref)
	var nf *lake.NotFoundError
	if errors.As(err, &nf) {
		return map[string]bool{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if lake.EnvHead(tbl, env) == nil {
		return keysOnMain(ctx, cat, ref)
	}
	all, err := lake.EnvKeys(ctx, tbl, env, now)
	if err != nil {
		return nil, nil, err
	}
	keys, seen := map[string]bool{}, map[string]bool{}
	for k, e := range all {
		keys[k] = true
		if e.SpecHash != "" {
			seen[e.SpecHash] = true
		}
	}
	return keys, slices.Sorted(maps.Keys(seen)), nil
}

// LastRuns folds the workflow and task events of one workflow into the last run of each
// window. Several workflows (and dataset configs) in one folder share its ledger, so the
// events of the others are left out.
func LastRuns(events []v1.LedgerEvent, workflow string) map[v1.WindowKey]reconcile.LastRun {
	evs := make([]runEvent, 0, len(events))
	for _, e := range events {
		p, err := json.Marshal(e.Payload)
		if err != nil {
			continue
		}
		evs = append(evs, runEvent{Type: e.Type, RunID: e.RunID, Attempt: e.Attempt, Payload: p})
	}
	f := newRunFold()
	f.add(evs)
	return f.lastRuns(workflow, "")
}

// runFold folds workflow and task events, as they are read, into the runs of each workflow.
type runFold struct {
	runs map[runKey]*runState
	// byWorkflow are each workflow's runs in each environment ("" is main), in the order they
	// started: a run in an environment is no run of the window on main, nor the reverse.
	byWorkflow map[objectKey][]*runState
}

// objectKey is a workflow in an environment.
type objectKey struct{ workflow, env string }

type runKey struct {
	run     string
	attempt int
}

type runState struct {
	window v1.WindowKey
	last   reconcile.LastRun
	// fingerprints are the builds of the run's dbt tasks.
	fingerprints map[string]string
}

func newRunFold() *runFold {
	return &runFold{runs: map[runKey]*runState{}, byWorkflow: map[objectKey][]*runState{}}
}

func (f *runFold) add(events []runEvent) {
	for _, e := range events {
		k := runKey{e.RunID, e.Attempt}
		switch e.Type {
		case ledger.WorkflowStarted:
			p, ok := payloadOf[ledger.WorkflowStartedPayload](e)
			if !ok || f.runs[k] != nil {
				continue // the same event read twice
			}
			r := &runState{window: p.Window.Key(), last: reconcile.LastRun{RunID: e.RunID, Attempt: e.Attempt, Tasks: map[string]v1.Outcome{}, Evidence: p.Evidence, Consumed: p.Upstream}}
			f.runs[k] = r
			obj := objectKey{p.Workflow, p.Env}
			f.byWorkflow[obj] = append(f.byWorkflow[obj], r)
		case ledger.TaskFinished:
			r := f.runs[k]
			p, ok := payloadOf[ledger.TaskFinishedPayload](e)
			if r == nil || !ok {
				continue
			}
			r.last.Tasks[p.Task] = p.Status
			if p.TaskAttempt > 0 { // a task that never started (a shutdown) spent nothing
				r.last.TaskAttempts = setIn(r.last.TaskAttempts, p.Task, p.TaskAttempt)
			}
			if p.Retriable != nil && !*p.Retriable {
				r.last.Fatal = setIn(r.last.Fatal, p.Task, true)
			}
			if len(p.FailedChecks) > 0 {
				r.last.Checks = setIn(r.last.Checks, p.Task, p.FailedChecks)
			}
			if at := p.RetryAt; at != nil && !at.IsZero() && (r.last.RetryAt.IsZero() || at.Before(r.last.RetryAt)) {
				r.last.RetryAt = *at
			}
			if p.Fingerprint != "" {
				if r.fingerprints == nil {
					r.fingerprints = map[string]string{}
				}
				r.fingerprints[p.Task] = p.Fingerprint
			}
		case ledger.WorkflowFinished:
			if r := f.runs[k]; r != nil {
				r.last.Finished = true
			}
		case ledger.RunsForgotten:
			if p, ok := payloadOf[ledger.RunsForgottenPayload](e); ok {
				f.forget(p.RunIDs)
			}
		}
	}
}

// setIn sets m[k] to v, making m when it is nil.
func setIn[V any](m map[string]V, k string, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[k] = v
	return m
}

// forget drops the runs ldp runs forget named, as ledger.Read does.
func (f *runFold) forget(ids []string) {
	gone := map[string]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	for k := range f.runs {
		if gone[k.run] {
			delete(f.runs, k)
		}
	}
	for wf, runs := range f.byWorkflow {
		f.byWorkflow[wf] = slices.DeleteFunc(runs, func(r *runState) bool { return gone[r.last.RunID] })
	}
}

// lastBuild is the fingerprint of the last build of task for window of workflow (in the last
// run of the window that finished the task; the run asking has not), when that build
// succeeded; "" otherwise.
func (f *runFold) lastBuild(workflow, env, window, task string) string {
	runs := f.byWorkflow[objectKey{workflow, env}]
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		st, ok := r.last.Tasks[task]
		if string(r.window) != window || !ok {
			continue
		}
		if st != v1.Succeeded {
			return ""
		}
		return r.fingerprints[task]
	}
	return ""
}

// history is every run of each window of workflow in env, in the order they started.
func (f *runFold) history(workflow, env string) map[v1.WindowKey][]reconcile.LastRun {
	out := map[v1.WindowKey][]reconcile.LastRun{}
	for _, r := range f.byWorkflow[objectKey{workflow, env}] {
		last := r.last
		last.Tasks = maps.Clone(r.last.Tasks)
		last.TaskAttempts, last.Fatal, last.Checks = maps.Clone(r.last.TaskAttempts), maps.Clone(r.last.Fatal), maps.Clone(r.last.Checks)
		out[r.window] = append(out[r.window], last)
	}
	return out
}

// History is every run of each window of wf from its ledger (read once per observer), oldest
// first: what the status page marks on a cell whose last run is not its only one.
func (o *Observer) History(wf *Object) (map[v1.WindowKey][]reconcile.LastRun, error) {
	st, err := o.ledger(wf.Ledger)
	if err != nil {
		return nil, err
	}
	return st.fold.history(wf.Name, wf.Env), nil
}

// lastRuns is the last run of each window of workflow in env.
func (f *runFold) lastRuns(workflow, env string) map[v1.WindowKey]reconcile.LastRun {
	out := map[v1.WindowKey]reconcile.LastRun{}
	for w, runs := range f.history(workflow, env) {
		last := runs[len(runs)-1]
		last.PublishedFrom = reconcile.PublishedFrom(runs)
		out[w] = last
	}
	return out
}
