package controllers

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/flock"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/specs"
)

// Watcher keeps a folder of specs running: it reconciles on every change to a spec file (after
// a debounce) and on a resync interval, exactly as ldp schedule tick does and under the same
// lock, so a tick from cron and a watcher never both run.
type Watcher struct {
	Dir        string
	Runner     *Runner
	Resync     time.Duration
	Debounce   time.Duration
	MaxWindows int
	Log        *slog.Logger
	Now        func() time.Time
	// Metrics, when set, counts the runs (the caller serves them).
	Metrics *Metrics

	known map[string]Scheduled
	// requeueAt is when the last reconcile asked to come back: a window's retry or the next
	// fire (on the wall clock: it is a timer).
	requeueAt time.Time
	// passedOver are the files already said to be too large to read as specs.
	passedOver map[string]bool
	// warehouses are the local warehouse folders the specs name, as absolute paths.
	warehouses map[string]bool
	// add watches one folder: fsnotify's Add, or a test's counter.
	add  func(string) error
	stop atomic.Bool
}

// Run watches until ctx is done (SIGINT or SIGTERM): then the running task finishes, nothing
// new starts, the lock is released, and Run returns nil.
func (w *Watcher) Run(ctx context.Context) error {
	w.setup()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	if w.add == nil {
		w.add = fw.Add
	}
	if err := w.addTree(w.Dir); err != nil {
		return err
	}
	w.Log.Info("watching", "dir", w.Dir, "resync", w.Resync.String())
	// Work runs on a context that a signal does not cancel, so a running task finishes.
	work := context.WithoutCancel(ctx)
	w.reconcile(work, "start")
	resync := time.NewTicker(w.Resync)
	defer resync.Stop()
	var debounce <-chan time.Time
	for {
		var requeue <-chan time.Time
		if d := time.Until(w.requeueAt); !w.requeueAt.IsZero() && d < w.Resync {
			requeue = time.After(max(d, 0))
		}
		select {
		case <-requeue:
			w.reconcile(work, "requeue")
		case <-ctx.Done():
			w.stop.Store(true)
			w.Log.Info("stopping", "dir", w.Dir)
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Create) {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					w.added(fw, ev.Name)
				}
			}
			if specs.IsSpecName(filepath.Base(ev.Name)) {
				debounce = time.After(w.Debounce)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.Log.Warn("watch error", "error", err.Error())
		case <-debounce:
			debounce = nil
			w.reconcile(work, "change")
		case <-resync.C:
			w.reconcile(work, "resync")
		}
	}
}

// setup fills in the defaults and the watcher's state before the first reconcile.
func (w *Watcher) setup() {
	if w.Resync <= 0 {
		w.Resync = time.Minute
	}
	if w.Debounce <= 0 {
		w.Debounce = 300 * time.Millisecond
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Log == nil {
		w.Log = slog.Default()
	}
	w.known = map[string]Scheduled{}
	w.Runner.Stopping = w.stop.Load
	// A window waiting for its retry comes back as the requeue, not as a sleep that would hold
	// every other object and window.
	w.Runner.NoWait = true
	if w.Runner.Now == nil {
		w.Runner.Now = w.Now
	}
}

// skipDir is discovery's rule: the watcher watches no folder that discovery passes over.
func skipDir(name string) bool { return specs.SkipDir(name) }

// addTree watches a folder and every subfolder that may hold specs (fsnotify is not
// recursive; a watch is one of the user's inotify watches, 8,192 by default and often fewer).
func (w *Watcher) addTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != w.Dir && !w.specFolder(p) {
			return filepath.SkipDir
		}
		return w.add(p)
	})
}

