// Package kube runs ldp on Kubernetes: ldp controller reconciles Pipeline and Workflow objects
// (group ldp.dev) into one batch/v1 Job per window, planning through controllers.Reconciler
// exactly as ldp apply does, and ldp export k8s turns spec files into those objects. The
// decisions it adds (Job names, attempts, the concurrency limit) are reconcile's.
package kube

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing/fstest"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ldp-dev/ldp/apis/k8s"
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/specs"
)

// A spec file and an object hold the same body; what differs is how a workflow's task names a
// dataset config: a file path beside the workflow, or a Pipeline object in its namespace. Each
// task kind says where its task names one (controllers.RenameTaskConfigs).

// SpecFiles are the ldp/v1 spec files an object stands for: file name -> bytes, with Main the
// one to run.
type SpecFiles struct {
	Main  string
	Files map[string][]byte
}

// FS is the files as a file system, to load the object from memory.
func (f *SpecFiles) FS() fs.FS {
	m := fstest.MapFS{}
	for name, b := range f.Files {
		m[name] = &fstest.MapFile{Data: b, Mode: 0o444}
	}
	return m
}

// fileOf is the file an object's spec is written to.
func fileOf(objName string) string { return objName + ".json" }

// identifierOf is the ldp identifier of an object: spec.identifier, else its name.
func identifierOf(o k8s.Object) string {
	if id := o.GetSpec().Identifier; id != "" {
		return id
	}
	return o.GetName()
}

// specFile writes one object as an ldp/v1 spec file, its task references rewritten by ref.
func specFile(o k8s.Object, ref func(string) string) ([]byte, error) {
	s := o.GetSpec()
	doc := map[string]any{"apiVersion": v1.APIVersion, "kind": o.Kind(), "identifier": identifierOf(o)}
	if s.Description != "" {
		doc["description"] = s.Description
	}
	var md any
	if len(s.Metadata.Raw) > 0 {
		if err := json.Unmarshal(s.Metadata.Raw, &md); err != nil {
			return nil, fmt.Errorf("spec.metadata: %w", err)
		}
	}
	doc["metadata"] = md
	if o.Kind() == k8s.KindWorkflow {
		var tasks []any
		for i, t := range s.Tasks {
			var task map[string]any
			if err := json.Unmarshal(t.Raw, &task); err != nil {
				return nil, fmt.Errorf("spec.tasks[%d]: %w", i, err)
			}
			rewriteRefs(task, ref)
			tasks = append(tasks, task)
		}
		doc["tasks"] = tasks
	}
	return json.MarshalIndent(doc, "", "  ")
}

// rewriteRefs rewrites, in place, each place a task names a dataset config.
func rewriteRefs(task map[string]any, ref func(string) string) {
	controllers.RenameTaskConfigs(task, ref)
}

// Refs are the Pipeline objects a Workflow's tasks name, sorted.
func Refs(wf *k8s.Workflow) []string {
	seen := map[string]bool{}
	for _, t := range wf.Spec.Tasks {
		var task map[string]any
		if json.Unmarshal(t.Raw, &task) != nil {
			continue
		}
		rewriteRefs(task, func(s string) string { seen[s] = true; return s })
	}
	return slices.Sorted(maps.Keys(seen))
}

// SpecFilesOf writes an object (and, for a Workflow, the Pipelines its tasks name, found by
// pipelines) as spec files.
func SpecFilesOf(o k8s.Object, pipelines map[string]*k8s.Pipeline) (*SpecFiles, error) {
	out := &SpecFiles{Main: fileOf(o.GetName()), Files: map[string][]byte{}}
	if o.Kind() == k8s.KindWorkflow {
		out.Main = "workflow-" + fileOf(o.GetName())
		for name, p := range pipelines {
			b, err := specFile(p, nil)
			if err != nil {
				return nil, fmt.Errorf("Pipeline %s: %w", name, err)
			}
			out.Files[fileOf(name)] = b
		}
	}
	b, err := specFile(o, fileOf)
	if err != nil {
		return nil, err
	}
	out.Files[out.Main] = b
	return out, nil
}

