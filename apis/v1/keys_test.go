package v1

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// vectorsFile is the copy of the shared key vectors kept in testdata: tests read nothing
// outside the repository (make vectorscheck compares it with the shared file, where there is
// one beside the checkout).
func vectorsFile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKeyVectors(t *testing.T) {
	var v struct {
		Keys []struct {
			Pipeline, Target string
			Start            string `json:"window_start_utc"`
			End              string `json:"window_end_utc"`
			Note             string
			Canonical        string `json:"canonical_json"`
			Key              string `json:"idempotency_key"`
		} `json:"idempotency_keys"`
		Replace []struct {
			Key       string
			SpecHash  string `json:"spec_hash"`
			Canonical string `json:"canonical_json"`
			Replace   string `json:"replace_key"`
		} `json:"replace_keys"`
	}
	if err := json.Unmarshal(vectorsFile(t), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Keys) == 0 || len(v.Replace) == 0 {
		t.Fatal("vectors file holds no vectors")
	}
	parse := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, k := range v.Keys {
		t.Run(k.Note, func(t *testing.T) {
			w := LogicalWindow{Start: parse(k.Start), End: parse(k.End)}
			canon, err := CanonicalJSON([]any{APIVersion, "idempotency", k.Pipeline, k.Target, FormatInstant(w.Start), FormatInstant(w.End)})
			if err != nil {
				t.Fatal(err)
			}
			if string(canon) != k.Canonical {
				t.Errorf("canonical JSON\n got %s\nwant %s", canon, k.Canonical)
			}
			if got := IdempotencyKey(k.Pipeline, k.Target, w); got != k.Key {
				t.Errorf("key = %s, want %s", got, k.Key)
			}
		})
	}
	for _, r := range v.Replace {
		if got := ReplaceKey(r.Key, r.SpecHash); got != r.Replace {
			t.Errorf("replace key = %s, want %s", got, r.Replace)
		}
	}
}

func TestPipelineKeyUsesNamespaceThenIdentifier(t *testing.T) {
	p := &Pipeline{Identifier: "nyc_taxi", Metadata: PipelineMetadata{Target: Target{
		Name: "rides", Format: "iceberg", Catalog: &Catalog{Identifier: "nyc"}}}}
	w := LogicalWindow{Start: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)}
	if got, want := p.IdempotencyKey(w), "fe6dbae85858dd3704ac2973a09bca93aaa66d95508d6bfc10f7f48c50c1cb1d"; got != want {
		t.Errorf("key = %s, want %s", got, want)
	}
	// The same two instants written in another zone are the same window.
	paris, _ := time.LoadLocation("Europe/Paris")
	w2 := LogicalWindow{Start: w.Start.In(paris), End: w.End.In(paris)}
	if p.IdempotencyKey(w2) != p.IdempotencyKey(w) {
		t.Error("key depends on the zone the instants are written in")
	}
	p.Metadata.Target.Catalog.Namespace = "other"
	if p.IdempotencyKey(w) == "fe6dbae85858dd3704ac2973a09bca93aaa66d95508d6bfc10f7f48c50c1cb1d" {
		t.Error("catalog.namespace does not change the target identity")
	}
}

func TestCanonicalJSON(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{`{"b": 1, "a": [true, null, "x"]}`, `{"a":[true,null,"x"],"b":1}`},
		{`"<&>\u2028é\u0001\b\f"`, `"<&>` + "\u2028" + `é\u0001\b\f"`},
		{`[2.0, 1.5, 1e16, 0.0001, 0.00001, 100]`, `[2.0,1.5,1e+16,0.0001,1e-05,100]`},
	}
	for _, c := range cases {
		dec := json.NewDecoder(strings.NewReader(c.in))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got, err := CanonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("CanonicalJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// A []string (as a spec's Go struct holds a list) writes exactly as the []any of the same
// strings that a decoded document holds, escapes and all: the spec hash must not depend on
// which one it was given.
func TestCanonicalStringListsWriteAsAnyLists(t *testing.T) {
	strs := []string{"a", `q"uote`, "\u0001", "é"}
	anys := []any{"a", `q"uote`, "\u0001", "é"}
	gs, err := CanonicalJSON(map[string]any{"l": strs, "e": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	ga, err := CanonicalJSON(map[string]any{"l": anys, "e": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"e":[],"l":["a","q\"uote","\u0001","é"]}`
	if string(gs) != want || string(ga) != want {
		t.Errorf("CanonicalJSON of the []string = %s and of the []any = %s, want both %s", gs, ga, want)
	}
	if _, err := CanonicalJSON([]any{"a", struct{}{}}); err == nil || !strings.Contains(err.Error(), "unsupported type struct {}") {
		t.Errorf("CanonicalJSON of a list holding a struct: error %v, want unsupported type", err)
	}
}

// TestDelayKeepsTheSpecHash: metadata.window.delay says when a window may run, not what its run
// does, so adding one does not change the spec hash (the replace keys of the windows already
// published stay theirs); the window's column does.
func TestDelayKeepsTheSpecHash(t *testing.T) {
	p := &Pipeline{Identifier: "o", Metadata: PipelineMetadata{Window: &Window{Size: "day", Column: "ts"},
		Target: Target{Name: "o", Format: "iceberg", Catalog: &Catalog{Identifier: "c"}}}}
	before, err := p.SpecHash()
	if err != nil {
		t.Fatal(err)
	}
	p.Metadata.Window.Delay = "2h"
	if after, _ := p.SpecHash(); after != before {
		t.Errorf("a delay changed the spec hash: %s, was %s", after, before)
	}
	p.Metadata.Window.Column = "other"
	if after, _ := p.SpecHash(); after == before {
		t.Error("the window column does not change the spec hash")
	}
}

// TestStaleReplaceKey: a stale re-run's key is new for each upstream state and the same for
// the same state, and never the window's plain replace key (which a first re-run left on main).
func TestStaleReplaceKey(t *testing.T) {
	const key, hash = "k", "h"
	a := StaleReplaceKey(key, hash, []string{"u1", "u2"})
	if again := StaleReplaceKey(key, hash, []string{"u1", "u2"}); a != again {
		t.Fatalf("the same consumed keys gave %s then %s", a, again)
	}
	if b := StaleReplaceKey(key, hash, []string{"u1", "u3"}); a == b {
		t.Fatalf("another upstream state gave the same key %s", a)
	}
	if r := ReplaceKey(key, hash); a == r {
		t.Fatalf("the stale key is the plain replace key %s", r)
	}
	// The formula, pinned: sha256 of the canonical JSON, as another implementation would make it.
	if want := "402e38663239e92142138f96017ce643b205edbaef8d6ac048353754f23a13a5"; a != want {
		t.Fatalf(`StaleReplaceKey = %s, want sha256(["ldp/v1","replace","k","h",["u1","u2"]]) = %s`, a, want)
	}
}
