package specs

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/schemas"
)

// checked is what checking one file found, and what the checker keeps of it.
type checked struct {
	schemas.FileResult
	// data is the file as it was read and checked: Load decodes these bytes, not a second
	// read of a file that may have changed meanwhile.
	data []byte
	// identifier, at line:col, names the object; scheduled says it has a schedule of its own.
	identifier string
	line, col  int
	scheduled  bool
}

// Checker checks files, each once, following workflow tasks into the files they name.
type Checker struct {
	// fsys is where files are read (OS when nil).
	fsys fs.FS
	// given are bytes a caller read already, by path: they are checked instead of reading
	// the file again.
	given    map[string][]byte
	results  map[string]*checked
	order    []string
	skipped  []schemas.Skipped
	warnings []schemas.Problem
	// docs are the schema results of the files checked, by path, and upEdges each file's
	// upstream files: an upstream checked earlier is read from here, and a cycle of
	// upstreams found.
	docs    map[string]*schemas.Result
	upEdges map[string][]string
}

// Check discovers and checks the files under roots.
func Check(roots []string) (*schemas.Report, error) {
	cands, err := Discover(roots)
	if err != nil {
		return nil, err
	}
	c := &Checker{results: map[string]*checked{}}
	for _, cand := range cands {
		c.candidate(cand)
	}
	return c.report(), nil
}

func (c *Checker) candidate(cand Candidate) {
	if cand.TooLarge && !cand.Explicit {
		c.skipped = append(c.skipped, schemas.Skipped{Path: cand.Path, Reason: fmt.Sprintf("larger than %d bytes", v1.MaxSpecBytes)})
		return
	}
	res, r := c.file(cand.Path)
	if res == nil {
		return
	}
	if !cand.Explicit && r != nil && r.NotSpec && !looksLikeSpec(r.Doc) {
		// A JSON or YAML file that is not a spec (a dbt or package manifest): pass over it.
		delete(c.results, cand.Path)
		c.order = c.order[:len(c.order)-1]
		c.skipped = append(c.skipped, schemas.Skipped{Path: cand.Path, Reason: "not an ldp spec"})
		return
	}
	if api, ok := foreignAPI(r); ok && !cand.Explicit {
		// A Kubernetes manifest (config/crd, config/rbac, an exported ldp.dev/v1 object).
		delete(c.results, cand.Path)
		c.order = c.order[:len(c.order)-1]
		c.skipped = append(c.skipped, schemas.Skipped{Path: cand.Path, Reason: "a manifest of another API (apiVersion " + api + "), not an ldp spec"})
	}
}

// foreignAPI is the apiVersion of a document that belongs to another API than ldp's spec
// files: anything but ldp/v1 and its near misses (ldp/v2, LDP/v1), which are reported.
func foreignAPI(r *schemas.Result) (string, bool) {
	if r == nil || r.Doc == nil {
		return "", false
	}
	api, ok := r.Doc["apiVersion"].(string)
	l := strings.ToLower(api)
	if !ok || l == "ldp" || strings.HasPrefix(l, "ldp/") {
		return "", false
	}
	return api, true
}

