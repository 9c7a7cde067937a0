package schemas

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/encoding/json"
	"cuelang.org/go/encoding/yaml"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

//go:embed *.cue
var cueFiles embed.FS

// Source returns the CUE source files, by name: the embedded ones and vocab.cue, the typed
// vocabularies made from apis/v1's lists.
func Source() map[string][]byte {
	out := map[string][]byte{"vocab.cue": vocabCUE()}
	ents, _ := cueFiles.ReadDir(".")
	for _, e := range ents {
		b, _ := cueFiles.ReadFile(e.Name())
		out[e.Name()] = b
	}
	return out
}

// vocabs are the schema's definitions that apis/v1's lists make, so that a new format or
// write mode is one edit there: the schema, its messages (patternText) and the routes of
// internal/pipeline all follow.
var vocabs = []struct {
	def    string // "" for one the schema writes itself
	values []string
	note   string // what the message adds to the list of values
}{
	{"#SourceFormat", v1.Names(v1.SourceFormats), ""},
	{"#TargetFormat", v1.Names(v1.TargetFormats), ""},
	// A sql task's target format is written in its #ModelTarget (one value, which
	// TestEnumsEqualTheGoConstants holds equal), so the JSON schema keeps it inline.
	{"", v1.Names(v1.ModelTargetFormats), " (a SQL model writes an Iceberg table)"},
	{"#WriteMode", v1.Names(v1.WriteModes), ""},
}

// enumPattern is a case-insensitive enum of values as the schema writes it.
func enumPattern(values []string) string {
	return "^(?i:" + strings.ToLower(strings.Join(values, "|")) + ")$"
}

// vocabCUE is the CUE file of the vocabularies.
func vocabCUE() []byte {
	var b strings.Builder
	b.WriteString("package schemas\n\n// Made from apis/v1's lists by schemas.vocabCUE: edit those, not this.\n\n")
	for _, v := range vocabs {
		if v.def == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: =~%s\n", v.def, strconv.Quote(enumPattern(v.values)))
	}
	fmt.Fprintf(&b, "#EnvName: =~%s & !=\"main\"\n", strconv.Quote(v1.EnvNamePattern))
	return []byte(b.String())
}

var (
	compileOnce sync.Once
	compiled    cue.Value
	compileErr  error
	// cue.Context is not safe for concurrent use; Validate serialises on it.
	cueMu sync.Mutex
)

// schema returns the compiled package of embedded definitions.
func schema() (cue.Value, error) {
	compileOnce.Do(func() {
		ctx := cuecontext.New()
		inst := build.NewContext().NewInstance("schemas", nil)
		src := Source()
		for _, n := range slices.Sorted(maps.Keys(src)) {
			if err := inst.AddFile(n, src[n]); err != nil {
				compileErr = err
				return
			}
		}
		compiled = ctx.BuildInstance(inst)
		compileErr = compiled.Err()
	})
	return compiled, compileErr
}

// Definition returns the CUE definition of a kind (#Pipeline or #Workflow).
func Definition(kind string) (cue.Value, error) {
	s, err := schema()
	if err != nil {
		return cue.Value{}, err
	}
	d := s.LookupPath(cue.ParsePath("#" + kind))
	if !d.Exists() {
		return cue.Value{}, fmt.Errorf("no schema for kind %q", kind)
	}
	return d, nil
}

// Result is what Validate found in one document.
type Result struct {
	// Kind is Pipeline or Workflow, or "" when the document is not an ldp spec.
	Kind string
	// Doc is the decoded document, nil when it did not parse.
	Doc map[string]any
	// Problems are sorted by position.
	Problems []Problem
	// NotSpec is set when the document parsed but is neither kind; discovery skips such files.
	NotSpec bool

	ix index
}

// Position returns the line and column of a field path in the document ("" is the root), or of
// its nearest ancestor that exists.
func (r *Result) Position(path ...string) (int, int) {
	if r.ix == nil {
		return 1, 1
	}
	n, _ := r.ix.lookup(fieldPath(path))
	if n == nil {
		return 1, 1
	}
	if n.key.IsValid() {
		return position(n.key)
	}
	return position(n.value)
}

