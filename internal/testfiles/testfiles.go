// Package testfiles writes the files of a test's project (specs, drops) into its folder. Only
// tests import it.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// Put writes body to name under dir, making the folders it needs, and returns its path.
func Put(t testing.TB, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
