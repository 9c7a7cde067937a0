package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("update-scripts", false, "rewrite the cmp files of testdata/script from the actual output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"ldp": func() { os.Exit(Main()) },
		// the full binary the slim build's Kubernetes verbs run (slim_test.go)
		"ldp-kube":    func() { os.Exit(Main()) },
		"dbt-standin": func() { os.Exit(dbtStandIn()) },
		"sqlite-hold": func() { os.Exit(sqliteHold()) },
	})
}

// TestScripts runs the txtar scripts of testdata/script against the real ldp command.
// $REPO is the module root, so scripts can cd into it and use config/samples.
//
// Every test of this package that only drives ldp processes runs in parallel with the others
// (t.Parallel): most of their time is spent waiting on a child (a stopped writer, a lease, a
// lock), which another test can use. Tests that change this process's environment or folder
// (t.Setenv, t.Chdir, runInProcess) cannot, and run first, one at a time. Run one after the
// other, the package took longer than go test's default 10-minute timeout on a loaded
// 2-core machine.
func TestScripts(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			env.Setenv("REPO", repo)
			env.Setenv("GITHUB_ACTIONS", "")
			return nil
		},
	})
}

// TestExitCodes checks the exit code and that an error prints once, on stderr only.
func TestExitCodes(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		stderr   string
		noStdout bool
	}{
		{args: []string{"--version"}, code: 0},
		{args: []string{"validate", "../../config/samples"}, code: 0},
		{args: []string{"validate", "../../schemas/testdata/invalid"}, code: 1},
		{args: []string{"validate"}, code: 1, stderr: "name at least one spec file or folder", noStdout: true},
		{args: []string{"validate", "no/such/folder"}, code: 1, stderr: "no such file or directory", noStdout: true},
		{args: []string{"validate", "-o", "yaml", "x"}, code: 1, stderr: "--output must be one of text, json", noStdout: true},
		{args: []string{"frobnicate"}, code: 1, stderr: `unknown command "frobnicate"`, noStdout: true},
		{args: []string{"validate", "--nope"}, code: 1, stderr: "unknown flag: --nope", noStdout: true},
		{args: []string{"schema", "table"}, code: 1, stderr: `unknown kind "table"`, noStdout: true},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), c.args, &streams{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, c.code, errb.String())
			}
			if c.stderr != "" {
				if !strings.Contains(errb.String(), c.stderr) {
					t.Errorf("stderr %q does not contain %q", errb.String(), c.stderr)
				}
				if n := strings.Count(errb.String(), "ldp: "); n != 1 {
					t.Errorf("the error printed %d times, want once: %q", n, errb.String())
				}
			}
			if c.noStdout && out.Len() > 0 {
				t.Errorf("an error wrote to stdout: %q", out.String())
			}
		})
	}
}
