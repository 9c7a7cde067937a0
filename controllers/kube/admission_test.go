package kube

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// clusterPipeline is a valid Pipeline on a shared catalog, its metadata changed by edit.
func clusterPipeline(edit func(md map[string]any)) *k8s.Pipeline {
	md := map[string]any{
		"schedule": "5 0 * * *",
		"window":   map[string]any{"size": "day", "column": "ordered_at"},
		"source":   map[string]any{"format": "CSV", "path": "s3://bucket/orders.csv"},
		"target": map[string]any{"name": "orders", "format": "ICEBERG", "write_mode": "overwrite",
			"catalog": map[string]any{"type": "sql", "uri": "postgres://ldp@db:5432/ldp", "identifier": "shop", "warehouse_path": "s3://bucket/warehouse"}},
	}
	if edit != nil {
		edit(md)
	}
	b, _ := json.Marshal(md)
	return &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}, Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: b}}}
}

func target(md map[string]any) map[string]any { return md["target"].(map[string]any) }

// TestProblemsAreLdpValidates: the webhook refuses what ldp validate refuses, with its
// messages, and a catalog no pod can share, with the fix.
func TestProblemsAreLdpValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(md map[string]any)
		want string
	}{
		{"valid", nil, ""},
		{"time zone", func(md map[string]any) { md["window"].(map[string]any)["timezone"] = "Europe/Londn" },
			`spec.metadata.window.timezone: unknown time zone "Europe/Londn" (did you mean "Europe/London"?): use an IANA name such as "Europe/Paris", "America/New_York" or "UTC"`},
		{"cron", func(md map[string]any) { md["schedule"] = "5 25 * * *" }, `spec.metadata.schedule: invalid cron expression "5 25 * * *": end of range (25) above maximum (23): 25`},
		{"upsert", func(md map[string]any) { target(md)["write_mode"] = "upsert" },
			"spec.metadata.target.write_mode: write_mode upsert needs target.join_cols: the columns that identify a row"},
		{"local catalog", func(md map[string]any) {
			target(md)["catalog"] = map[string]any{"identifier": "shop", "warehouse_path": "warehouse"}
		}, "spec.metadata.target.catalog: a local catalog (a SQLite file in the warehouse folder) cannot work on a cluster, where each window runs in a pod of its own: " + clusterCatalogFix},
		{"sqlite catalog", func(md map[string]any) {
			target(md)["catalog"] = map[string]any{"type": "sql", "uri": "catalog.db", "identifier": "shop", "warehouse_path": "s3://bucket/warehouse"}
		}, "spec.metadata.target.catalog.uri: a sql catalog on a SQLite file (catalog.db) cannot work on a cluster, where each window runs in a pod of its own: " + clusterCatalogFix},
		{"warehouse folder", func(md map[string]any) { target(md)["catalog"].(map[string]any)["warehouse_path"] = "warehouse" },
			"spec.metadata.target.catalog.warehouse_path: the folder warehouse is in each pod's own file system, which other pods cannot read: name an object-store location, such as s3://BUCKET/warehouse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(Problems(clusterPipeline(tc.edit)), "; ")
			if got != tc.want {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}

// TestValidatorLetsAnUnchangedSpecThrough: a create of what ldp validate refuses is denied with
// its message; an update that keeps such a spec (a finalizer, the backfill annotation) is
// allowed, so an object a newer ldp finds invalid can still be deleted.
func TestValidatorLetsAnUnchangedSpecThrough(t *testing.T) {
	bad := clusterPipeline(func(md map[string]any) { md["schedule"] = "5 25 * * *" })
	raw, _ := json.Marshal(bad)
	v := Validator{Kind: k8s.KindPipeline}
	create := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}}
	res := v.Handle(context.Background(), create)
	if want := `spec.metadata.schedule: invalid cron expression "5 25 * * *": end of range (25) above maximum (23): 25`; res.Allowed || res.Result.Message != want {
		t.Errorf("create: allowed %t, %q; want denied with %q", res.Allowed, res.Result.Message, want)
	}
	bad.Finalizers = []string{Finalizer}
	withFinalizer, _ := json.Marshal(bad)
	update := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Update,
		Object: runtime.RawExtension{Raw: withFinalizer}, OldObject: runtime.RawExtension{Raw: raw}}}
	if res := v.Handle(context.Background(), update); !res.Allowed {
		t.Errorf("an update that keeps the spec is denied: %q", res.Result.Message)
	}
	good, _ := json.Marshal(clusterPipeline(nil))
	update.OldObject.Raw = good
	if res := v.Handle(context.Background(), update); res.Allowed {
		t.Error("an update to a bad spec is allowed")
	}
}
