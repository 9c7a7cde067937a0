package ldperr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestPublicLeavesValuesOut: an event's message of a wrapped DataError names file, line and
// column, and not the value the terminal's message shows.
func TestPublicLeavesValuesOut(t *testing.T) {
	de := &DataError{File: "drops/people.csv", Line: 3, Column: "ssn", Value: "123-45-6789", Msg: "is not a whole number, and the table's column is long"}
	err := fmt.Errorf("write people: %w", de)
	if got := err.Error(); !strings.Contains(got, "123-45-6789") {
		t.Errorf("Error() = %q, want the value for the terminal", got)
	}
	want := `write people: drops/people.csv:3: column "ssn": a value is not a whole number, and the table's column is long`
	if got := Public(err); got != want {
		t.Errorf("Public = %q, want %q", got, want)
	}
	// A wrapper that rephrased the message keeps nothing of it but the public part.
	if got := Public(&rephrased{de}); got != de.Public() {
		t.Errorf("Public of a rephrasing wrapper = %q, want %q", got, de.Public())
	}
	if got := Public(errors.Join(errors.New("a"), de)); strings.Contains(got, "123-45-6789") || !strings.Contains(got, `column "ssn"`) {
		t.Errorf("Public of a join = %q", got)
	}
	if got := Public(errors.New("plain")); got != "plain" {
		t.Errorf("Public = %q", got)
	}
}

type rephrased struct{ err error }

func (r *rephrased) Error() string { return "it failed: " + strings.ToUpper(r.err.Error()) }
func (r *rephrased) Unwrap() error { return r.err }
