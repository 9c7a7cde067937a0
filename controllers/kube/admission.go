package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ldp-dev/ldp/apis/k8s"
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/schemas"
)

// The paths ldp controller's webhook server validates each kind at (config/webhook names them).
const (
	ValidatePipelinePath = "/validate-ldp-dev-v1-pipeline"
	ValidateWorkflowPath = "/validate-ldp-dev-v1-workflow"
)

// Problems are what ldp validate says of an object's spec, each as "spec.FIELD: message"
// (the object's field, not a line of the file ldp controller writes it to), and what makes
// its catalogs unusable on a cluster. The CRD's schema refuses only what OpenAPI can say;
// these are the rest: a time zone, a cron expression, an upsert without join_cols, with the
// same did-you-mean hints. A Workflow's tasks are checked as written; the Pipelines they name
// may come later, and ldp controller marks the Workflow Stalled until they exist.
func Problems(o k8s.Object) []string {
	files, err := SpecFilesOf(o, nil)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	r := schemas.Validate(files.Files[files.Main], files.Main)
	for _, p := range r.Problems {
		if p.Field == "" {
			out = append(out, p.Message)
			continue
		}
		out = append(out, "spec."+p.Field+": "+p.Message)
	}
	if len(out) > 0 {
		return out
	}
	return ClusterCatalogProblems(o)
}

// ClusterCatalogProblems are the catalogs of an object (its metadata's, its tasks') that work
// on a laptop but not on a cluster, where each window runs in a pod of its own with a
// read-only root file system: a local catalog (a SQLite file in the warehouse folder), a sql
// catalog on a SQLite file, and a sql catalog's warehouse that is a folder, not an
// object-store location. Each says the fix.
func ClusterCatalogProblems(o k8s.Object) []string {
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if cat, ok := v[k].(map[string]any); ok && k == "catalog" {
					out = append(out, clusterCatalog(path+"."+k, cat)...)
					continue
				}
				walk(path+"."+k, v[k])
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	var md any
	if json.Unmarshal(o.GetSpec().Metadata.Raw, &md) == nil {
		walk("spec.metadata", md)
	}
	for i, t := range o.GetSpec().Tasks {
		var task any
		if json.Unmarshal(t.Raw, &task) == nil {
			walk(fmt.Sprintf("spec.tasks[%d]", i), task)
		}
	}
	return out
}

const clusterCatalogFix = `use a catalog every pod reaches: {"type": "sql", "uri": "postgres://USER@HOST:PORT/DB", "warehouse_path": "s3://BUCKET/warehouse"} or {"type": "rest", "uri": "https://..."}`

func clusterCatalog(path string, cat map[string]any) []string {
	t, _ := cat["type"].(string)
	typ := v1.ParseCatalogType(t)
	uri, _ := cat["uri"].(string)
	wp, _ := cat["warehouse_path"].(string)
	switch {
	case typ == v1.CatalogLocal:
		return []string{fmt.Sprintf("%s: a local catalog (a SQLite file in the warehouse folder) cannot work on a cluster, where each window runs in a pod of its own: %s", path, clusterCatalogFix)}
	case typ == v1.CatalogSQL && !v1.IsPostgresURI(uri):
		return []string{fmt.Sprintf("%s.uri: a sql catalog on a SQLite file (%s) cannot work on a cluster, where each window runs in a pod of its own: %s", path, uri, clusterCatalogFix)}
	case typ == v1.CatalogSQL && !strings.Contains(wp, "://"):
		if wp == "" {
			wp = v1.DefaultWarehousePath
		}
		return []string{fmt.Sprintf("%s.warehouse_path: the folder %s is in each pod's own file system, which other pods cannot read: name an object-store location, such as s3://BUCKET/warehouse", path, wp)}
	}
	return nil
}

// sameJSON says whether two JSON documents hold the same value (key order aside).
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Validator is the validating admission webhook of one kind: kubectl apply of an object ldp
// validate refuses is refused, with its problems, instead of being accepted and Stalled.
type Validator struct{ Kind string }

// Handle answers one admission review.
func (v Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	newObject := func() k8s.Object {
		if v.Kind == k8s.KindWorkflow {
			return &k8s.Workflow{}
		}
		return &k8s.Pipeline{}
	}
	obj := newObject()
	if err := json.Unmarshal(req.Object.Raw, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the %s: %w", v.Kind, err))
	}
	// A write that leaves the spec as it was (a finalizer, the backfill annotation, a delete) is
	// never refused: an object that a newer ldp finds invalid must still be deletable.
	if !obj.GetDeletionTimestamp().IsZero() {
		return admission.Allowed("")
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old := newObject(); json.Unmarshal(req.OldObject.Raw, old) == nil {
			was, _ := json.Marshal(old.GetSpec())
			now, _ := json.Marshal(obj.GetSpec())
			if sameJSON(was, now) {
				return admission.Allowed("")
			}
		}
	}
	if problems := Problems(obj); len(problems) > 0 {
		return admission.Denied(strings.Join(problems, "; "))
	}
	return admission.Allowed("")
}
