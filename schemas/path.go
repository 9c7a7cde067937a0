package schemas

import (
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// fieldPath is a path into a document: object keys, and list indexes written as numbers.
type fieldPath []string

// String writes the path as users read it: metadata.quality[0].columns.
func (p fieldPath) String() string {
	var b strings.Builder
	for _, s := range p {
		if isIndex(s) {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// FieldPath writes a path given as its parts (object keys, list indexes as numbers) the way a
// Problem's Field does, so a check outside this package names a field as the schema's do.
func FieldPath(parts []string) string { return fieldPath(parts).String() }

func (p fieldPath) key() string { return strings.Join(p, "\x00") }

func (p fieldPath) parent() fieldPath {
	if len(p) == 0 {
		return nil
	}
	return p[:len(p)-1]
}

func (p fieldPath) last() string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

func (p fieldPath) child(s string) fieldPath {
	c := make(fieldPath, len(p), len(p)+1)
	copy(c, p)
	return append(c, s)
}

// hasPrefix reports whether q is p or under p.
func (p fieldPath) hasPrefix(q fieldPath) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

func isIndex(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && s != "" && s[0] != '-'
}

// node is where a path stands in the data file.
type node struct {
	key   token.Pos // the key of the field (invalid for list elements and the root)
	value token.Pos // the start of the value
	field *ast.Field
	expr  ast.Expr
	elts  *[]ast.Expr // the list holding the value, for list elements
	index int
	decls *[]ast.Decl // the struct holding the field, for fields
}

// index maps every path of a document to its node.
type index map[string]*node

// duplicate is a key an object of the document sets twice: where first, and the second time.
type duplicate struct {
	path         fieldPath
	first, again token.Pos
}

// buildIndex indexes every path of the document, and returns the keys set twice in one object
// (the first one stays in the index).
func buildIndex(root ast.Expr) (index, []duplicate) {
	ix := index{}
	var dups []duplicate
	var walk func(p fieldPath, e ast.Expr)
	walk = func(p fieldPath, e ast.Expr) {
		switch t := e.(type) {
		case *ast.StructLit:
			for _, d := range t.Elts {
				f, ok := d.(*ast.Field)
				if !ok {
					continue
				}
				name, _, err := ast.LabelName(f.Label)
				if err != nil {
					continue
				}
				cp := p.child(name)
				if prev, seen := ix[cp.key()]; seen {
					// The second value is not indexed: its keys are no duplicates of their own.
					dups = append(dups, duplicate{path: cp, first: prev.key, again: f.Label.Pos()})
					continue
				}
				ix[cp.key()] = &node{key: f.Label.Pos(), value: f.Value.Pos(), field: f, expr: f.Value, decls: &t.Elts}
				walk(cp, f.Value)
			}
		case *ast.ListLit:
			for i, el := range t.Elts {
				cp := p.child(strconv.Itoa(i))
				ix[cp.key()] = &node{value: el.Pos(), expr: el, elts: &t.Elts, index: i}
				walk(cp, el)
			}
		}
	}
	ix[fieldPath(nil).key()] = &node{value: root.Pos(), expr: root}
	walk(nil, root)
	return ix, dups
}

// lookup finds the node of p, or of its nearest ancestor that exists.
func (ix index) lookup(p fieldPath) (*node, fieldPath) {
	for q := p; ; q = q.parent() {
		if n, ok := ix[q.key()]; ok {
			return n, q
		}
		if len(q) == 0 {
			return nil, nil
		}
	}
}

// position is the line and column of a token position, 1:1 when unknown.
func position(pos token.Pos) (int, int) {
	if !pos.IsValid() {
		return 1, 1
	}
	p := pos.Position()
	if p.Line == 0 {
		return 1, 1
	}
	if p.Column == 0 {
		return p.Line, 1
	}
	return p.Line, p.Column
}
