package specs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiscoverFollowsTheContractsRules(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{
		"a.json":                       10,
		"b.yaml":                       10,
		"c.yml":                        10,
		"notes.txt":                    10,
		"sub/d.json":                   10,
		"sub/deeper/e.JSON":            10,
		".hidden/f.json":               10,
		"node_modules/g.json":          10,
		"venv/h.json":                  10,
		"env/i.json":                   10,
		"lib/site-packages/j.json":     10,
		"__pycache__/k.json":           10,
		"warehouse/t/v1.metadata.json": 10,
		"big.json":                     (1 << 20) + 1,
	}
	for name, size := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat(" ", size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Discover([]string{dir, filepath.Join(dir, "notes.txt"), filepath.Join(dir, "a.json")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range got {
		rel, _ := filepath.Rel(dir, c.Path)
		tag := ""
		if c.Explicit {
			tag += " explicit"
		}
		if c.TooLarge {
			tag += " too-large"
		}
		names = append(names, filepath.ToSlash(rel)+tag)
	}
	want := []string{"a.json", "b.yaml", "big.json too-large", "c.yml", "notes.txt explicit", "sub/d.json", "sub/deeper/e.JSON"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Discover =\n %q\nwant\n %q", names, want)
	}
	if _, err := Discover([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing root is not an error")
	}
}
