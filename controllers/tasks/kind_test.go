package tasks

import (
	"encoding/json"
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

// TestRenameConfigsByKind: each kind renames the configs its task names (ldp export k8s), and
// nothing else: a sql input that is namespace.table is a table, not a config.
func TestRenameConfigsByKind(t *testing.T) {
	task := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ref := func(s string) string { return "obj:" + s }
	for in, want := range map[string]string{
		`{"id": "a", "pipeline": "a.json"}`:                                   `{"id":"a","pipeline":"obj:a.json"}`,
		`{"id": "m", "maintain": {"config": "a.yaml", "apply": true}}`:        `{"id":"m","maintain":{"apply":true,"config":"obj:a.yaml"}}`,
		`{"id": "q", "sql": {"inputs": {"x": "x.json", "y": "shop.orders"}}}`: `{"id":"q","sql":{"inputs":{"x":"obj:x.json","y":"shop.orders"}}}`,
		`{"id": "d", "dbt": {"project": "proj"}, "depends_on": ["a.json"]}`:   `{"dbt":{"project":"proj"},"depends_on":["a.json"],"id":"d"}`,
	} {
		m := task(in)
		RenameConfigs(m, ref)
		if got, _ := json.Marshal(m); string(got) != want {
			t.Errorf("%s renamed to %s, want %s", in, got, want)
		}
	}
}
