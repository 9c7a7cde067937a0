package tasks

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/dbt"
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

// TestDbtModelKey: a dbt model publishes under its build's replace key, and a stale re-run
// under one made with the upstream keys it consumes, new for each upstream state and the same
// for a retry over the same state, as a pipeline's stale re-run (issue 32).
func TestDbtModelKey(t *testing.T) {
	w := v1.LogicalWindow{Start: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)}
	p := modelPipeline("shop_dbt", &dbt.Config{}, dbt.Node{Name: "daily", Schema: "main", Alias: "daily", Materialized: "table"})
	own := p.IdempotencyKey(w)
	plain := modelKey(DbtBuild{Window: w}, p, "fp1")
	if plain != v1.ReplaceKey(own, "fp1") {
		t.Fatalf("a build's key %s, want its replace key", plain)
	}
	stale := modelKey(DbtBuild{Window: w, StaleConsumed: []string{"k1", "k2"}}, p, "fp1")
	if stale != v1.StaleReplaceKey(own, "fp1", []string{"k1", "k2"}) || stale == plain {
		t.Fatalf("a stale re-run's key %s, want the stale replace key (not %s)", stale, plain)
	}
	if again := modelKey(DbtBuild{Window: w, StaleConsumed: []string{"k1", "k2"}}, p, "fp1"); again != stale {
		t.Fatalf("a retry over the same upstream state has key %s, want %s", again, stale)
	}
	if other := modelKey(DbtBuild{Window: w, StaleConsumed: []string{"k1", "k3"}}, p, "fp1"); other == stale {
		t.Fatal("a re-run over a new upstream state has the same key as the last one")
	}
}
