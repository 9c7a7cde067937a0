package tasks

import (
	"slices"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestEveryKindIsRegistered: each kind of v1.TaskKinds (the list validation reads) has its
// file here; a kind in the list with no implementation would validate and then fail every
// run.
func TestEveryKindIsRegistered(t *testing.T) {
	want := slices.Sorted(slices.Values(v1.TaskKinds))
	if got := Registered(); !slices.Equal(got, want) {
		t.Errorf("registered %q, v1.TaskKinds %q", got, want)
	}
}

// TestRegisterRefusesAnUnlistedKind: a kind outside v1.TaskKinds would run but never validate.
func TestRegisterRefusesAnUnlistedKind(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Register accepted a kind that is not in v1.TaskKinds")
		}
	}()
	Register("nope", pipelineKind{})
}
