package engine

import (
	"context"
	"regexp"
	"testing"
)

// TestVersionIsTheDatabases: the library's version, which ldp version prints without starting
// a database, is what a database of it says.
func TestVersionIsTheDatabases(t *testing.T) {
	ctx := context.Background()
	d, err := OpenPrivate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var want string
	if err := d.QueryRow(ctx, "SELECT version()", &want); err != nil {
		t.Fatal(err)
	}
	if got := Version(); got != want || !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(got) {
		t.Errorf("Version() = %q, SELECT version() = %q", got, want)
	}
}
