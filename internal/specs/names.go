package specs

import (
	"fmt"
	"path/filepath"

	"github.com/ldp-dev/ldp/schemas"
)

// Names is the rule that an object's kind and identifier name it once in a folder: the specs of
// one folder share its run ledger (.ldp/ beside them), so two files of one kind and identifier
// there would be one object run twice, each taken for the other's runs (kubectl refuses two
// objects of one kind and name in a namespace the same way).
type Names struct {
	first map[string]schemas.Problem
}

// Claim records that the file at path defines the object kind/identifier, named at line:col.
// For a name a file earlier in the folder claimed already, it returns the problem to report on
// this one; the earlier file keeps the name.
func (n *Names) Claim(path, kind, identifier string, line, col int) *schemas.Problem {
	if kind == "" || identifier == "" {
		return nil
	}
	if n.first == nil {
		n.first = map[string]schemas.Problem{}
	}
	k := filepath.Dir(filepath.Clean(path)) + "\x00" + kind + "\x00" + identifier
	at := schemas.Problem{File: path, Line: line, Column: col, Field: "identifier"}
	first, ok := n.first[k]
	if !ok {
		n.first[k] = at
		return nil
	}
	if filepath.Clean(first.File) == filepath.Clean(path) {
		return nil
	}
	at.Message = fmt.Sprintf("the %s %q is defined already in %s (line %d, column %d), in the same folder; both would run and share one ledger: rename one, or move one to another folder",
		kind, identifier, filepath.Base(first.File), first.Line, first.Column)
	return &at
}
