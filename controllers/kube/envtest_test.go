//go:build envtest

package kube

// The manager on a real kube-apiserver and etcd (envtest; make test-k8s), running as the
// ServiceAccount of config/ with the RBAC config/ gives it and nothing more: the secured
// metrics, the probes, and the namespaced mode.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// controllerAccount is the ServiceAccount config/ runs the controller as.
const controllerAccount = "system:serviceaccount:ldp-system:ldp-controller"

// startAPIServer starts kube-apiserver and etcd with ldp's CRDs and returns an admin's config
// and client.
func startAPIServer(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run make test-k8s, which builds kube-apiserver and etcd (hack/envtest/build.sh)")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{"../../config/crd/bases"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the API server: %v", err)
	}
	t.Cleanup(func() { env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}

// applyKustomization creates what kustomize builds of dir, as kubectl apply -k would, but
// the CRDs (the environment installed them) and the Deployment (no kubelet runs it: the test
// runs its manager in process).
func applyKustomization(t *testing.T, c client.Client, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		out = append(out, u)
		if k := u.GetKind(); k == "CustomResourceDefinition" || k == "Deployment" {
			continue
		}
		if err := c.Create(context.Background(), u, client.FieldValidation("Strict")); err != nil {
			t.Fatalf("kustomize build %s: the API server refuses %s %s/%s: %v", dir, u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return out
}

// asController is cfg impersonating the controller's ServiceAccount: what the Deployment's
// pod may do, and no more.
func asController(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: controllerAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ldp-system", "system:authenticated"}}
	return c
}

// runManager runs RunManager until the test ends.
func runManager(t *testing.T, o ManagerOptions) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- RunManager(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager: %v", err)
		}
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// tokenOf is a token of a new ServiceAccount of namespace default, as a scraper's pod has it.
func tokenOf(t *testing.T, cfg *rest.Config, c client.Client, name string) string {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token of %s: %v", name, err)
	}
	return tr.Status.Token
}

// scrape GETs url with the token (none when ""), its certificate not checked: it is the
// controller's self-signed one.
func scrape(url, token string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// eventually retries f until it is nil, for up to timeout, and fails the test with its last error.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// plannablePipeline is a daily Pipeline the controller plans without any server: its catalog
// a SQLite file of the test's (the webhook, which would refuse it, is not installed here).
func plannablePipeline(t *testing.T, namespace string) *k8s.Pipeline {
	dir := t.TempDir()
	data := filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(data, []byte("order_id,ordered_at\n1,2026-01-01T00:00:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md, _ := json.Marshal(map[string]any{
		"schedule": "5 0 * * *",
		"window":   map[string]any{"size": "day", "column": "ordered_at"},
		"source":   map[string]any{"format": "CSV", "path": data},
		"target": map[string]any{"name": "orders", "format": "ICEBERG", "write_mode": "overwrite",
			"catalog": map[string]any{"type": "sql", "uri": filepath.Join(dir, "catalog.db"), "identifier": "shop", "warehouse_path": filepath.Join(dir, "warehouse")}},
	})
	return &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: namespace}, Spec: k8s.Spec{Identifier: "orders_" + namespace, Metadata: apiextv1.JSON{Raw: md}}}
}

// TestKubernetesSecureMetrics: as config/default runs it, the manager serves its metrics over
// HTTPS to a token that may get /metrics (the ClusterRole ldp-metrics-reader), refuses one
// without a token or without the role, and answers /readyz and /healthz once it runs.
func TestKubernetesSecureMetrics(t *testing.T) {
	cfg, c := startAPIServer(t)
	ctx := context.Background()
	applyKustomization(t, c, "../../config/default")
	metrics, probes := freeAddr(t), freeAddr(t)
	runManager(t, ManagerOptions{Config: asController(cfg), LeaderElection: true, LeaderElectionNamespace: "ldp-system",
		MetricsAddr: metrics, MetricsSecure: true, ProbeAddr: probes, Home: "ldp-system", Jobs: JobSettings{Image: "ldp:test"}})

	for _, path := range []string{"/readyz", "/healthz"} {
		eventually(t, time.Minute, func() error {
			resp, err := http.Get("http://" + probes + path)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET %s: %s", path, resp.Status)
			}
			return nil
		})
	}

	// One attempt's Job (no kubelet runs it): ldp's series have something to count.
	p := plannablePipeline(t, "default")
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	reader, stranger := tokenOf(t, cfg, c, "scraper"), tokenOf(t, cfg, c, "stranger")
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-ldp-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "ldp-metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: "default"}}}); err != nil {
		t.Fatal(err)
	}
	url := "https://" + metrics + "/metrics"
	want := `ldp_job_attempts_total{kind="Pipeline",namespace="default",object="orders"} 1`
	eventually(t, 2*time.Minute, func() error {
		code, body, err := scrape(url, reader)
		if err != nil {
			return err
		}
		if code != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, `ldp_windows{kind="Pipeline",namespace="default",object="orders",state="running"} 1`) {
			return fmt.Errorf("a scrape with the reader's token: %d, want 200 and %s in:\n%s", code, want, body)
		}
		return nil
	})
	for _, tc := range []struct {
		who, token string
		code       int
	}{{"no token", "", http.StatusUnauthorized}, {"a token not bound to ldp-metrics-reader", stranger, http.StatusForbidden}} {
		code, body, err := scrape(url, tc.token)
		if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || strings.Contains(body, "ldp_") {
			t.Errorf("a scrape with %s: %d %q, want %d and no series", tc.who, code, body, tc.code)
		}
	}
	// Plain HTTP is not served beside it.
	if resp, err := http.Get("http://" + metrics + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the metrics are served over plain HTTP too")
		}
	}
}

