package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mod is the project's module path, with the slash that begins a package's path within it.
const mod = "github.com/ldp-dev/ldp/"

// goList is field (Imports or Deps) of every package of the project, from go list, by the
// package's path within the module.
func goList(t *testing.T, field string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .`+field+` " "}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	return pkgs
}

// TestLayering reads the project's imports from go list and holds the shape: dependencies
// point down, cmd/ldp -> controllers -> reconcile -> apis/v1. cmd/ldp is presentation: it
// reaches the data plane only through controllers; apis/v1 is a leaf; reconcile decides and
// does no I/O.
func TestLayering(t *testing.T) {
	imports := goList(t, "Imports")
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
		{"cmd/ldp", []string{"apis/v1", "controllers", "controllers/kube", "controllers/report", "controllers/tables", "controllers/web", "schemas", "internal/initgc", "internal/ldperr", "internal/redact", "internal/shell", "internal/synth"}, nil},
		// The Kubernetes resources are a leaf too; their controller plans through controllers.
		{"apis/k8s", nil, []string{"os", "io/fs", "os/exec", "net", "net/http", "database/sql", "syscall"}},
		{"controllers/kube", []string{"apis/k8s", "apis/v1", "controllers", "reconcile", "schemas", "internal/specs"}, nil},
		// A task kind sees its TaskContext, not the runner: controllers/tasks is below
		// controllers, which registers nothing of its own and reads the kinds from it.
		{"controllers/tasks", []string{"apis/v1", "reconcile", "internal/dbt", "internal/lake", "internal/ldperr", "internal/ledger", "internal/maintain", "internal/pipeline", "internal/specs"}, nil},
		// The table verbs open their tables themselves and read a workflow through controllers.
		{"controllers/tables", []string{"apis/v1", "controllers", "controllers/tasks", "internal/engine", "internal/formats", "internal/lake", "internal/ldperr", "internal/maintain", "internal/specs"}, nil},
		// The status page reads through controllers and its report, as ldp status does.
		{"controllers/report", []string{"apis/v1", "controllers", "reconcile", "internal/cronx", "internal/ledger", "internal/shell", "internal/window"}, nil},
		{"controllers/web", []string{"controllers", "controllers/report"}, nil},
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

// TestTransitiveLayering holds, for every package of the project, what it may reach through
// any chain of imports (go list's Deps), as CockroachDB's dependency tests do: a direct-import
// rule alone lets a package reach what it must not through one that may. A leaf reaches
// nothing of the project; each internal package reaches only the leaves and internal packages
// below it; reconcile, apis/v1 and apis/k8s stay pure; controllers reaches none of the
// packages beside or above it; and nothing but a test reaches a test helper or cmd/ldp.
// A new package matches no rule and fails the test until it is given one.
func TestTransitiveLayering(t *testing.T) {
	reach := map[string][]string{}
	for pkg, deps := range goList(t, "Deps") {
		if strings.HasPrefix(pkg, "third_party/") {
			continue // vendored forks: not the project's layers
		}
		reach[pkg] = []string{}
		for _, d := range deps {
			if strings.HasPrefix(d, mod) && !strings.HasPrefix(d, mod+"third_party/") {
				reach[pkg] = append(reach[pkg], strings.TrimPrefix(d, mod))
			}
		}
	}
	leaf := []string{}
	testHelpers := []string{"internal/testpg", "internal/testfiles", "internal/sources/bigquery/bqtest", "internal/sources/github/githubtest"}
	lake := []string{"apis/v1", "internal/engine", "internal/flock", "internal/ldperr", "internal/redact", "internal/window"}
	sources := []string{"apis/v1", "internal/ctxtime", "internal/engine", "internal/ldperr", "internal/sources/bigquery", "internal/sources/github"}
	// above are the packages beside or above controllers: the loop reaches none of them.
	above := []string{"cmd/ldp", "controllers/kube", "controllers/report", "controllers/tables", "controllers/web", "apis/k8s", "hack/bench", "hack/genrides", "hack/testsummary"}
	type rule struct {
		may    []string // when not nil, all it may reach
		mayNot []string
	}
	rules := map[string]rule{
		"apis/v1":                            {may: leaf},
		"apis/k8s":                           {may: leaf},
		"reconcile":                          {may: []string{"apis/v1"}},
		"schemas":                            {may: []string{"apis/v1", "internal/cronx", "internal/redact", "internal/suggest"}},
		"internal/cronx":                     {may: leaf},
		"internal/ctxtime":                   {may: leaf},
		"internal/engine":                    {may: leaf},
		"internal/flock":                     {may: leaf},
		"internal/initgc":                    {may: leaf},
		"internal/ldperr":                    {may: leaf},
		"internal/redact":                    {may: leaf},
		"internal/shell":                     {may: leaf},
		"internal/suggest":                   {may: leaf},
		"internal/synth":                     {may: leaf},
		"internal/testpg":                    {may: leaf},
		"internal/testfiles":                 {may: leaf},
		"internal/sources/bigquery":          {may: []string{"internal/ctxtime"}},
		"internal/sources/bigquery/bqtest":   {may: leaf},
		"internal/sources/github":            {may: []string{"internal/ctxtime"}},
		"internal/sources/github/githubtest": {may: leaf},
		"internal/window":                    {may: []string{"apis/v1", "internal/engine"}},
		"internal/ledger":                    {may: []string{"apis/v1", "internal/flock", "internal/redact"}},
		"internal/quality":                   {may: []string{"apis/v1", "internal/engine", "internal/ldperr", "internal/suggest"}},
		"internal/formats":                   {may: []string{"apis/v1", "internal/engine", "internal/ldperr", "internal/window"}},
		"internal/lake":                      {may: lake},
		"internal/dbt":                       {may: append(slices.Clone(lake), "internal/lake")},
		"internal/maintain":                  {may: append(slices.Clone(lake), "internal/lake")},
		"internal/sources":                   {may: sources},
		"internal/specs":                     {may: []string{"apis/v1", "internal/cronx", "internal/ctxtime", "internal/engine", "internal/ldperr", "internal/redact", "internal/sources", "internal/sources/bigquery", "internal/sources/github", "internal/suggest", "schemas"}},
		// The data path of one load: below reconcile and the specs, which it never sees.
		"internal/pipeline": {may: append(slices.Clone(lake), "internal/cronx", "internal/ctxtime", "internal/formats", "internal/lake", "internal/ledger", "internal/quality", "internal/shell", "internal/sources",
			"internal/sources/bigquery", "internal/sources/github", "internal/suggest")},
		"controllers/tasks":  {mayNot: append(slices.Clone(above), "controllers")},
		"controllers":        {mayNot: above},
		"controllers/tables": {mayNot: []string{"cmd/ldp", "controllers/kube", "controllers/report", "controllers/web", "apis/k8s", "hack/bench"}},
		"controllers/report": {mayNot: []string{"cmd/ldp", "controllers/kube", "controllers/tables", "controllers/web", "apis/k8s", "hack/bench"}},
		"controllers/web":    {mayNot: []string{"cmd/ldp", "controllers/kube", "controllers/tables", "apis/k8s", "hack/bench"}},
		"controllers/kube":   {mayNot: []string{"cmd/ldp", "controllers/report", "controllers/tables", "controllers/web", "hack/bench"}},
		"cmd/ldp":            {mayNot: []string{"hack/bench", "hack/genrides", "hack/testsummary"}},
		"hack/bench":         {mayNot: []string{"cmd/ldp"}},
		"hack/genrides":      {may: []string{"internal/synth"}},
		"hack/testsummary":   {may: leaf},
	}
	for pkg, deps := range reach {
		r, ok := rules[pkg]
		if !ok {
			t.Errorf("%s has no dependency rule: add one to TestTransitiveLayering", pkg)
			continue
		}
		for _, d := range deps {
			switch {
			case r.may != nil && !slices.Contains(r.may, d):
				t.Errorf("%s reaches %s; it may reach only %v of the project", pkg, d, r.may)
			case slices.Contains(r.mayNot, d):
				t.Errorf("%s reaches %s, which is beside or above it: dependencies point down", pkg, d)
			case slices.Contains(testHelpers, d) && !slices.Contains(testHelpers, pkg):
				t.Errorf("%s reaches %s, a test helper: only tests may", pkg, d)
			case d == "cmd/ldp":
				t.Errorf("%s reaches cmd/ldp: nothing may", pkg)
			}
		}
	}
	for pkg := range rules {
		if _, ok := reach[pkg]; !ok {
			t.Errorf("the rule for %s names a package go list does not list", pkg)
		}
	}
}

// TestNoAliasFacade: the loop's packages re-export no type or constant of internal/ under
// their own name (issue 30). What cmd/ldp prints has one definition in a package it may import:
// a record ldp writes or prints (a pipeline run's result and plan, a ledger event, a run
// summary) and a spec default in apis/v1, ldp validate's report in schemas; the rest is
// controllers' own. controllers/tables is not held to it yet: it still names lake's snapshot,
// environment and catalog types (Snapshot, EnvInfo, PromoteResult...) by alias.
func TestNoAliasFacade(t *testing.T) {
	for _, dir := range []string{"controllers", "controllers/kube", "controllers/report", "controllers/tasks", "controllers/web"} {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			internal := map[string]bool{} // the names this file gives the internal packages it imports
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if !strings.HasPrefix(path, mod+"internal/") {
					continue
				}
				local := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					local = imp.Name.Name
				}
				internal[local] = true
			}
			ofInternal := func(e ast.Expr) bool {
				sel, ok := e.(*ast.SelectorExpr)
				if !ok {
					return false
				}
				x, ok := sel.X.(*ast.Ident)
				return ok && internal[x.Name]
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, spec := range g.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						if sp.Assign.IsValid() && ofInternal(sp.Type) {
							t.Errorf("%s: type %s is an alias of an internal type: give it one definition that cmd/ldp may import (apis/v1, schemas) or one of this package's own", fset.Position(sp.Pos()), sp.Name.Name)
						}
					case *ast.ValueSpec:
						if g.Tok == token.CONST && len(sp.Values) == 1 && ofInternal(sp.Values[0]) && sp.Names[0].IsExported() {
							t.Errorf("%s: const %s passes an internal constant through: define it once where cmd/ldp may read it", fset.Position(sp.Pos()), sp.Names[0].Name)
						}
					}
				}
			}
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