// Export turns the ldp/v1 specs under paths (spec discovery's rules) into objects for
// namespace: a Pipeline per dataset config and a Workflow per workflow file, whose tasks name
// the Pipeline objects of the configs they named. Names are the identifiers made
// Kubernetes-valid (daily_orders -> daily-orders), the identifier kept in spec.identifier
// when they differ, since the idempotency keys are made of it. A dataset config several
// workflows name is exported once.
func Export(paths []string, namespace string) ([]k8s.Object, error) {
	found, _, err := controllers.Discover(paths, false)
	if err != nil {
		return nil, err
	}
	var out []k8s.Object
	done := map[string]string{} // absolute config path -> object name
	type kept struct{ path, spec string }
	names := map[string]kept{}
	// keep adds an object unless one of its name is there: the same spec from another file (a
	// spec kept in JSON and in YAML) is left out, another spec is refused.
	keep := func(o k8s.Object, path string) error {
		b, _ := json.Marshal(o.GetSpec())
		key := o.Kind() + "/" + o.GetName()
		if k, ok := names[key]; ok {
			if k.spec == string(b) {
				return nil
			}
			return fmt.Errorf("%s and %s would both be the %s %s: give one another identifier", k.path, path, o.Kind(), o.GetName())
		}
		names[key] = kept{path, string(b)}
		out = append(out, o)
		return nil
	}
	var addPipeline func(path string) (string, error)
	addPipeline = func(path string) (string, error) {
		abs, _ := filepath.Abs(path)
		if name, ok := done[abs]; ok {
			return name, nil
		}
		obj, err := specs.Load(path)
		if err != nil {
			return "", err
		}
		p, ok := obj.(*v1.Pipeline)
		if !ok {
			return "", fmt.Errorf("%s: a task names it as a dataset config, but it is a %T", path, obj)
		}
		name := objectName(p.Identifier)
		done[abs] = name
		md, _, err := rawBody(path)
		if err != nil {
			return "", err
		}
		cr := &k8s.Pipeline{TypeMeta: typeMeta(k8s.KindPipeline), ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Spec: k8s.Spec{Description: p.Description, Metadata: apiextv1.JSON{Raw: md}}}
		if name != p.Identifier {
			cr.Spec.Identifier = p.Identifier
		}
		return name, keep(cr, path)
	}
	for _, c := range found {
		if len(c.Problems) > 0 {
			return nil, &specs.InvalidError{Path: c.Path, Problems: c.Problems}
		}
		obj, err := specs.Load(c.Path)
		if err != nil {
			return nil, err
		}
		switch o := obj.(type) {
		case *v1.Pipeline:
			if _, err := addPipeline(c.Path); err != nil {
				return nil, err
			}
		case *v1.Workflow:
			name := objectName(o.Identifier)
			md, tasks, err := rawBody(c.Path)
			if err != nil {
				return nil, err
			}
			cr := &k8s.Workflow{TypeMeta: typeMeta(k8s.KindWorkflow), ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
				Spec: k8s.Spec{Description: o.Description, Metadata: apiextv1.JSON{Raw: md}}}
			if name != o.Identifier {
				cr.Spec.Identifier = o.Identifier
			}
			dir := filepath.Dir(c.Path)
			var refErr error
			for i, task := range tasks {
				t := o.Tasks[i]
				rewriteRefs(task, func(s string) string {
					n, err := addPipeline(filepath.Join(dir, s))
					if err != nil && refErr == nil {
						refErr = fmt.Errorf("%s: task %s: %w", c.Path, t.ID, err)
					}
					return n
				})
				b, _ := json.Marshal(task)
				cr.Spec.Tasks = append(cr.Spec.Tasks, apiextv1.JSON{Raw: b})
			}
			if refErr != nil {
				return nil, refErr
			}
			if err := keep(cr, c.Path); err != nil {
				return nil, err
			}
		}
	}
	slices.SortStableFunc(out, func(a, b k8s.Object) int {
		return strings.Compare(a.Kind()+"/"+a.GetName(), b.Kind()+"/"+b.GetName())
	})
	return out, nil
}

// rawBody is a spec file's metadata and tasks as the user wrote them (no defaults filled in).
func rawBody(path string) ([]byte, []map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	js, err := specs.ToJSON(b, path)
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Metadata json.RawMessage  `json:"metadata"`
		Tasks    []map[string]any `json:"tasks"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Metadata, doc.Tasks, nil
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: k8s.GroupVersion.String(), Kind: kind}
}

var invalidName = regexp.MustCompile(`[^a-z0-9-]+`)

// objectName makes an identifier a Kubernetes name: lower case, dashes for the rest.
func objectName(id string) string {
	n := strings.Trim(invalidName.ReplaceAllString(strings.ToLower(id), "-"), "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}
