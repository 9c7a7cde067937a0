package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayering reads the project's imports from go list and holds the shape: dependencies
// point down, cmd/ldp -> controllers -> reconcile -> apis/v1. cmd/ldp is presentation: it
// reaches the data plane only through controllers; apis/v1 is a leaf; reconcile decides and
// does no I/O.
func TestLayering(t *testing.T) {
	const mod = "github.com/ldp-dev/ldp/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	project := func(pkg string) []string {
		var own []string
		for _, i := range imports[pkg] {
			if strings.HasPrefix(i, mod) {
				own = append(own, strings.TrimPrefix(i, mod))
			}
		}
		return own
	}
	rules := []struct {
		pkg     string
		allowed []string // the project's packages it may import
		banned  []string // standard packages it may not import
	}{
		{"cmd/ldp", []string{"apis/v1", "controllers", "controllers/kube", "controllers/tables", "controllers/web", "schemas", "internal/initgc", "internal/ldperr", "internal/redact", "internal/shell", "internal/synth"}, nil},
		// The Kubernetes resources are a leaf too; their controller plans through controllers.
		{"apis/k8s", nil, []string{"os", "io/fs", "os/exec", "net", "net/http", "database/sql", "syscall"}},
		{"controllers/kube", []string{"apis/k8s", "apis/v1", "controllers", "reconcile", "schemas", "internal/specs"}, nil},
		// A task kind sees its TaskContext, not the runner: controllers/tasks is below
		// controllers, which registers nothing of its own and reads the kinds from it.
		{"controllers/tasks", []string{"apis/v1", "reconcile", "internal/dbt", "internal/lake", "internal/ldperr", "internal/ledger", "internal/maintain", "internal/pipeline", "internal/specs"}, nil},
		// The table verbs open their tables themselves and read a workflow through controllers.
		{"controllers/tables", []string{"apis/v1", "controllers", "controllers/tasks", "internal/engine", "internal/formats", "internal/lake", "internal/ldperr", "internal/maintain", "internal/specs"}, nil},
		// The status page reads through controllers, as ldp status does.
		{"controllers/web", []string{"controllers"}, nil},
		{"apis/v1", nil, []string{"os", "io/fs", "os/exec", "net", "net/http", "database/sql", "syscall"}},
		{"reconcile", []string{"apis/v1"}, []string{"os", "io", "io/fs", "os/exec", "net", "net/http", "database/sql", "syscall", "path/filepath", "log", "log/slog"}},
	}
	for _, r := range rules {
		if _, ok := imports[r.pkg]; !ok {
			t.Fatalf("go list does not list %s", r.pkg)
		}
		for _, i := range project(r.pkg) {
			if !slices.Contains(r.allowed, i) {
				t.Errorf("%s imports %s; it may import only %v of the project", r.pkg, i, r.allowed)
			}
		}
		for _, i := range imports[r.pkg] {
			if slices.Contains(r.banned, i) {
				t.Errorf("%s imports %s, which does I/O: it must not", r.pkg, i)
			}
		}
	}
	for pkg := range imports {
		if pkg == "cmd/ldp" {
			continue
		}
		if slices.Contains(project(pkg), "cmd/ldp") {
			t.Errorf("%s imports cmd/ldp: nothing may", pkg)
		}
	}
	for _, pkg := range []string{"reconcile", "apis/v1"} {
		if slices.Contains(project("controllers"), "cmd/ldp") || slices.Contains(project(pkg), "controllers") {
			t.Errorf("%s imports controllers: dependencies point down", pkg)
		}
	}
}

// TestVerbsAreOptions: every command is an options struct run by runVerb (Validate, then Run
// with the streams passed in); no command keeps its logic in a cobra closure.
func TestVerbsAreOptions(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "RunE: func(") {
			t.Errorf("%s: a command's RunE is a closure; make it an options struct and runVerb(o, s)", f)
		}
	}
}