// Validate checks one spec document. filename names it in problems and decides JSON or YAML by
// its extension. Every problem is reported, with the data file's line and column.
//
// A file is often checked more than once by one process (a tick finds the scheduled files,
// then loads each), so results are kept by file name and content: CUE is most of a check.
func Validate(data []byte, filename string) Result {
	cueMu.Lock()
	defer cueMu.Unlock()
	sum := sha256.Sum256(data)
	k := filename + "\x00" + string(sum[:])
	if r, ok := validated[k]; ok {
		r.Problems = slices.Clone(r.Problems)
		return r
	}
	r := validate(data, filename)
	if len(validated) >= maxValidated {
		clear(validated)
	}
	validated[k] = r
	r.Problems = slices.Clone(r.Problems)
	return r
}

// validated holds the results of Validate (under cueMu). Callers read a result's Doc and never
// change it.
var validated = map[string]Result{}

const maxValidated = 4096

func validate(data []byte, filename string) Result {
	r := Result{}
	at := func(line, col int, field, msg string) {
		r.Problems = append(r.Problems, Problem{File: filename, Line: line, Column: col, Field: field, Message: msg})
	}
	if len(data) > v1.MaxSpecBytes {
		at(1, 1, "", fmt.Sprintf("file is %s, larger than the 1 MB limit for spec files; ldp does not read it as a spec", humanBytes(len(data))))
		return r
	}
	if strings.TrimSpace(string(data)) == "" {
		at(1, 1, "", "file is empty: a spec needs at least an identifier and a kind (Pipeline or Workflow)")
		return r
	}
	data = bytes.TrimPrefix(data, utf8BOM) // editors on Windows write one; it is not content
	if line, col, b, ok := invalidUTF8(data); !ok {
		at(line, col, "", fmt.Sprintf("file is not UTF-8 text: byte 0x%02X cannot be read; save the file as UTF-8", b))
		return r
	}
	expr, perr := parse(data, filename)
	if perr != nil {
		r.Problems = append(r.Problems, *perr)
		return r
	}
	var dups []duplicate
	r.ix, dups = buildIndex(expr)
	if len(dups) > 0 {
		// CUE would unify the two values and report a conflict at 1:1, or merge them quietly.
		for _, d := range dups {
			pl, pc := position(d.first)
			l, c := position(d.again)
			at(l, c, d.path.String(), fmt.Sprintf("duplicate key %q: it is set already at line %d, column %d; a spec sets each key once", d.path.last(), pl, pc))
		}
		return r
	}
	s, err := schema()
	if err != nil {
		at(1, 1, "", "internal error: the embedded schema does not compile: "+err.Error())
		return r
	}
	ctx := s.Context()
	val := ctx.BuildExpr(expr)
	var doc any
	if err := val.Decode(&doc); err != nil {
		at(1, 1, "", "cannot decode: "+err.Error())
		return r
	}
	m, ok := doc.(map[string]any)
	if !ok {
		at(1, 1, "", "a spec must be an object (a JSON object or a YAML mapping)")
		return r
	}
	r.Doc = m
	r.detectKind(at)
	if r.Kind == "" {
		return r
	}
	def, err := Definition(r.Kind)
	if err != nil {
		at(1, 1, "", err.Error())
		return r
	}
	r.Problems = append(r.Problems, runCUE(def, val, expr, r.ix, m, filename)...)
	r.Problems = append(r.Problems, semantic(&r, filename)...)
	r.Problems = SortProblems(r.Problems)
	return r
}

func (r *Result) detectKind(at func(line, col int, field, msg string)) {
	if v, ok := r.Doc["apiVersion"]; ok && v != v1.APIVersion {
		l, c := r.valuePos("apiVersion")
		at(l, c, "apiVersion", fmt.Sprintf("unsupported apiVersion %s: this ldp reads %q", quote(v), v1.APIVersion))
	}
	if k, ok := r.Doc["kind"]; ok {
		switch k {
		case v1.KindPipeline, v1.KindWorkflow:
			r.Kind = k.(string)
		default:
			l, c := r.valuePos("kind")
			msg := fmt.Sprintf("unknown kind %s: ldp/v1 has Pipeline and Workflow", quote(k))
			if s, ok := k.(string); ok {
				msg += didYouMean(s, v1.Kinds())
			}
			at(l, c, "kind", msg)
		}
		return
	}
	kind, err := v1.DetectKind(map[string]any{"metadata": r.Doc["metadata"]})
	if err != nil {
		r.NotSpec = true
		at(1, 1, "", err.Error())
		return
	}
	r.Kind = kind
}

