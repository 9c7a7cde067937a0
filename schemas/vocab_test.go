package schemas

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"

	"cuelang.org/go/cue"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestEnumsEqualTheGoConstants: the values the schema allows for a format, a write mode and a
// catalog type are the typed vocabularies of apis/v1, which the code compares against. A value
// added on one side only would validate and then fall through every comparison (or be refused
// by the schema while the code handles it).
func TestEnumsEqualTheGoConstants(t *testing.T) {
	s, err := schema()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		def, field string
		want       []string
		norm       func(string) string
	}{
		{"#Source", "format", v1.Names(v1.SourceFormats), strings.ToUpper},
		{"#Target", "format", v1.Names(v1.TargetFormats), strings.ToUpper},
		{"#ModelTarget", "format", v1.Names(v1.ModelTargetFormats), strings.ToUpper},
		{"#Target", "write_mode", v1.Names(v1.WriteModes), strings.ToLower},
		{"#ModelTarget", "write_mode", v1.Names(v1.WriteModes), strings.ToLower},
		{"#Catalog", "type", v1.Names(v1.CatalogTypes), nil},
	}
	for _, c := range cases {
		d := s.LookupPath(cue.ParsePath(c.def))
		v := d.LookupPath(cue.MakePath(cue.Str(c.field).Required()))
		if !v.Exists() {
			v = d.LookupPath(cue.MakePath(cue.Str(c.field).Optional()))
		}
		if !v.Exists() {
			t.Errorf("%s.%s: not in the schema", c.def, c.field)
			continue
		}
		got, err := enumValues(v)
		if err != nil {
			t.Errorf("%s.%s: %v", c.def, c.field, err)
			continue
		}
		if c.norm != nil {
			for i := range got {
				got[i] = c.norm(got[i])
			}
		}
		got = sortedSet(got)
		if want := sortedSet(c.want); !slices.Equal(got, want) {
			t.Errorf("%s.%s: the schema allows %q, apis/v1 has %q", c.def, c.field, got, want)
		}
	}
}

// TestTaskKindsAreTheSchemasTaskFields: a task names its kind by a key of #Task, and
// validation reads v1.TaskKinds for the keys that are kinds; a kind added to one and not the
// other would be refused by the schema, or accepted and never counted.
func TestTaskKindsAreTheSchemasTaskFields(t *testing.T) {
	d, err := Definition("Task")
	if err != nil {
		t.Fatal(err)
	}
	it, err := d.Fields(cue.Optional(true))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for it.Next() {
		switch k := it.Selector().Unquoted(); k {
		case "id", "depends_on", "upstream", "retries":
		default:
			got = append(got, k)
		}
	}
	if want := sortedSet(v1.Names(v1.TaskKinds)); !slices.Equal(sortedSet(got), want) {
		t.Errorf("#Task has the kinds %q, v1.TaskKinds %q", sortedSet(got), want)
	}
}

func TestEnumValuesOfAPattern(t *testing.T) {
	for pat, want := range map[string][]string{
		`^(?i:csv|parquet|json|iceberg)$`: {"csv", "iceberg", "json", "parquet"},
		`^(?i:json|jsonl)$`:               {"json", "jsonl"}, // the parser factors the prefix
		`^(a|b)c?$`:                       {"a", "ac", "b", "bc"},
	} {
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := language(re)
		if err != nil {
			t.Fatal(err)
		}
		if got = sortedSet(got); !slices.Equal(got, want) {
			t.Errorf("language(%s) = %q, want %q", pat, got, want)
		}
	}
	re, _ := syntax.Parse(`^[a-z]+$`, syntax.Perl)
	if _, err := language(re); err == nil {
		t.Error("an infinite pattern has a finite language")
	}
}

// enumValues is every string a CUE value allows, when it allows finitely many: the strings of
// a disjunction and the language of a pattern (=~), through references to definitions.
func enumValues(v cue.Value) ([]string, error) {
	if root, path := v.ReferencePath(); root.Exists() {
		return enumValues(root.LookupPath(path))
	}
	op, args := v.Expr()
	switch op {
	case cue.NoOp:
		s, err := v.String()
		if err != nil {
			return nil, fmt.Errorf("%v is not one string: %w", v, err)
		}
		return []string{s}, nil
	case cue.OrOp:
		var out []string
		for _, a := range args {
			vs, err := enumValues(a)
			if err != nil {
				return nil, err
			}
			out = append(out, vs...)
		}
		return out, nil
	case cue.RegexMatchOp:
		pat, err := args[0].String()
		if err != nil {
			return nil, err
		}
		re, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			return nil, err
		}
		return language(re)
	}
	return nil, fmt.Errorf("%v (%v) is not a disjunction of strings or a pattern", v, op)
}

// language lists the strings a regexp matches whole (anchors ignored); a letter under (?i) is
// listed lower-case. It fails on a pattern that matches infinitely many.
func language(re *syntax.Regexp) ([]string, error) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine:
		return []string{""}, nil
	case syntax.OpLiteral:
		r := re.Rune
		if re.Flags&syntax.FoldCase != 0 {
			r = []rune(strings.Map(unicode.ToLower, string(r)))
		}
		return []string{string(r)}, nil
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] > 64 {
				return nil, fmt.Errorf("%s is too wide a class", re)
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(unicode.ToLower(r)))
			}
		}
		return out, nil
	case syntax.OpCapture:
		return language(re.Sub[0])
	case syntax.OpQuest:
		sub, err := language(re.Sub[0])
		return append(sub, ""), err
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			l, err := language(s)
			if err != nil {
				return nil, err
			}
			out = append(out, l...)
		}
		return out, nil
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			l, err := language(s)
			if err != nil {
				return nil, err
			}
			var next []string
			for _, a := range out {
				for _, b := range l {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s matches infinitely many strings", re)
}

func sortedSet(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