// TestKubernetesNamespaced: as config/namespaced runs it (--namespaces team-a,team-b, Roles
// there and no ClusterRole), the manager reconciles the objects of its namespaces, and does
// not see those of another.
func TestKubernetesNamespaced(t *testing.T) {
	cfg, c := startAPIServer(t)
	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for _, u := range applyKustomization(t, c, "../../config/namespaced") {
		if u.GetKind() == "ClusterRole" && u.GetName() == "ldp-controller" {
			t.Error("config/namespaced keeps the ClusterRole ldp-controller")
		}
		if u.GetKind() == "Deployment" {
			var d appsv1.Deployment
			b, _ := json.Marshal(u.Object)
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			args = d.Spec.Template.Spec.Containers[0].Args
		}
	}
	if !strings.Contains(strings.Join(args, " "), "--namespaces=team-a,team-b") {
		t.Fatalf("config/namespaced runs ldp controller %v, want --namespaces=team-a,team-b", args)
	}
	runManager(t, ManagerOptions{Config: asController(cfg), Namespaces: []string{"team-a", "team-b"}, LeaderElection: true,
		LeaderElectionNamespace: "ldp-system", Home: "ldp-system", Jobs: JobSettings{Image: "ldp:test"}})

	// Suspended: reconciled (the finalizer, the status) without a catalog to plan against.
	objs := map[string]*k8s.Pipeline{}
	for _, ns := range []string{"team-c", "team-a", "team-b"} {
		p := clusterPipeline(nil)
		p.Namespace, p.Spec.Suspend = ns, true
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		objs[ns] = p
	}
	reconciled := func(p *k8s.Pipeline) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err
		}
		return controllerutil.ContainsFinalizer(p, Finalizer) || len(p.Status.Conditions) > 0, nil
	}
	for _, ns := range []string{"team-a", "team-b"} {
		eventually(t, time.Minute, func() error {
			ok, err := reconciled(objs[ns])
			if err == nil && (!ok || objs[ns].Status.ObservedGeneration != objs[ns].Generation) {
				err = fmt.Errorf("the Pipeline of %s is not reconciled: finalizers %v, status %+v", ns, objs[ns].Finalizers, objs[ns].Status)
			}
			return err
		})
	}
	// team-c's was created first: had the manager seen it, it would be done by now. A few
	// more passes' worth of time, to be sure.
	time.Sleep(3 * time.Second)
	if ok, err := reconciled(objs["team-c"]); err != nil || ok {
		t.Errorf("the Pipeline of team-c, outside --namespaces, was reconciled (%v): finalizers %v, status %+v", err, objs["team-c"].Finalizers, objs["team-c"].Status)
	}
}
