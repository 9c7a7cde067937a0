package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestPlainMetricsOnlyOnLoopback: metrics without TLS or a token are served on a loopback
// address only; anywhere else RunManager refuses to start, before it reaches the API server.
func TestPlainMetricsOnlyOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr, want string
	}{
		{":8080", `the metrics address ":8080" serves plain HTTP, with no token asked, beyond this machine: serve them securely (--metrics-secure, the default), or on 127.0.0.1 (--metrics-bind-address 127.0.0.1:8080)`},
		{"0.0.0.0:9090", `the metrics address "0.0.0.0:9090" serves plain HTTP, with no token asked, beyond this machine: serve them securely (--metrics-secure, the default), or on 127.0.0.1 (--metrics-bind-address 127.0.0.1:9090)`},
		{"8080", `the metrics address "8080": address 8080: missing port in address (use HOST:PORT, such as 127.0.0.1:8080)`},
	} {
		err := RunManager(context.Background(), ManagerOptions{MetricsAddr: tc.addr})
		if err == nil || err.Error() != tc.want {
			t.Errorf("plain metrics on %s: %v\nwant: %s", tc.addr, err, tc.want)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "0", ""} {
		if err := checkMetricsAddr(addr, false); err != nil {
			t.Errorf("plain metrics on %s: %v", addr, err)
		}
	}
	if err := checkMetricsAddr(":8443", true); err != nil {
		t.Errorf("secure metrics on :8443: %v", err)
	}
}

// built is what kustomize builds of config/DIR, by kind/namespace/name.
func built(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../../config/"+dir)
	if err != nil {
		t.Fatalf("kustomize build config/%s: %v", dir, err)
	}
	out := map[string]map[string]any{}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out[r.GetKind()+"/"+r.GetNamespace()+"/"+r.GetName()] = m
	}
	return out
}

// into converts a built resource into its typed kind.
func into(t *testing.T, m map[string]any, v any) {
	t.Helper()
	if m == nil {
		t.Fatalf("not built (want a %T)", v)
	}
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestKustomizations: every kustomization of config/ builds, as kubectl apply -k builds it,
// into the production shape: two replicas on two nodes where there are two, kept one through
// a drain, metrics behind TLS and a token; in config/namespaced, the controller's rules as a
// Role of each namespace it is given, and no ClusterRole.
func TestKustomizations(t *testing.T) {
	def := built(t, "default")
	var d appsv1.Deployment
	into(t, def["Deployment/ldp-system/ldp-controller"], &d)
	ps := d.Spec.Template.Spec
	if *d.Spec.Replicas != 2 || ps.Affinity == nil || ps.Affinity.PodAntiAffinity == nil ||
		len(ps.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		ps.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("the Deployment: %d replicas, affinity %+v, want 2 spread over nodes", *d.Spec.Replicas, ps.Affinity)
	}
	if args := strings.Join(ps.Containers[0].Args, " "); !strings.Contains(args, "--metrics-bind-address :8443") || strings.Contains(args, "--metrics-secure=false") {
		t.Errorf("the Deployment serves metrics with %q, want them secure on :8443", args)
	}
	var pdb policyv1.PodDisruptionBudget
	into(t, def["PodDisruptionBudget/ldp-system/ldp-controller"], &pdb)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != d.Spec.Selector.MatchLabels["app.kubernetes.io/name"] {
		t.Errorf("the PodDisruptionBudget %+v does not keep one of the Deployment's pods", pdb.Spec)
	}
	var svc corev1.Service
	into(t, def["Service/ldp-system/ldp-controller-metrics"], &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("the metrics Service's ports: %+v", svc.Spec.Ports)
	}
	var auth, reader, cluster rbacv1.ClusterRole
	into(t, def["ClusterRole//ldp-metrics-auth"], &auth)
	into(t, def["ClusterRole//ldp-metrics-reader"], &reader)
	into(t, def["ClusterRole//ldp-controller"], &cluster)
	if fmt.Sprint(auth.Rules) != fmt.Sprint([]rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}}}) {
		t.Errorf("ldp-metrics-auth: %+v", auth.Rules)
	}
	if fmt.Sprint(reader.Rules) != fmt.Sprint([]rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}) {
		t.Errorf("ldp-metrics-reader: %+v", reader.Rules)
	}

	ns := built(t, "namespaced")
	for key := range ns {
		if key == "ClusterRole//ldp-controller" || key == "ClusterRoleBinding//ldp-controller" {
			t.Errorf("config/namespaced keeps %s", key)
		}
	}
	into(t, ns["Deployment/ldp-system/ldp-controller"], &d)
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--namespaces=team-a,team-b") {
		t.Errorf("config/namespaced runs %q", args)
	}
	for _, n := range []string{"team-a", "team-b"} {
		var role rbacv1.Role
		var binding rbacv1.RoleBinding
		into(t, ns["Role/"+n+"/ldp-controller"], &role)
		into(t, ns["RoleBinding/"+n+"/ldp-controller"], &binding)
		if fmt.Sprint(role.Rules) != fmt.Sprint(cluster.Rules) {
			t.Errorf("the Role of %s: %+v, want the ClusterRole's %+v", n, role.Rules, cluster.Rules)
		}
		if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != "ldp-controller" || len(binding.Subjects) != 1 ||
			binding.Subjects[0].Namespace != "ldp-system" || binding.Subjects[0].Name != "ldp-controller" {
			t.Errorf("the RoleBinding of %s: %+v %+v", n, binding.RoleRef, binding.Subjects)
		}
	}

	hook := built(t, "with-webhook")
	into(t, hook["Deployment/ldp-system/ldp-controller"], &d)
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--webhook-port=9443") || !strings.Contains(args, "--metrics-bind-address :8443") {
		t.Errorf("config/with-webhook runs %q", args)
	}

	prom := built(t, "prometheus")
	mon := prom["ServiceMonitor/ldp-system/ldp-controller"]
	if mon == nil {
		t.Fatalf("config/prometheus has no ServiceMonitor: %v", prom)
	}
	ep := mon["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)
	if ep["port"] != svc.Spec.Ports[0].Name || ep["scheme"] != "https" || ep["bearerTokenFile"] == nil {
		t.Errorf("the ServiceMonitor's endpoint %v does not scrape the metrics Service over HTTPS with a token", ep)
	}
	var scrape rbacv1.ClusterRoleBinding
	into(t, prom["ClusterRoleBinding//ldp-metrics-reader-prometheus"], &scrape)
	if scrape.RoleRef.Name != "ldp-metrics-reader" {
		t.Errorf("config/prometheus binds %+v", scrape.RoleRef)
	}
}
