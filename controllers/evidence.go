package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"slices"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/reconcile"
)

// Evidence is what a run of window w sees of its spec and its data, as one hash: the spec as
// loaded (its tasks, retries and every dataset config it names, so an edit that changes no
// meaning, a comment or spacing, changes nothing), and each task's source file for the window:
// a local file's path, size and modification time (every file a glob matches), an object
// store's path only (a request per held window at every poll of the status page would cost
// more than it tells). A run records it (workflow.started); a window whose last run a data
// gate blocked, or that spent its attempts, is held while it stays the same (reconcile.Held).
// "" when nothing can be said.
func (w *Object) Evidence(win v1.LogicalWindow) string { return w.evidence(w.specDigest(), win) }

// specDigest is the spec's part of the evidence, the same for every window.
func (w *Object) specDigest() []byte {
	spec, err := json.Marshal(struct {
		Tasks     []v1.Task
		Retries   *v1.Retries
		Pipelines map[string]*v1.Pipeline
	}{w.Tasks, w.Retries, w.Pipelines})
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(spec)
	return sum[:]
}

func (w *Object) evidence(spec []byte, win v1.LogicalWindow) string {
	if spec == nil {
		return ""
	}
	h := sha256.New()
	h.Write(spec)
	ids := make([]string, 0, len(w.Pipelines))
	for id := range w.Pipelines {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := w.Pipelines[id]
		path := pipeline.SourcePath(p, win)
		if path == "" {
			continue
		}
		fmt.Fprintf(h, "\x00%s\x00%s", id, path)
		if !lake.IsRemote(path) {
			statFiles(h, p.BaseDir, path)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// statFiles writes the size and modification time of each local file path names (a glob: each
// file it matches) into h; a file that is not there writes nothing.
func statFiles(h hash.Hash, base, path string) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, path)
	}
	matches, err := filepath.Glob(path)
	if err != nil || len(matches) == 0 {
		matches = []string{path}
	}
	for _, m := range matches {
		if info, err := os.Stat(m); err == nil {
			fmt.Fprintf(h, "\x00%s\x00%d\x00%d", m, info.Size(), info.ModTime().UnixNano())
		}
	}
}

// evidenceNow is the evidence now of each window of lastRuns that its last run may hold.
func evidenceNow(wf *Object, lastRuns map[v1.WindowKey]reconcile.LastRun) map[v1.WindowKey]string {
	out := map[v1.WindowKey]string{}
	spec := wf.specDigest()
	for key, last := range lastRuns {
		if !reconcile.MayHold(last) {
			continue
		}
		w, err := key.Window()
		if err != nil {
			continue
		}
		out[key] = wf.evidence(spec, w)
	}
	return out
}
