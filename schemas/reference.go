package schemas

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
)

// keyInfo is one documented key of a spec.
type keyInfo struct {
	path, typ, def, doc string
	required            bool
}

// Keys lists every key of #Pipeline and #Workflow as a dotted path, sorted.
func Keys() []string {
	infos, _ := keyInfos()
	var out []string
	for _, k := range infos {
		out = append(out, k.path)
	}
	return out
}

// KeyReference is the Markdown reference of every key of the specs: path, type, default, an
// example (from examples, by path), whether it is required, and its doc comment.
func KeyReference(examples map[string]string) (string, error) {
	infos, err := keyInfos()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	kind := ""
	for _, k := range infos {
		if top := strings.SplitN(k.path, ".", 2)[0]; top != kind {
			kind = top
			fmt.Fprintf(&b, "\n### %s\n\n| key | type | default | example | |\n|---|---|---|---|---|\n", kind)
		}
		req := ""
		if k.required {
			req = "required. "
		}
		ex := ""
		if e, ok := examples[k.path]; ok {
			ex = "`" + strings.ReplaceAll(e, "|", "\\|") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s%s |\n", k.path, k.typ, k.def, ex, req, strings.ReplaceAll(k.doc, "\n", " "))
	}
	return b.String(), nil
}

func keyInfos() ([]keyInfo, error) {
	cueMu.Lock()
	defer cueMu.Unlock()
	var out []keyInfo
	for _, kind := range []string{"Pipeline", "Workflow"} {
		def, err := Definition(kind)
		if err != nil {
			return nil, err
		}
		walkKeys(def, kind, 0, &out)
	}
	// The check params: #Check's keys depend on its name.
	s, _ := schema()
	params := s.LookupPath(cue.ParsePath("#CheckParams"))
	it, _ := params.Fields()
	for it.Next() {
		walkKeys(it.Value(), "Pipeline.metadata.quality[].("+it.Selector().Unquoted()+")", 0, &out)
	}
	// A check's name and the object form of quality sit behind #Quality's list-or-object,
	// which the walk does not enter.
	var names []string
	for it, _ := params.Fields(); it.Next(); {
		names = append(names, it.Selector().Unquoted())
	}
	out = append(out, keyInfo{path: "Pipeline.metadata.quality[].check", typ: "string: one of `" + strings.Join(names, "`, `") + "`", required: true,
		doc: "The check; the keys it takes besides check are listed under its name."})
	walkKeys(branch(s.LookupPath(cue.ParsePath("#Quality")), cue.StructKind), "Pipeline.metadata.quality", 0, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	dedup := out[:0]
	for i, k := range out {
		if i == 0 || k.path != out[i-1].path {
			dedup = append(dedup, k)
		}
	}
	return dedup, nil
}

func walkKeys(v cue.Value, prefix string, depth int, out *[]keyInfo) {
	if depth > 8 {
		return
	}
	for _, sv := range structBranches(v) {
		it, err := sv.Fields(cue.Optional(true))
		if err != nil {
			continue
		}
		for it.Next() {
			name := it.Selector().Unquoted()
			fv := it.Value()
			path := prefix + "." + name
			k := keyInfo{path: path, typ: typeOf(fv), required: it.Selector().ConstraintType() == cue.RequiredConstraint}
			if d, ok := fv.Default(); ok && d.IsConcrete() {
				if b, err := d.MarshalJSON(); err == nil && string(b) != "[]" {
					k.def = "`" + string(b) + "`"
				}
			}
			for _, c := range fv.Doc() {
				k.doc = strings.TrimSpace(c.Text())
			}
			*out = append(*out, k)
			walkKeys(fv, path, depth+1, out)
			if fv.IncompleteKind()&cue.ListKind != 0 {
				walkKeys(branch(fv, cue.ListKind).LookupPath(cue.MakePath(cue.AnyIndex)), path+"[]", depth+1, out)
			}
		}
	}
}

// enumWords is a pattern that only admits a list of words: ^(a|b)$, or ^(?i:a|b)$ for any case.
var enumWords = regexp.MustCompile(`^\^\((\?i:)?([a-z0-9_]+(?:\\\[\[1-9\]\[0-9\]\*\\\])?(?:\|[a-z0-9_]+(?:\\\[\[1-9\]\[0-9\]\*\\\])?)*)\)\$$`)

// countArg is how a pattern of words writes a word's positive-number argument: bucket[N].
const countArg = `\[[1-9][0-9]*\]`

// enumOf lists the strings a key allows, when they are a closed set: literals ("day" |
// "hour") or a pattern of words (=~"^(?i:csv|json)$", any case, written lower); with
// anyCase when a pattern takes any case. Nil when the strings are open.
func enumOf(v cue.Value) (values []string, anyCase bool) {
	if op, _ := v.Expr(); op == cue.SelectorOp {
		v = cue.Dereference(v)
	}
	args := []cue.Value{v}
	if op, a := v.Expr(); op == cue.OrOp {
		args = a
	}
	for _, a := range args {
		if op, _ := a.Expr(); op == cue.SelectorOp {
			a = cue.Dereference(a)
		}
		if a.IncompleteKind() != cue.StringKind {
			continue
		}
		if s, err := a.String(); err == nil && a.IsConcrete() {
			values = append(values, s)
			continue
		}
		op, pa := a.Expr()
		if op != cue.RegexMatchOp || len(pa) != 1 {
			return nil, false
		}
		pat, err := pa[0].String()
		m := enumWords.FindStringSubmatch(pat)
		if err != nil || m == nil {
			return nil, false
		}
		values = append(values, strings.Split(strings.ReplaceAll(m[2], countArg, "[N]"), "|")...)
		anyCase = anyCase || m[1] != ""
	}
	return slices.Compact(values), anyCase
}

func typeOf(v cue.Value) string {
	t := kindsOf(v)
	if vals, anyCase := enumOf(v); len(vals) > 0 {
		if t != "string" {
			t += "; the string"
		}
		t += ": one of `" + strings.Join(vals, "`, `") + "`"
		if anyCase {
			t += " (any case)"
		}
	}
	return t
}

func kindsOf(v cue.Value) string {
	k := v.IncompleteKind()
	var parts []string
	switch {
	case k&cue.IntKind != 0 && k&cue.FloatKind != 0:
		parts = append(parts, "number")
	case k&cue.IntKind != 0:
		parts = append(parts, "integer")
	case k&cue.FloatKind != 0:
		parts = append(parts, "number")
	}
	for _, c := range []struct {
		k cue.Kind
		s string
	}{{cue.StringKind, "string"}, {cue.BoolKind, "boolean"}, {cue.ListKind, "list"}, {cue.StructKind, "object"}} {
		if k&c.k != 0 {
			parts = append(parts, c.s)
		}
	}
	if len(parts) == 0 {
		return "any"
	}
	return strings.Join(parts, " or ")
}