func (r *Result) valuePos(path ...string) (int, int) {
	n, _ := r.ix.lookup(fieldPath(path))
	if n == nil {
		return 1, 1
	}
	return position(n.value)
}

var parseErrPos = regexp.MustCompile(`^(?:.*?):(\d+)(?::(\d+))?: (.*)$`)

// parse reads JSON or YAML into a CUE expression that keeps the data file's positions.
func parse(data []byte, filename string) (ast.Expr, *Problem) {
	fail := func(err error) *Problem {
		p := &Problem{File: filename, Line: 1, Column: 1}
		msg := err.Error()
		if errs := errors.Errors(err); len(errs) > 0 {
			msg = errs[0].Error()
			if pos := errs[0].Position(); pos.IsValid() {
				p.Line, p.Column = position(pos)
			}
		}
		msg = strings.TrimSpace(msg)
		if m := parseErrPos.FindStringSubmatch(msg); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
			if m[2] != "" {
				p.Column, _ = strconv.Atoi(m[2])
			}
			msg = m[3]
		}
		msg = strings.TrimPrefix(msg, fmt.Sprintf("invalid JSON for file %q: ", filename))
		if i := strings.LastIndex(msg, filename+":"); i >= 0 {
			msg = strings.TrimSpace(msg[:i])
		}
		kind := "JSON"
		if v1.IsYAML(filename) {
			kind = "YAML"
		}
		p.Message = fmt.Sprintf("invalid %s: %s", kind, msg)
		if kind == "YAML" && lineStartsWithTab(data, p.Line) {
			p.Message += " (YAML indents with spaces; this line starts with a tab)"
		}
		return p
	}
	if v1.IsYAML(filename) {
		f, p := extractYAML(data, filename)
		if p != nil {
			return nil, p
		}
		if f.err != nil {
			return nil, fail(f.err)
		}
		return fileExpr(f.file), nil
	}
	e, err := json.Extract(filename, data)
	if err != nil {
		return nil, fail(err)
	}
	return e, nil
}

type yamlFile struct {
	file *ast.File
	err  error
}

// extractYAML reads YAML with CUE's decoder, which panics (index out of range in its comment
// placement, CUE v0.17.1) on some documents whose line breaks are lone carriage returns, such
// as "[t\r\r,t]". A panic would end ldp validate, a tick or the controller, so it becomes a
// problem that says where the lone carriage return is.
func extractYAML(data []byte, filename string) (f yamlFile, p *Problem) {
	defer func() {
		if e := recover(); e != nil {
			p = &Problem{File: filename, Line: 1, Column: 1}
			if i := loneCR(data); i >= 0 {
				p.Line, p.Column = lineCol(data, i)
				p.Message = "invalid YAML: this line ends with a carriage return alone (old Mac line endings), which ldp's YAML reader cannot read here; save the file with LF or CRLF line endings"
				return
			}
			p.Message = fmt.Sprintf("invalid YAML: ldp's YAML reader failed on this file (%v); simplify the document around its line breaks and comments", e)
		}
	}()
	file, err := yaml.Extract(filename, data)
	return yamlFile{file: file, err: err}, nil
}

// loneCR returns the offset of the first carriage return not followed by a line feed, or -1.
func loneCR(data []byte) int {
	for i, b := range data {
		if b == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return i
		}
	}
	return -1
}

// lineCol is the 1-based line and column (in runes) of byte offset off, lines split at LF.
func lineCol(data []byte, off int) (int, int) {
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(data[start:off])
}

// fileExpr turns a YAML document's file into the expression of its top-level value.
func fileExpr(f *ast.File) ast.Expr {
	if len(f.Decls) == 1 {
		if em, ok := f.Decls[0].(*ast.EmbedDecl); ok {
			return em.Expr
		}
	}
	s := &ast.StructLit{Elts: f.Decls}
	if len(f.Decls) > 0 {
		ast.SetPos(s, f.Decls[0].Pos())
	}
	return s
}

var utf8BOM = []byte("\xef\xbb\xbf")

// invalidUTF8 finds the first byte of data that is not UTF-8, with its line and column.
func invalidUTF8(data []byte) (int, int, byte, bool) {
	if utf8.Valid(data) {
		return 0, 0, 0, true
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return line, col, data[i], false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return line, col, 0, false
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func lineStartsWithTab(data []byte, line int) bool {
	lines := strings.Split(string(data), "\n")
	return line >= 1 && line <= len(lines) && strings.HasPrefix(lines[line-1], "\t")
}
