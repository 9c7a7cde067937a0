package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kubePackage says whether an import path is one of the Kubernetes packages the slim build
// leaves out.
func kubePackage(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/") ||
		path == "github.com/ldp-dev/ldp/controllers/kube" || strings.HasPrefix(path, "github.com/ldp-dev/ldp/controllers/kube/")
}

// TestSlimBuildLinksNoKubernetes: bin/ldp (make build: -tags nokube) links no Kubernetes
// package, which is what makes its start-up short; the full build (go install ./cmd/ldp,
// bin/ldp-kube) links them. A new import of controllers/kube outside kube_full.go fails here.
func TestSlimBuildLinksNoKubernetes(t *testing.T) {
	t.Parallel()
	deps := func(tags ...string) []string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		var kube []string
		for _, p := range strings.Fields(string(out)) {
			if kubePackage(p) {
				kube = append(kube, p)
			}
		}
		return kube
	}
	if kube := deps("-tags", "nokube"); len(kube) > 0 {
		t.Errorf("the slim build (-tags nokube) links %d Kubernetes packages, such as %s: only kube_full.go may import controllers/kube",
			len(kube), strings.Join(kube[:min(len(kube), 5)], ", "))
	}
	if kube := deps(); !strings.Contains(strings.Join(kube, " "), "github.com/ldp-dev/ldp/controllers/kube") {
		t.Errorf("the full build does not link controllers/kube: ldp controller would have nothing to run")
	}
}

// TestSlimExportK8sRunsLDPKube builds the slim binary and runs ldp export k8s with it: without
// ldp-kube beside it the verb says what to build; with one (here a link to this test binary,
// which TestMain runs as ldp-kube) it prints what the full binary prints, byte for byte.
func TestSlimExportK8sRunsLDPKube(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	slim := filepath.Join(dir, "ldp")
	if out, err := exec.Command("go", "build", "-tags", "nokube", "-o", slim, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags nokube: %v\n%s", err, out)
	}
	samples, err := filepath.Abs("../../config/samples")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"export", "k8s", samples, "-n", "shop"}
	runSlim := func() (stdout, stderr string, code int) {
		cmd := exec.Command(slim, args...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if x, ok := err.(*exec.ExitError); ok {
			return o.String(), e.String(), x.ExitCode()
		} else if err != nil {
			t.Fatalf("running the slim ldp: %v", err)
		}
		return o.String(), e.String(), 0
	}

	out, errs, code := runSlim()
	want := "ldp: this ldp is the slim build (-tags nokube), whose Kubernetes verbs run ldp-kube, and there is none beside it (" +
		filepath.Join(dir, "ldp-kube") + "): make build (or make install) writes both; or go install ./cmd/ldp for one full binary\n"
	if code != 1 || out != "" || errs != want {
		t.Errorf("without ldp-kube: exit %d, stdout %q, stderr %q; want exit 1, no stdout, stderr %q", code, out, errs, want)
	}

	if err := os.Symlink(os.Args[0], filepath.Join(dir, "ldp-kube")); err != nil {
		t.Fatal(err)
	}
	var full, fullErr bytes.Buffer
	if c := run(context.Background(), args, &streams{Out: &full, Err: &fullErr, Getenv: os.Getenv}); c != 0 {
		t.Fatalf("ldp export k8s in process: exit %d\n%s", c, fullErr.String())
	}
	out, errs, code = runSlim()
	if code != 0 || out != full.String() || errs != fullErr.String() {
		t.Errorf("the slim ldp export k8s: exit %d, stderr %q, stdout\n%s\nwant exit 0, stderr %q, stdout\n%s", code, errs, out, fullErr.String(), full.String())
	}
	if !strings.Contains(out, "kind: Pipeline") {
		t.Errorf("ldp export k8s printed no Pipeline:\n%s", out)
	}

	// An error of ldp-kube is its exit code and its message, printed once.
	args = []string{"export", "k8s", filepath.Join(dir, "no-such-folder")}
	out, errs, code = runSlim()
	if code != 1 || out != "" || strings.Count(errs, "ldp: ") != 1 || !strings.Contains(errs, "no such file or directory") {
		t.Errorf("the slim ldp export k8s of a missing folder: exit %d, stdout %q, stderr %q; want exit 1 and one error", code, out, errs)
	}
}
