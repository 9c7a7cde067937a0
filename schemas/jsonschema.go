package schemas

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/encoding/jsonschema"
)

// SchemaID is the $id of the exported schemas; editors key their cache on it.
const SchemaID = "https://ldp.dev/schemas/ldp-v1"

// JSONSchema exports the definition of kind ("Pipeline" or "Workflow"; "" for a schema that
// accepts either) as JSON Schema draft 2020-12, for editors.
//
// CUE's generator drops defaults, has no form for the check comprehension and keeps Go's
// (?i:...) flag groups, which ECMAScript regexes (what editors run) reject; each is mended here.
func JSONSchema(kind string) ([]byte, error) {
	cueMu.Lock()
	defer cueMu.Unlock()
	if kind == "" {
		return combinedSchema()
	}
	m, err := exportKind(kind)
	if err != nil {
		return nil, err
	}
	m["$id"] = SchemaID + "/" + strings.ToLower(kind) + ".json"
	m["title"] = "ldp/v1 " + kind
	return json.MarshalIndent(m, "", "  ")
}

func combinedSchema() ([]byte, error) {
	defs := map[string]any{}
	var refs []any
	for _, k := range []string{"Pipeline", "Workflow"} {
		m, err := exportKind(k)
		if err != nil {
			return nil, err
		}
		for name, d := range m["$defs"].(map[string]any) {
			defs[name] = d
		}
		delete(m, "$defs")
		delete(m, "$schema")
		defs[k] = m
		refs = append(refs, map[string]any{"$ref": "#/$defs/" + k})
	}
	return json.MarshalIndent(map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     SchemaID + ".json",
		"title":   "ldp/v1 spec (Pipeline or Workflow)",
		"anyOf":   refs,
		"$defs":   defs,
	}, "", "  ")
}

func exportKind(kind string) (map[string]any, error) {
	def, err := Definition(kind)
	if err != nil {
		return nil, err
	}
	m, err := generate(def)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", kind, err)
	}
	defs, _ := m["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
		m["$defs"] = defs
	}
	if _, ok := defs["Check"]; ok {
		chk, err := checkUnion(defs)
		if err != nil {
			return nil, err
		}
		defs["Check"] = chk
	}
	addDefaults(def, m, defs)
	fixPatterns(m)
	return m, nil
}

// checkUnion builds the JSON Schema of #Check, whose comprehension has no JSON Schema form, as
// a oneOf with one closed object per check of #CheckParams.
func checkUnion(defs map[string]any) (map[string]any, error) {
	s, _ := schema()
	params := s.LookupPath(cue.ParsePath("#CheckParams"))
	it, err := params.Fields()
	if err != nil {
		return nil, err
	}
	var branches []any
	for it.Next() {
		name := it.Selector().Unquoted()
		b, err := generate(it.Value())
		if err != nil {
			return nil, fmt.Errorf("export check %s: %w", name, err)
		}
		if sub, ok := b["$defs"].(map[string]any); ok {
			for k, v := range sub {
				defs[k] = v
			}
			delete(b, "$defs")
		}
		delete(b, "$schema")
		props, _ := b["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			b["properties"] = props
		}
		props["check"] = map[string]any{"const": name}
		req, _ := b["required"].([]any)
		b["required"] = append([]any{"check"}, req...)
		b["type"] = "object"
		b["additionalProperties"] = false
		branches = append(branches, b)
	}
	return map[string]any{"description": "One quality check: its name in check, and the keys that check takes.", "oneOf": branches}, nil
}

func generate(v cue.Value) (map[string]any, error) {
	expr, err := jsonschema.Generate(v, nil)
	if err != nil {
		return nil, err
	}
	b, err := v.Context().BuildExpr(expr).MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// addDefaults copies each CUE default (*value) into the "default" of the matching property,
// walking the CUE value and the JSON Schema side by side.
func addDefaults(v cue.Value, node map[string]any, defs map[string]any) {
	for _, n := range schemaNodes(node, defs) {
		props, _ := n["properties"].(map[string]any)
		if props == nil {
			continue
		}
		for _, sv := range structBranches(v) {
			it, err := sv.Fields(cue.Optional(true))
			if err != nil {
				continue
			}
			for it.Next() {
				prop, _ := props[it.Selector().Unquoted()].(map[string]any)
				if prop == nil {
					continue
				}
				fv := it.Value()
				if d, ok := fv.Default(); ok && d.IsConcrete() {
					var val any
					// An open list [...T] defaults to [] in CUE; that is not a declared default.
					if err := d.Decode(&val); err == nil && !isEmptyList(val) {
						prop["default"] = val
					}
				}
				addDefaults(fv, prop, defs)
				if items, ok := prop["items"].(map[string]any); ok {
					addDefaults(fv.LookupPath(cue.MakePath(cue.AnyIndex)), items, defs)
				}
			}
		}
	}
}

// schemaNodes resolves a JSON Schema node to the object schemas it stands for: itself, its
// $ref target, and the branches of anyOf / oneOf.
func schemaNodes(node map[string]any, defs map[string]any) []map[string]any {
	var out []map[string]any
	var walk func(n map[string]any, depth int)
	walk = func(n map[string]any, depth int) {
		if n == nil || depth > 8 {
			return
		}
		out = append(out, n)
		if ref, ok := n["$ref"].(string); ok {
			if d, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any); ok {
				walk(d, depth+1)
			}
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			list, _ := n[k].([]any)
			for _, b := range list {
				bm, _ := b.(map[string]any)
				walk(bm, depth+1)
			}
		}
	}
	walk(node, 0)
	return out
}

// structBranches returns the struct values a CUE value may be: itself, or the struct branches
// of a disjunction.
func structBranches(v cue.Value) []cue.Value {
	if op, args := v.Expr(); op == cue.OrOp {
		var out []cue.Value
		for _, a := range args {
			if a.IncompleteKind() == cue.StructKind {
				out = append(out, a)
			}
		}
		return out
	}
	if v.IncompleteKind() == cue.StructKind {
		return []cue.Value{v}
	}
	return nil
}

var flagGroup = regexp.MustCompile(`\(\?i:([^()]*)\)`)

// fixPatterns rewrites Go's case-insensitive groups (?i:csv|json) as ECMAScript-compatible
// character classes ([Cc][Ss][Vv]|[Jj][Ss][Oo][Nn]).
func fixPatterns(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && k == "pattern" {
				t[k] = flagGroup.ReplaceAllStringFunc(s, func(g string) string {
					inner := flagGroup.FindStringSubmatch(g)[1]
					var b strings.Builder
					b.WriteString("(?:")
					for _, r := range inner {
						lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
						if lo != up {
							b.WriteString("[" + up + lo + "]")
						} else {
							b.WriteRune(r)
						}
					}
					b.WriteString(")")
					return b.String()
				})
				continue
			}
			fixPatterns(e)
		}
	case []any:
		for _, e := range t {
			fixPatterns(e)
		}
	}
}

func isEmptyList(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) == 0
}