// looksLikeSpec is true for a document with any top-level key of an ldp spec, so a misspelled
// kind is reported rather than passed over.
func looksLikeSpec(doc map[string]any) bool {
	for _, k := range []string{"apiVersion", "kind", "identifier", "tasks", "metadata"} {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}

// file checks one file once and returns its result and the schema result (nil when unreadable).
func (c *Checker) file(path string) (*checked, *schemas.Result) {
	path = filepath.Clean(path)
	if res, ok := c.results[path]; ok {
		return res, nil
	}
	res := &checked{FileResult: schemas.FileResult{Path: path}}
	c.results[path] = res
	c.order = append(c.order, path)
	data, ok := c.given[path]
	if !ok {
		var err error
		if data, err = fs.ReadFile(orOS(c.fsys), path); err != nil {
			res.Problems = append(res.Problems, schemas.Problem{File: path, Line: 1, Column: 1, Message: "cannot read: " + err.Error()})
			return res, nil
		}
	}
	res.data = data
	r := schemas.Validate(data, path)
	if c.docs == nil {
		c.docs = map[string]*schemas.Result{}
	}
	c.docs[path] = &r
	res.Kind = r.Kind
	if r.Doc != nil {
		res.identifier, _ = r.Doc["identifier"].(string)
		res.line, res.col = r.Position("identifier")
		res.scheduled = HasSchedule(r.Doc)
	}
	res.Problems = append(res.Problems, r.Problems...)
	if r.Kind == v1.KindWorkflow {
		res.Problems = append(res.Problems, c.tasks(path, &r)...)
	}
	res.Problems = append(res.Problems, c.upstreams(path, &r)...)
	if r.Kind != "" {
		res.Problems = append(res.Problems, sqlProblems(orOS(c.fsys), path, &r)...)
		res.Problems = append(res.Problems, sourceProblems(orOS(c.fsys), path, &r)...)
	}
	res.Problems = schemas.SortProblems(res.Problems)
	return res, &r
}

// tasks checks the files a workflow's tasks name: they exist, hold the right kind, and are
// themselves valid (their problems go under their own paths).
func (c *Checker) tasks(path string, r *schemas.Result) []schemas.Problem {
	var out []schemas.Problem
	base := filepath.Dir(path)
	list, _ := r.Doc["tasks"].([]any)
	for i, e := range list {
		t, _ := e.(map[string]any)
		idx := strconv.Itoa(i)
		type ref struct {
			field []string
			rel   string
			dir   bool
			plain bool // a file that is not a spec (a query)
		}
		var refs []ref
		if p, ok := t["pipeline"].(string); ok && p != "" {
			refs = append(refs, ref{field: []string{"tasks", idx, "pipeline"}, rel: p})
		}
		if m, ok := t["maintain"].(map[string]any); ok {
			if p, ok := m["config"].(string); ok && p != "" {
				refs = append(refs, ref{field: []string{"tasks", idx, "maintain", "config"}, rel: p})
			}
		}
		if q, ok := t["sql"].(map[string]any); ok {
			if p, ok := q["query_file"].(string); ok && p != "" {
				refs = append(refs, ref{field: []string{"tasks", idx, "sql", "query_file"}, rel: p, plain: true})
			}
			ins, _ := q["inputs"].(map[string]any)
			names := make([]string, 0, len(ins))
			for n := range ins {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if p, ok := ins[n].(string); ok && IsSpecPath(p) {
					refs = append(refs, ref{field: []string{"tasks", idx, "sql", "inputs", n}, rel: p})
				}
			}
		}
		if d, ok := t["dbt"].(map[string]any); ok {
			if p, ok := d["project"].(string); ok && p != "" {
				refs = append(refs, ref{field: []string{"tasks", idx, "dbt", "project"}, rel: p, dir: true})
			}
		}
		for _, rf := range refs {
			line, col := r.Position(rf.field...)
			problem := func(format string, args ...any) {
				out = append(out, schemas.Problem{File: path, Line: line, Column: col,
					Field: schemas.FieldPath(rf.field), Message: fmt.Sprintf(format, args...)})
			}
			target := rf.rel
			if !filepath.IsAbs(target) {
				target = filepath.Join(base, target)
			}
			info, err := fs.Stat(orOS(c.fsys), target)
			switch {
			case err != nil:
				what := "file"
				if rf.dir {
					what = "folder"
				}
				problem("%s %q not found (looked for %s, relative to the workflow file)", what, rf.rel, target)
				continue
			case rf.dir && !info.IsDir():
				problem("%q is a file; a dbt task names the project folder", rf.rel)
				continue
			case rf.dir:
				continue
			case info.IsDir():
				problem("%q is a folder; name the dataset config file", rf.rel)
				continue
			case rf.plain:
				continue
			}
			sub, _ := c.file(target)
			if sub.Kind == v1.KindWorkflow {
				problem("%q is a Workflow; a task names a dataset config (a Pipeline)", rf.rel)
			}
			if sub.scheduled && HasSchedule(r.Doc) && len(rf.field) == 3 && rf.field[2] == "pipeline" {
				c.warnings = append(c.warnings, schemas.Problem{File: path, Line: line, Column: col, Field: schemas.FieldPath(rf.field),
					Message: fmt.Sprintf("%q has a schedule of its own and is a task of this scheduled workflow, so two schedules run it (a window both mean is run once, one only the other means is loaded again): remove its metadata.schedule (and when), or the task", rf.rel)})
			}
		}
	}
	return out
}

// IsSpecPath reports whether a sql input names a spec file rather than namespace.table.
func IsSpecPath(ref string) bool {
	switch strings.ToLower(filepath.Ext(ref)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

func (c *Checker) report() *schemas.Report {
	r := &schemas.Report{Skipped: c.skipped, Warnings: schemas.SortProblems(c.warnings)}
	paths := append([]string(nil), c.order...)
	sort.Strings(paths)
	var names Names
	for _, p := range paths {
		f := c.results[p]
		// An invalid file claims no name: a duplicate would only add noise to its problems.
		if len(f.Problems) == 0 {
			if dup := names.Claim(f.Path, f.Kind, f.identifier, f.line, f.col); dup != nil {
				f.Problems = []schemas.Problem{*dup}
			}
		}
		r.Files = append(r.Files, f.FileResult)
	}
	sort.Slice(r.Skipped, func(i, j int) bool { return r.Skipped[i].Path < r.Skipped[j].Path })
	return r
}

// Load is the loader: it reads the file at path once, checks it (and the files its tasks
// name), and decodes it. Any problem makes it a ConfigError that lists every problem, so a
// command never runs a spec that ldp validate would reject.
func Load(path string) (v1.Object, error) { return LoadBytes(path, nil) }

// LoadBytes is Load of the file's bytes when data is not nil (a caller that has read them).
func LoadBytes(path string, data []byte) (v1.Object, error) { return LoadFS(OS, path, data) }

// LoadFS is LoadBytes of the files of fsys: path and the files it names are read there.
func LoadFS(fsys fs.FS, path string, data []byte) (v1.Object, error) {
	c := &Checker{fsys: fsys, results: map[string]*checked{}, given: map[string][]byte{}}
	if data != nil {
		c.given[filepath.Clean(path)] = data
	}
	res, _ := c.file(path)
	var problems []schemas.Problem
	for _, p := range c.order {
		problems = append(problems, c.results[p].Problems...)
	}
	if len(problems) > 0 {
		return nil, &InvalidError{Path: path, Problems: schemas.SortProblems(problems)}
	}
	return Decode(res.data, path)
}

// InvalidError is a spec that failed validation; it is a config error.
type InvalidError struct {
	Path     string
	Problems []schemas.Problem
}

func (e *InvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not valid (%d problem", e.Path, len(e.Problems))
	if len(e.Problems) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Unwrap makes an InvalidError a *ldperr.ConfigError for errors.As.
func (e *InvalidError) Unwrap() error { return &ldperr.ConfigError{File: e.Path, Msg: "invalid spec"} }

// HasSchedule says a spec document is scheduled: a metadata.schedule, or for a dataset config
// the schedule its when label means.
func HasSchedule(doc map[string]any) bool {
	md, _ := doc["metadata"].(map[string]any)
	if s, ok := md["schedule"].(string); ok && s != "" {
		return true
	}
	if k, _ := doc["kind"].(string); k == v1.KindWorkflow {
		return false
	}
	w, _ := doc["when"].(string)
	return cronx.ScheduleOfWhen(w) != ""
}
