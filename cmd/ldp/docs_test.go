package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/schemas"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated docs (docs/cli.md, the key reference of docs/spec.md)")

// TestCLIDoc: docs/cli.md is what the commands say about themselves.
func TestCLIDoc(t *testing.T) {
	var b bytes.Buffer
	writeCLIDoc(&b, newRootCmd(&streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: os.Getenv}))
	path := "../../docs/cli.md"
	if *updateDocs {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, _ := os.ReadFile(path)
	if string(got) != b.String() {
		t.Fatal("docs/cli.md is not current: run go test ./cmd/ldp -run TestCLIDoc -update-docs")
	}
}

const keysBegin, keysEnd = "<!-- keys:begin (generated) -->", "<!-- keys:end -->"

// TestSpecDocCoversEveryKey: the key reference of docs/spec.md is generated from the CUE
// schemas, so every key is documented with its type and default; this keeps it current.
func TestSpecDocCoversEveryKey(t *testing.T) {
	path := "../../docs/spec.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, keysBegin), strings.Index(s, keysEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/spec.md has no %s ... %s section", keysBegin, keysEnd)
	}
	ref, err := schemas.KeyReference(sampleExamples(t))
	if err != nil {
		t.Fatal(err)
	}
	want := s[:i+len(keysBegin)] + "\n" + ref + s[j:]
	if *updateDocs {
		os.WriteFile(path, []byte(want), 0o644)
		return
	}
	if s != want {
		t.Fatal("docs/spec.md's key reference is not current: run go test ./cmd/ldp -run TestSpecDocCoversEveryKey -update-docs")
	}
	examples := sampleExamples(t)
	for _, k := range schemas.Keys() {
		if !strings.Contains(ref, "`"+k+"`") {
			t.Errorf("key %s is not documented", k)
		}
		if _, ok := examples[k]; !ok && !strings.HasSuffix(k, "]") {
			t.Errorf("no sample gives key %s an example: add it to examples/reference", k)
		}
	}
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

// TestDocExamplesAreValid: every complete spec in a ```json block of the docs validates.
func TestDocExamplesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	checked := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for i, m := range jsonBlock.FindAllStringSubmatch(string(b), -1) {
			var doc map[string]any
			if json.Unmarshal([]byte(m[1]), &doc) != nil || doc["identifier"] == nil {
				continue // a fragment, not a whole spec
			}
			r := schemas.Validate([]byte(m[1]), filepath.Base(f)+".json")
			for _, p := range r.Problems {
				if strings.Contains(p.Message, "not found") {
					continue // task files the example names are not beside the doc
				}
				t.Errorf("%s, example %d: %s", f, i+1, p)
			}
			checked++
		}
	}
	if checked < 3 {
		t.Errorf("only %d spec examples found in the docs", checked)
	}
}

// TestRecipes: the recipes parse and call ldp; the Airflow DAG compiles.
func TestRecipes(t *testing.T) {
	for _, f := range []string{"github-actions.yml", "pre-commit-config.yaml"} {
		b, err := os.ReadFile("../../docs/recipes/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := specs.ToJSON(b, f); err != nil {
			t.Errorf("%s does not parse: %v", f, err)
		}
		if !strings.Contains(string(b), "ldp validate") {
			t.Errorf("%s does not run ldp validate", f)
		}
	}
	dag := "../../docs/recipes/airflow_dag.py"
	b, err := os.ReadFile(dag)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CronDataIntervalTimetable", "{{ data_interval_start", "--run-id", "{{ ti.try_number }}", "BashOperator"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Airflow DAG lacks %s", want)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the DAG's syntax is not checked here")
	}
	pyc := filepath.Join(t.TempDir(), "dag.pyc") // not beside the recipe: the repo stays clean
	if out, err := exec.Command(py, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", dag, pyc).CombinedOutput(); err != nil {
		t.Errorf("the Airflow DAG does not compile: %v\n%s", err, out)
	}
}

// sampleExamples finds, for each key path, a value the samples give it.
func sampleExamples(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	var files []string
	for _, root := range []string{"../../config/samples", "../../examples"} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return err
		})
	}
	var walk func(v any, path string)
	record := func(path string, v any) {
		if _, ok := out[path]; ok {
			return
		}
		b, _ := json.Marshal(v)
		s := string(b)
		if r := []rune(s); len(r) > 60 {
			s = string(r[:57]) + "…"
		}
		out[path] = s
	}
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				e := x[k]
				p := path + "." + k
				record(p, e)
				walk(e, p)
			}
		case []any:
			for _, e := range x {
				m, isCheck := e.(map[string]any)
				if isCheck && m["check"] != nil && (strings.HasSuffix(path, "quality") || strings.HasSuffix(path, "quality.checks")) {
					base := "Pipeline.metadata.quality[].(" + fmt.Sprint(m["check"]) + ")"
					for _, k := range slices.Sorted(maps.Keys(m)) {
						if k != "check" {
							record(base+"."+k, m[k])
						}
					}
				}
				walk(e, path+"[]")
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if json.Unmarshal(b, &doc) != nil {
			continue
		}
		kind := "Pipeline"
		if doc["kind"] == "Workflow" {
			kind = "Workflow"
		}
		walk(doc, kind)
	}
	return out
}
