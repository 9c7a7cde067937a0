package schemas_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/invalid")

const invalidDir = "testdata/invalid"
const samplesDir = "../config/samples"

// yamlDir holds the YAML forms of samples (beside their JSON twins they would be duplicates).
const yamlDir = "../examples/yaml"

// specFiles lists the spec files under dir, including those discovery passes over (too large).
func specFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && specs.IsSpecName(d.Name()) {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInvalidSpecs checks each spec of testdata/invalid against its golden file: the exact
// problems, positions and messages ldp validate prints for it.
func TestInvalidSpecs(t *testing.T) {
	files := specFiles(t, invalidDir)
	if len(files) < 40 {
		t.Fatalf("testdata/invalid holds %d specs, want at least 40", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, invalidDir+"/"), func(t *testing.T) {
			report, err := specs.Check([]string{f})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, p := range report.Problems() {
				rel, err := filepath.Rel(invalidDir, p.File)
				if err != nil {
					t.Fatal(err)
				}
				p.File = filepath.ToSlash(rel)
				b.WriteString(p.String() + "\n")
			}
			got := b.String()
			if got == "" {
				t.Fatalf("%s is in testdata/invalid but has no problem", f)
			}
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./schemas -run TestInvalidSpecs -update)", err)
			}
			if got != string(want) {
				t.Errorf("problems differ from %s\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestSamplesAreValid(t *testing.T) {
	files := specFiles(t, samplesDir)
	if len(files) < 5 {
		t.Fatalf("config/samples holds %d specs, want the contract's examples", len(files))
	}
	report, err := specs.Check([]string{samplesDir})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range report.Problems() {
		t.Errorf("sample has a problem: %s", p)
	}
	if len(report.Files) != len(files) {
		t.Errorf("checked %d files, want %d", len(report.Files), len(files))
	}
	for _, f := range files {
		if _, err := specs.Read(f); err != nil {
			t.Errorf("Load(%s): %v", f, err)
		}
	}
}

// TestSampleTwinsHashTheSame: a spec written in JSON and in YAML means the same, so it must
// hash the same.
func TestSampleTwinsHashTheSame(t *testing.T) {
	for _, name := range []string{"nyc_taxi", "daily_orders"} {
		a, err := specs.ReadPipeline(filepath.Join(samplesDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := specs.ReadPipeline(filepath.Join(yamlDir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		ha, _ := a.SpecHash()
		hb, _ := b.SpecHash()
		if ha != hb {
			t.Errorf("%s: JSON hashes %s, YAML %s", name, ha, hb)
		}
	}
}

func compileExport(t *testing.T, kind string) *jsonschema.Schema {
	t.Helper()
	b, err := schemas.JSONSchema(kind)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("ldp.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("ldp.json")
	if err != nil {
		t.Fatalf("exported %q schema does not compile: %v", kind, err)
	}
	return s
}

func loadAsJSON(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := specs.ToJSON(data, path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestJSONSchemaValidatesSamples checks the exported schemas with an independent validator:
// every sample passes, and specs with a misspelled key, a bad enum or a missing required key
// fail.
func TestJSONSchemaValidatesSamples(t *testing.T) {
	either := compileExport(t, "")
	byKind := map[string]*jsonschema.Schema{"Pipeline": compileExport(t, "Pipeline"), "Workflow": compileExport(t, "Workflow")}
	for _, f := range append(specFiles(t, samplesDir), specFiles(t, yamlDir)...) {
		obj, err := specs.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := loadAsJSON(t, f)
		if err := either.Validate(doc); err != nil {
			t.Errorf("%s fails the combined schema: %v", f, err)
		}
		if err := byKind[obj.ObjectKind()].Validate(doc); err != nil {
			t.Errorf("%s fails the %s schema: %v", f, obj.ObjectKind(), err)
		}
	}
	for _, name := range []string{"misspelled_key.json", "bad_write_mode.json", "missing_metadata.json", "unknown_check.json", "window_bad_size.json", "check_unknown_param.json", "workflow_without_tasks.json"} {
		if err := either.Validate(loadAsJSON(t, filepath.Join(invalidDir, name))); err == nil {
			t.Errorf("%s passes the exported schema, want a failure", name)
		}
	}
}

// TestJSONSchemaKeepsDefaultsAndRequired: the export must carry the defaults CUE's generator
// drops, and the required keys.
func TestJSONSchemaKeepsDefaultsAndRequired(t *testing.T) {
	b, err := schemas.JSONSchema("Pipeline")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	defs := m["$defs"].(map[string]any)
	prop := func(def, key string) map[string]any {
		d := defs[def].(map[string]any)
		return d["properties"].(map[string]any)[key].(map[string]any)
	}
	wantDefault := map[[2]string]any{
		{"Target", "write_mode"}:      "append",
		{"Catalog", "warehouse_path"}: "warehouse",
		{"Window", "timezone"}:        "UTC",
		{"Retries", "max_attempts"}:   float64(1),
		{"Retries", "delay_s"}:        float64(30),
		{"Retries", "backoff"}:        float64(2),
	}
	for k, want := range wantDefault {
		if got := prop(k[0], k[1])["default"]; got != want {
			t.Errorf("%s.%s default = %v, want %v", k[0], k[1], got, want)
		}
	}
	if _, ok := prop("Target", "partition_by")["default"]; ok {
		t.Error("partition_by has a default; an open list has none")
	}
	required := func(def map[string]any) []any { r, _ := def["required"].([]any); return r }
	if got := required(m); !containsAll(got, "identifier", "metadata") {
		t.Errorf("Pipeline required = %v", got)
	}
	if got := required(defs["Source"].(map[string]any)); !containsAll(got, "format") {
		t.Errorf("Source required = %v", got)
	}
	if got := required(defs["Window"].(map[string]any)); !containsAll(got, "size") {
		t.Errorf("Window required = %v", got)
	}
	if strings.Contains(string(b), "(?i") {
		t.Error("export keeps a (?i:...) group, which ECMAScript regexes reject")
	}
}

func containsAll(xs []any, want ...string) bool {
	for _, w := range want {
		found := false
		for _, x := range xs {
			if x == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestYAMLLoneCarriageReturn: CUE's YAML decoder panics on these (found by FuzzValidate);
// Validate must answer with a problem at the carriage return instead.
func TestYAMLLoneCarriageReturn(t *testing.T) {
	const msg = "invalid YAML: this line ends with a carriage return alone (old Mac line endings), which ldp's YAML reader cannot read here; save the file with LF or CRLF line endings"
	for in, want := range map[string]string{
		"[t\r\r,t]":          "f.yaml:1:3: " + msg,
		"a:\r\r  - x\r":      "f.yaml:1:3: " + msg,
		"# é\na:\r\r  - x\r": "f.yaml:2:3: " + msg,
	} {
		r := schemas.Validate([]byte(in), "f.yaml")
		if len(r.Problems) != 1 || r.Problems[0].String() != want {
			t.Errorf("Validate(%q) = %v, want [%s]", in, r.Problems, want)
		}
	}
}
