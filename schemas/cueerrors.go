package schemas

import (
	encjson "encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/errors"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// maxRounds bounds the fixpoint; each round removes at least one reported node, and real specs
// settle in two or three.
const maxRounds = 12

type errGroup struct {
	path fieldPath
	msgs []string
}

// runCUE validates expr against def until no new problem appears, replacing every node it
// reports so that CUE goes on to report what the first error hid. val is expr built already
// (Validate decodes it): the first round unifies it rather than building expr again, which is
// a sixth of a check; later rounds build expr afresh, as removeNode has changed it.
func runCUE(def cue.Value, val cue.Value, expr ast.Expr, ix index, doc map[string]any, file string) []Problem {
	ctx := def.Context()
	var out []Problem
	seen := map[string]bool{}
	var replaced []fieldPath
	isReplaced := func(p fieldPath) bool {
		for _, r := range replaced {
			if p.hasPrefix(r) {
				return true
			}
		}
		return false
	}
	for round := 0; round < maxRounds; round++ {
		if round > 0 {
			val = ctx.BuildExpr(expr)
		}
		err := def.Unify(val).Validate(cue.Concrete(true), cue.Final())
		if err == nil {
			break
		}
		groups := groupErrors(errors.Errors(err))
		// A bad discriminator (a check's name) makes every other error of its object noise.
		for _, g := range groups {
			if g.path.last() == "check" && len(g.path) >= 2 && !isReplaced(g.path) && isDisjunctionOfLiterals(g) {
				addProblem(&out, seen, rewrite(g, ix, doc, def, file))
				replaced = append(replaced, g.path.parent())
			}
		}
		changed := false
		for _, g := range groups {
			if isReplaced(g.path) || onlyIncomplete(g) {
				continue
			}
			if top := g.path.String(); top == "apiVersion" || top == "kind" {
				replaced = append(replaced, g.path) // reported by detectKind
				removeNode(ix, g.path)
				changed = true
				continue
			}
			if hasDeeper(g, groups, replaced) {
				// A disjunction whose data matched one branch: the deeper errors say what is wrong.
				continue
			}
			p := rewrite(g, ix, doc, def, file)
			addProblem(&out, seen, p)
			if isRequired(g) {
				continue
			}
			target := g.path
			if hasMsg(g, "field not allowed") {
				target = trimIndexes(g.path)
			}
			replaced = append(replaced, target)
			if removeNode(ix, target) {
				changed = true
			}
		}
		for _, r := range replaced {
			if removeNode(ix, r) {
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return out
}

func addProblem(out *[]Problem, seen map[string]bool, p Problem) {
	k := p.Field + "\x00" + p.Message
	if seen[k] {
		return
	}
	seen[k] = true
	*out = append(*out, p)
}

// groupErrors collects CUE's errors by the data path they are about, in first-seen order.
func groupErrors(errs []errors.Error) []*errGroup {
	var groups []*errGroup
	byPath := map[string]*errGroup{}
	for _, e := range errs {
		var p fieldPath
		for i, s := range e.Path() {
			if i == 0 && strings.HasPrefix(s, "#") {
				continue
			}
			p = append(p, s)
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		g, ok := byPath[p.key()]
		if !ok {
			g = &errGroup{path: p}
			byPath[p.key()] = g
			groups = append(groups, g)
		}
		g.msgs = append(g.msgs, msg)
	}
	return groups
}

func hasMsg(g *errGroup, m string) bool {
	for _, s := range g.msgs {
		if s == m {
			return true
		}
	}
	return false
}

func isRequired(g *errGroup) bool { return hasMsg(g, "field is required but not present") }

func onlyIncomplete(g *errGroup) bool {
	for _, m := range g.msgs {
		if !strings.HasPrefix(m, "incomplete value") && !strings.HasPrefix(m, "required field missing") && !disjHeader.MatchString(m) {
			return false
		}
	}
	return true
}

var (
	disjHeader  = regexp.MustCompile(`^\d+ errors in empty disjunction:?$`)
	conflictRe  = regexp.MustCompile(`^conflicting values (.+) and (.+)$`)
	mismatchRe  = regexp.MustCompile(`^conflicting values .+ \(mismatched types (\w+) and (\w+)\)$`)
	listLen     = regexp.MustCompile(`^incompatible list lengths \(0 and \d+\)$`)
	outOfBound  = regexp.MustCompile(`^invalid value (.+) \(out of bound (.+)\)$`)
	notAllowed  = "field not allowed"
	requiredMsg = "field is required but not present"
)

func isDisjunctionOfLiterals(g *errGroup) bool {
	n := 0
	for _, m := range g.msgs {
		if conflictRe.MatchString(m) && !mismatchRe.MatchString(m) {
			n++
		}
	}
	return n > 0
}

// hasDeeper reports whether g is a disjunction and some other error (or a replaced node) lies
// under its path: then the data matched a branch and the deeper error is the one to show.
func hasDeeper(g *errGroup, groups []*errGroup, replaced []fieldPath) bool {
	disj := false
	for _, m := range g.msgs {
		if disjHeader.MatchString(m) || strings.Contains(m, "mismatched types") {
			disj = true
		}
	}
	if !disj {
		return false
	}
	for _, o := range groups {
		if len(o.path) > len(g.path) && o.path.hasPrefix(g.path) {
			return true
		}
	}
	for _, r := range replaced {
		if len(r) > len(g.path) && r.hasPrefix(g.path) {
			return true
		}
	}
	return false
}

func trimIndexes(p fieldPath) fieldPath {
	for len(p) > 0 && isIndex(p.last()) {
		p = p.parent()
	}
	return p
}

// removeNode takes a reported node out of the document: a field is deleted, a list element
// becomes top (_), so indexes stay put. It reports whether the document changed.
func removeNode(ix index, p fieldPath) bool {
	n, ok := ix[p.key()]
	if !ok || len(p) == 0 {
		return false
	}
	switch {
	case n.decls != nil:
		for i, d := range *n.decls {
			if d == n.field {
				*n.decls = append((*n.decls)[:i:i], (*n.decls)[i+1:]...)
				n.decls = nil
				return true
			}
		}
	case n.elts != nil:
		if id, ok := (*n.elts)[n.index].(*ast.Ident); ok && id.Name == "_" {
			return false
		}
		(*n.elts)[n.index] = ast.NewIdent("_")
		return true
	}
	return false
}

// rewrite turns one path's CUE errors into one problem a person can act on.
func rewrite(g *errGroup, ix index, doc map[string]any, def cue.Value, file string) Problem {
	p := Problem{File: file, Field: g.path.String()}
	n, _ := ix.lookup(g.path)
	if n != nil {
		p.Line, p.Column = position(n.value)
	} else {
		p.Line, p.Column = 1, 1
	}
	data, hasData := getPath(doc, g.path)
	switch {
	case hasMsg(g, notAllowed):
		kp := trimIndexes(g.path)
		p.Field = kp.String()
		if kn, ok := ix[kp.key()]; ok && kn.key.IsValid() {
			p.Line, p.Column = position(kn.key)
		}
		p.Message = fmt.Sprintf("unknown key %q", kp.last()) + keyHint(kp, doc, def)
		return p
	case isRequired(g):
		// A missing key has no position of its own: point at the object that lacks it.
		if pn, ok := ix[g.path.parent().key()]; ok {
			p.Line, p.Column = position(pn.value)
		}
		p.Message = fmt.Sprintf("missing required key %q", g.path.last())
		if h, ok := requiredHints[g.path.last()]; ok {
			p.Message += ": " + h
		}
		return p
	}
	var wants []string
	var options []string
	var other, patterns, bounds []string
	for _, m := range g.msgs {
		switch {
		case disjHeader.MatchString(m), strings.HasPrefix(m, "incomplete value"):
		case mismatchRe.MatchString(m):
			// The side that is not the data's type names the type the schema wants.
			c := mismatchRe.FindStringSubmatch(m)
			t := c[2]
			if hasData && cueKindOf(data) == c[2] {
				t = c[1]
			}
			wants = appendUnique(wants, typeNoun(t))
		case conflictRe.MatchString(m):
			c := conflictRe.FindStringSubmatch(m)
			alt := c[1]
			if hasData && alt == cueLiteral(data) {
				alt = c[2]
			}
			wants = appendUnique(wants, alt)
			if s, err := strconv.Unquote(alt); err == nil {
				options = append(options, s)
			}
		case listLen.MatchString(m):
			wants = appendUnique(wants, "a list with at least one item")
		case outOfBound.MatchString(m):
			b := outOfBound.FindStringSubmatch(m)[2]
			d, opts := boundText(b)
			wants = appendUnique(wants, d)
			options = append(options, opts...)
			if pat, err := strconv.Unquote(strings.TrimPrefix(b, "=~")); err == nil && strings.HasPrefix(b, "=~") {
				patterns = append(patterns, pat)
			} else if strings.HasPrefix(b, ">") || strings.HasPrefix(b, "<") {
				bounds = append(bounds, b)
			}
		default:
			other = append(other, m)
		}
	}
	wants = dropCovered(wants, patterns, bounds)
	if g.path.last() == "check" && len(options) > 0 {
		sort.Strings(options)
		p.Message = fmt.Sprintf("unknown check %s", describe(data, hasData))
		if s, ok := data.(string); ok {
			p.Message += didYouMean(s, options)
		}
		p.Message += "; the checks are " + strings.Join(options, ", ")
		return p
	}
	got := "got " + describe(data, hasData)
	switch {
	case len(other) > 0 && len(wants) == 0:
		p.Message = strings.Join(other, "; ")
	case len(wants) == 1:
		p.Message = "must be " + wants[0] + ", " + got
	default:
		sort.Strings(wants)
		p.Message = "must be one of " + strings.Join(wants, ", ") + "; " + got
	}
	if s, ok := data.(string); ok && len(options) > 0 {
		p.Message += didYouMean(s, options)
	}
	return p
}

// dropCovered removes the literals that a pattern or a bound of the same field also accepts:
// a default written as *"append" | #WriteMode, or *1 | (int & >=1), is one option, not two.
func dropCovered(wants, patterns, bounds []string) []string {
	out := wants[:0]
	for _, w := range wants {
		s, err := strconv.Unquote(w)
		covered := false
		for _, p := range patterns {
			if err == nil && regexp.MustCompile(p).MatchString(s) {
				covered = true
			}
		}
		if n, nerr := strconv.ParseFloat(w, 64); nerr == nil {
			for _, b := range bounds {
				if satisfies(n, b) {
					covered = true
				}
			}
		}
		if !covered {
			out = append(out, w)
		}
	}
	return out
}

// satisfies reports whether n meets a numeric bound such as >=1 or <10.
func satisfies(n float64, bound string) bool {
	for _, op := range []string{">=", "<=", ">", "<"} {
		if !strings.HasPrefix(bound, op) {
			continue
		}
		lim, err := strconv.ParseFloat(bound[len(op):], 64)
		if err != nil {
			return false
		}
		switch op {
		case ">=":
			return n >= lim
		case "<=":
			return n <= lim
		case ">":
			return n > lim
		default:
			return n < lim
		}
	}
	return false
}

var requiredHints = map[string]string{
	"size":       "a window object needs a size: week, day, hour or 15m",
	"identifier": "every spec needs a unique identifier",
	"checks":     "the object form of quality is {on_failure, checks}",
}

// boundText describes a CUE bound; for the enum patterns it also returns the options.
func boundText(b string) (string, []string) {
	if strings.HasPrefix(b, "=~") {
		pat, err := strconv.Unquote(strings.TrimPrefix(b, "=~"))
		if err == nil {
			if d, ok := patternText[pat]; ok {
				return d.text, d.options
			}
			return "a string matching " + pat, nil
		}
	}
	switch {
	case b == `!=""`:
		return "a non-empty string", nil
	case strings.HasPrefix(b, ">="):
		return "at least " + b[2:], nil
	case strings.HasPrefix(b, "<="):
		return "at most " + b[2:], nil
	case strings.HasPrefix(b, ">"):
		return "greater than " + b[1:], nil
	case strings.HasPrefix(b, "<"):
		return "less than " + b[1:], nil
	}
	return b, nil
}

type patternDoc struct {
	text    string
	options []string
}

// patternText describes the patterns of the schema in words; a test checks every pattern in the
// .cue files has an entry. The case-insensitive enums of formats and write modes are made from
// apis/v1's lists, which TestEnumsEqualTheGoConstants holds equal to the schema's.
var patternText = withEnums(map[string]patternDoc{
	`^[\p{L}\p{N}_][\p{L}\p{N}_.-]*$`: {text: "a name of letters, digits, '_', '.' and '-' that starts with a letter, a digit or '_'"},
	`^(?i:duckdb|bigquery)$`:          {text: "DUCKDB or BIGQUERY", options: []string{"DUCKDB", "BIGQUERY"}},
	`^(identity|year|month|day|hour|bucket\[[1-9][0-9]*\]|truncate\[[1-9][0-9]*\])$`: {
		text:    "a partition transform: identity, year, month, day, hour, bucket[N] or truncate[W] with N and W at least 1",
		options: []string{"identity", "year", "month", "day", "hour"}},
	`^https?://`:               {text: "an http:// or https:// URL"},
	`^[A-Za-z_][A-Za-z0-9_]*$`: {text: "an environment variable name"},
	`^.$`:                      {text: "exactly one character"},
	`^[A-Za-z0-9-]+/[A-Za-z0-9._-]*[A-Za-z0-9_-][A-Za-z0-9._-]*$`: {text: `a GitHub repository, "owner/name": the owner letters, digits and '-', the name letters, digits, '.', '_' and '-' (not . or ..)`},
	`^([0-9]+(\.[0-9]+)?(h|m|s|ms))+$`:                            {text: `a duration of hours, minutes and seconds such as "2h", "90m" or "1h30m"`},
	v1.EnvNamePattern:                                             {text: "an environment name: a lowercase letter followed by up to 39 lowercase letters, digits, '_' or '-' (dev, alice-2), not main"},
})

// withEnums adds to m the patterns of the typed enums (vocabs), in each list's order,
// described as "A, B or C".
func withEnums(m map[string]patternDoc) map[string]patternDoc {
	for _, e := range vocabs {
		text := e.values[len(e.values)-1]
		if n := len(e.values); n > 1 {
			text = strings.Join(e.values[:n-1], ", ") + " or " + text
		}
		m[enumPattern(e.values)] = patternDoc{text: text + e.note, options: e.values}
	}
	return m
}

// keyHint suggests the key that was meant, from the keys the schema allows at that place.
func keyHint(p fieldPath, doc map[string]any, def cue.Value) string {
	allowed := allowedKeys(def, p.parent(), doc)
	if len(allowed) == 0 {
		return ""
	}
	if h := didYouMean(p.last(), allowed); h != "" {
		return h
	}
	return "; allowed keys are " + strings.Join(allowed, ", ")
}

// allowedKeys lists the keys the schema allows in the object at p. The list depends only on the
// definition, the path and the object's check name, so it is kept (under cueMu, as runCUE runs
// there): a misspelled key costs a schema lookup and a unification otherwise. Callers must not
// change the list.
func allowedKeys(def cue.Value, p fieldPath, doc map[string]any) []string {
	check, hasCheck := "", false
	if obj, ok := getPath(doc, p); ok {
		if m, ok := obj.(map[string]any); ok {
			check, hasCheck = m["check"].(string)
		}
	}
	k := def.Path().String() + "\x01" + p.key() + "\x01" + strconv.FormatBool(hasCheck) + check
	if keys, ok := allowedCache[k]; ok {
		return keys
	}
	keys := schemaKeys(def, p, check, hasCheck)
	if len(allowedCache) >= maxValidated {
		clear(allowedCache)
	}
	allowedCache[k] = keys
	return keys
}

var allowedCache = map[string][]string{}

func schemaKeys(def cue.Value, p fieldPath, check string, hasCheck bool) []string {
	v := lookupSchema(def, p)
	if !v.Exists() {
		return nil
	}
	if hasCheck {
		v = v.Unify(v.Context().Encode(map[string]any{"check": check}))
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var keys []string
	for it.Next() {
		keys = append(keys, it.Selector().Unquoted())
	}
	sort.Strings(keys)
	return keys
}

// lookupSchema finds the schema of the data at p, whether its fields are regular, optional (?)
// or required (!), following the branch of a disjunction that fits each step ("none" | {...}
// is followed into the struct, [...#Check] | {checks} into the list for an index).
func lookupSchema(def cue.Value, p fieldPath) cue.Value {
	v := def
	for _, s := range p {
		if isIndex(s) {
			v = branch(v, cue.ListKind).LookupPath(cue.MakePath(cue.AnyIndex))
			continue
		}
		v = branch(v, cue.StructKind)
		var next cue.Value
		for _, sel := range []cue.Selector{cue.Str(s), cue.Str(s).Optional(), cue.Str(s).Required()} {
			if n := v.LookupPath(cue.MakePath(sel)); n.Exists() {
				next = n
				break
			}
		}
		if !next.Exists() {
			return cue.Value{}
		}
		v = next
	}
	return branch(v, cue.StructKind)
}

// branch returns the branch of a disjunction of the given kind, or v itself.
func branch(v cue.Value, kind cue.Kind) cue.Value {
	if op, _ := v.Expr(); op == cue.SelectorOp {
		v = cue.Dereference(v) // a field whose value is a reference such as #Quality
	}
	if op, args := v.Expr(); op == cue.OrOp {
		for _, a := range args {
			if a.IncompleteKind() == kind {
				return a
			}
		}
	}
	return v
}

func getPath(doc map[string]any, p fieldPath) (any, bool) {
	var cur any = doc
	for _, s := range p {
		switch t := cur.(type) {
		case map[string]any:
			v, ok := t[s]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// cueKindOf names a decoded value's type as CUE's messages do.
func cueKindOf(v any) string {
	switch t := v.(type) {
	case map[string]any:
		return "struct"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	case float64:
		if t == float64(int64(t)) {
			return "int"
		}
		return "float"
	case int, int64:
		return "int"
	}
	return "_"
}

func typeNoun(t string) string {
	switch t {
	case "struct":
		return "an object"
	case "list":
		return "a list"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int":
		return "a whole number"
	case "float", "number":
		return "a number"
	case "null":
		return "null"
	}
	return t
}

// cueLiteral writes a scalar as CUE's messages quote it.
func cueLiteral(v any) string {
	b, _ := encjson.Marshal(v)
	return string(b)
}

func describe(v any, ok bool) string {
	if !ok {
		return "nothing"
	}
	switch t := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		if len(t) == 0 {
			return "an empty list"
		}
		return "a list"
	case string:
		return strconv.Quote(t)
	}
	return cueLiteral(v)
}

func quote(v any) string { return describe(v, true) }

func appendUnique(xs []string, x string) []string {
	for _, e := range xs {
		if e == x {
			return xs
		}
	}
	return append(xs, x)
}
