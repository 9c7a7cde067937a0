package specs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/schemas"
)

// upstreamRef is one metadata.upstream (or tasks[i].upstream) entry of a spec file.
type upstreamRef struct {
	field []string
	rel   string
}

// upstreamRefs lists the upstream entries of a spec document: a dataset config's
// metadata.upstream, a workflow's tasks[].upstream.
func upstreamRefs(r *schemas.Result) []upstreamRef {
	var out []upstreamRef
	add := func(list any, field ...string) {
		l, _ := list.([]any)
		for i, e := range l {
			m, _ := e.(map[string]any)
			if p, ok := m["pipeline"].(string); ok && p != "" {
				out = append(out, upstreamRef{field: append(append([]string(nil), field...), strconv.Itoa(i), "pipeline"), rel: p})
			}
		}
	}
	switch r.Kind {
	case v1.KindPipeline:
		md, _ := r.Doc["metadata"].(map[string]any)
		add(md["upstream"], "metadata", "upstream")
	case v1.KindWorkflow:
		tasks, _ := r.Doc["tasks"].([]any)
		for i, e := range tasks {
			t, _ := e.(map[string]any)
			add(t["upstream"], "tasks", strconv.Itoa(i), "upstream")
		}
	}
	return out
}

// upstreams checks the dependencies of a spec across objects: each upstream is a windowed
// dataset config that writes an Iceberg table (whose keys say which of its windows are
// published), not the spec itself nor one of its own tasks, and no chain of upstreams comes
// back to the spec (each window would wait for the other's forever). The upstream files are
// checked in turn, under their own paths.
func (c *Checker) upstreams(path string, r *schemas.Result) []schemas.Problem {
	refs := upstreamRefs(r)
	if len(refs) == 0 {
		return nil
	}
	var out []schemas.Problem
	base := filepath.Dir(path)
	own := map[string]bool{}
	if r.Kind == v1.KindWorkflow {
		tasks, _ := r.Doc["tasks"].([]any)
		for _, e := range tasks {
			t, _ := e.(map[string]any)
			if p, ok := t["pipeline"].(string); ok && p != "" {
				own[cleanJoin(base, p)] = true
			}
		}
	}
	if c.upEdges == nil {
		c.upEdges = map[string][]string{}
	}
	for _, rf := range refs {
		line, col := r.Position(rf.field...)
		problem := func(format string, args ...any) {
			out = append(out, schemas.Problem{File: path, Line: line, Column: col, Field: schemas.FieldPath(rf.field), Message: fmt.Sprintf(format, args...)})
		}
		target := cleanJoin(base, rf.rel)
		switch info, err := os.Stat(target); {
		case err != nil:
			problem("upstream %q not found (looked for %s, relative to this spec's folder): fix the path, or remove the entry", rf.rel, target)
			continue
		case info.IsDir():
			problem("upstream %q is a folder; name the dataset config file", rf.rel)
			continue
		case target == filepath.Clean(path):
			problem("upstream %q is this dataset config itself: a window cannot wait for itself; remove the entry", rf.rel)
			continue
		case own[target]:
			problem("upstream %q is a task of this workflow: order tasks of one workflow with depends_on, not upstream", rf.rel)
			continue
		}
		c.upEdges[filepath.Clean(path)] = append(c.upEdges[filepath.Clean(path)], target)
		sub, sr := c.file(target)
		if sub.Kind == v1.KindWorkflow {
			problem("upstream %q is a Workflow; an upstream names a dataset config (a Pipeline)", rf.rel)
			continue
		}
		if sr == nil {
			sr = c.docs[target]
		}
		if sr != nil && sr.Kind == v1.KindPipeline {
			md, _ := sr.Doc["metadata"].(map[string]any)
			w, _ := md["window"].(map[string]any)
			if size, _ := w["size"].(string); size == "" {
				problem("upstream %q has no window size (metadata.window.size): a window waits for the upstream's windows that overlap it, so the upstream needs windows; give it a window, or remove the entry", rf.rel)
			}
			tg, _ := md["target"].(map[string]any)
			if f, _ := tg["format"].(string); !strings.EqualFold(f, string(v1.FormatIceberg)) {
				problem("upstream %q writes %s, not an Iceberg table: only a table's keys can say which of its windows are published; name a dataset config with an ICEBERG target", rf.rel, describeFormat(f))
			}
		}
		if cyc := c.upstreamCycle(target, filepath.Clean(path)); cyc != nil {
			problem("upstreams wait for each other in a cycle: %s (no window of either could ever run): remove one of the entries", strings.Join(cyc, " -> "))
		}
	}
	return out
}

func describeFormat(f string) string {
	if f == "" {
		return "no target format"
	}
	return "a " + f + " file"
}

// upstreamCycle is the chain of upstream edges from from back to to, from to itself first, or
// nil when there is none.
func (c *Checker) upstreamCycle(from, to string) []string {
	seen := map[string]bool{}
	var walk func(at string) []string
	walk = func(at string) []string {
		if at == to {
			return []string{to}
		}
		if seen[at] {
			return nil
		}
		seen[at] = true
		for _, n := range c.upEdges[at] {
			if rest := walk(n); rest != nil {
				return append([]string{at}, rest...)
			}
		}
		return nil
	}
	if rest := walk(from); rest != nil {
		return append([]string{to}, rest...)
	}
	return nil
}

func cleanJoin(base, rel string) string {
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel)
	}
	return filepath.Join(base, rel)
}