// specFolder reports whether the folder at p is watched: discovery would look in it, and it
// is not a warehouse. A warehouse has a folder per table, partition and write, none of them
// with specs, and watching each spent a watch: a warehouse of 127 data folders in the spec
// folder stopped ldp watch from starting under a limit of 100 ("no space left on device").
func (w *Watcher) specFolder(p string) bool {
	return !skipDir(filepath.Base(p)) && !w.warehouses[absPath(p)] && !lake.IsWarehouseDir(p)
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// added watches a folder created under a watched one, unless it is or is in a warehouse. A
// warehouse created while ldp watch runs is watched as the empty folder it first is; once its
// content shows what it is, its watches are removed.
func (w *Watcher) added(fw *fsnotify.Watcher, dir string) {
	root := absPath(w.Dir)
	for p := filepath.Dir(absPath(dir)); strings.HasPrefix(p, root+string(filepath.Separator)); p = filepath.Dir(p) {
		if !w.specFolder(p) {
			for _, watched := range fw.WatchList() {
				if a := absPath(watched); a == p || strings.HasPrefix(a, p+string(filepath.Separator)) {
					fw.Remove(watched)
				}
			}
			return
		}
	}
	if w.specFolder(dir) {
		w.addTree(dir)
	}
}

// noteWarehouses keeps the local warehouse folders the specs found name.
func (w *Watcher) noteWarehouses(found []Scheduled) {
	w.warehouses = map[string]bool{}
	for _, s := range found {
		if s.WF == nil {
			continue
		}
		for _, p := range s.WF.Pipelines {
			for _, c := range []*v1.Catalog{p.Metadata.Target.Catalog, p.Metadata.Source.Catalog} {
				if c != nil && c.Type != v1.CatalogREST && !lake.IsRemote(c.WarehousePath) {
					w.warehouses[absPath(lake.WarehouseDir(c, p.BaseDir))] = true
				}
			}
		}
	}
}

// reconcile runs one tick of the folder. A file that became invalid is reported, and its last
// valid version stays in force until it is fixed; a deleted file stops being scheduled.
func (w *Watcher) reconcile(ctx context.Context, why string) {
	if w.stop.Load() {
		return
	}
	if w.Runner.Leases == nil { // with leases, windows are held one by one instead
		lock, err := flock.TryLock(LockPath(w.Dir))
		if errors.Is(err, flock.ErrLocked) {
			w.Log.Info("another tick holds the lock; skipped", "lock", LockPath(w.Dir), "why", why)
			return
		}
		if err != nil {
			w.Log.Error("lock", "error", err.Error())
			return
		}
		defer lock.Release()
	}
	found, skipped, err := Discover([]string{w.Dir}, true)
	if err != nil {
		w.Log.Error("discover", "error", err.Error())
		return
	}
	for _, s := range skipped {
		// Said once per file: a large data file in the folder is no spec, but a spec that grew
		// past the limit must not stop running without a word.
		if w.passedOver == nil {
			w.passedOver = map[string]bool{}
		}
		if !w.passedOver[s.Path] {
			w.passedOver[s.Path] = true
			w.Log.Warn("passed over", "file", s.Path, "reason", s.Reason)
		}
	}
	w.noteWarehouses(found)
	current := map[string]Scheduled{}
	var run []Scheduled
	for _, s := range found {
		if len(s.Problems) > 0 {
			for _, p := range s.Problems {
				w.Log.Error("invalid spec", "problem", p.String())
			}
			if old, ok := w.known[s.Path]; ok {
				w.Log.Warn("keeping the last valid version in force until the file is fixed", "file", s.Path)
				current[s.Path] = old
				run = append(run, old)
			}
			continue
		}
		current[s.Path] = s
		run = append(run, s)
	}
	for p := range w.known {
		if _, ok := current[p]; !ok {
			w.Log.Info("no longer scheduled", "file", p)
		}
	}
	w.known = current
	sort.Slice(run, func(i, j int) bool { return run[i].Path < run[j].Path })
	res, requeue := w.Runner.tick(ctx, run, w.Now(), w.MaxWindows)
	w.requeueAt = time.Time{}
	if requeue > 0 {
		w.requeueAt = time.Now().Add(requeue)
	}
	w.record(res)
	for _, f := range res.Files {
		if f.Error != "" {
			w.Log.Error("tick", "file", f.File, "error", f.Error)
		}
		for _, r := range f.Ran {
			if why := r.Reason(); why != "" {
				w.Log.Warn("window", "file", f.File, "window", r.Window, "status", r.Status, "run_id", r.RunID, "attempt", r.Attempt, "reason", why)
				continue
			}
			w.Log.Info("window", "file", f.File, "window", r.Window, "status", r.Status, "run_id", r.RunID, "attempt", r.Attempt)
		}
	}
	w.Log.Info("reconciled", "why", why, "files", len(run))
}

func (w *Watcher) record(res *TickResult) {
	if w.Metrics == nil {
		return
	}
	w.Metrics.Reconciled()
	for _, f := range res.Files {
		for _, r := range f.Ran {
			w.Metrics.Ran(r, w.Now())
		}
	}
}
