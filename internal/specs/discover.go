package specs

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// skipDirs are folders discovery never enters, besides those whose name starts with a dot:
// tools' folders, testdata, which holds fixtures (invalid specs among them), as Go's tools
// skip it, and vendor and third_party, which hold other projects' files (the YAML of a
// vendored library is no spec of this project).
var skipDirs = map[string]bool{"node_modules": true, "venv": true, "env": true, "site-packages": true, "__pycache__": true, "testdata": true, "vendor": true, "third_party": true}

// SkipDir reports whether discovery passes over a folder of this name.
func SkipDir(name string) bool { return strings.HasPrefix(name, ".") || skipDirs[name] }

// SpecExtensions are the file endings discovery reads.
var SpecExtensions = []string{".json", ".yaml", ".yml"}

// Candidate is a file discovery found.
type Candidate struct {
	Path string
	// Explicit is set for a file named on the command line rather than found in a folder.
	Explicit bool
	// TooLarge is set for a file over v1.MaxSpecBytes; discovery in a folder passes over it.
	TooLarge bool
}

// Discover returns the spec files under roots: a root that is a file is returned as it is, a
// folder is walked with the contract's rules (no dot folders, node_modules, venv, env,
// site-packages or __pycache__; only .json, .yaml and .yml files; no *.metadata.json). The result
// is sorted and has no repeats.
func Discover(roots []string) ([]Candidate, error) {
	seen := map[string]bool{}
	var out []Candidate
	add := func(c Candidate) {
		key := filepath.Clean(c.Path)
		if seen[key] {
			return
		}
		seen[key] = true
		c.Path = key
		out = append(out, c)
	}
	for _, root := range roots {
		info, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			add(Candidate{Path: root, Explicit: true, TooLarge: info.Size() > v1.MaxSpecBytes})
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if p != root && SkipDir(name) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !IsSpecName(name) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			add(Candidate{Path: p, TooLarge: info.Size() > v1.MaxSpecBytes})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// IsSpecName reports whether discovery reads a file of this name.
func IsSpecName(name string) bool {
	if strings.HasSuffix(name, ".metadata.json") {
		return false
	}
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range SpecExtensions {
		if ext == e {
			return true
		}
	}
	return false
}
