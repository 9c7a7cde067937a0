//go:build envtest

package main

// The Kubernetes tier (make test-k8s): ldp controller against a real kube-apiserver and etcd
// (envtest, built by hack/envtest/build.sh), a PostgreSQL catalog and versitygw S3. envtest has
// no kubelet and no Job controller, so the test plays them: it runs each Job's container
// command as a local ldp process, with the Job's ConfigMap as its spec folder, and writes the
// Job's status as the Job controller would.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/ldp-dev/ldp/apis/k8s"
	"github.com/ldp-dev/ldp/controllers/kube"
	"github.com/ldp-dev/ldp/internal/synth"
)

// cluster is an API server, two ldp controller managers electing a leader, and the test's
// kubelet, shared by the tests of the tier.
type cluster struct {
	cfg     *rest.Config
	c       client.Client
	catalog func(identifier string) map[string]any
	data    string // the orders CSV the specs read
	runs    *kubelet
	// metrics and probes are where the first manager serves them.
	metrics, probes string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run make test-k8s, which builds kube-apiserver and etcd (hack/envtest/build.sh)")
	}
	// The webhook configuration of config/webhook, pointed by envtest at the first manager's
	// webhook server, with a certificate of its own.
	env := &envtest.Environment{CRDDirectoryPaths: []string{"../../config/crd/bases"}, ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"../../config/webhook/manifests.yaml"}}}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the API server: %v", err)
	}
	t.Cleanup(func() { env.Stop() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig) // for ldp backfill --cluster, as a user's kubectl has it
	c, err := client.New(cfg, client.Options{Scheme: kube.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	uri := startPostgres(t)
	endpoint, _ := startS3(t)
	cl := &cluster{cfg: cfg, c: c, catalog: func(id string) map[string]any { return sharedCatalog(uri, endpoint, id) }}
	// Two weeks of orders ending yesterday (UTC days), five a day.
	cl.data = filepath.Join(t.TempDir(), "orders.csv")
	today := time.Now().UTC().Truncate(24 * time.Hour)
	var b bytes.Buffer
	synth.WriteOrders(&b, 3, today.AddDate(0, 0, -14), 14, 5)
	os.WriteFile(cl.data, b.Bytes(), 0o644)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cl.runs = &kubelet{t: t, c: c, ldp: ldpCommand(t), runs: map[string]int{}, faults: map[string]string{}, hold: map[string]bool{}}
	go cl.runs.loop(ctx)
	cl.metrics, cl.probes = freePort(t), freePort(t)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		metrics, probes, webhookPort := "0", "0", 0
		if i == 0 {
			metrics, probes, webhookPort = cl.metrics, cl.probes, env.WebhookInstallOptions.LocalServingPort
		}
		go func() {
			defer wg.Done()
			err := kube.RunManager(ctx, kube.ManagerOptions{Config: cfg, LeaderElection: true, LeaderElectionNamespace: "default",
				LeaseDuration: 4 * time.Second, RetryPeriod: 500 * time.Millisecond, MetricsAddr: metrics, ProbeAddr: probes, Home: "default",
				WebhookPort: webhookPort, WebhookHost: env.WebhookInstallOptions.LocalServingHost, WebhookCertDir: env.WebhookInstallOptions.LocalServingCertDir,
				Jobs: kube.JobSettings{Image: "ldp:test", EnvFrom: kube.EnvFrom([]string{"ldp-catalog"}, nil), Timeout: time.Hour},
				Rand: func() float64 { return 0 }})
			if err != nil && ctx.Err() == nil {
				t.Errorf("manager %d: %v", i, err)
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return cl
}

// kubelet runs the Jobs: each one once, as the Job controller with backoffLimit 0 would.
type kubelet struct {
	t      *testing.T
	c      client.Client
	ldp    string
	mu     sync.Mutex
	runs   map[string]int    // Job name -> times its command ran
	faults map[string]string // namespace/window -> LDP_FAULT for its first attempt
	hold   map[string]bool   // namespaces whose Jobs do not run: the test plays their pods
}

func (k *kubelet) ran(name string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.runs[name]
}

func (k *kubelet) loop(ctx context.Context) {
	started := map[string]bool{}
	for ctx.Err() == nil {
		var jobs batchv1.JobList
		if err := k.c.List(ctx, &jobs); err == nil {
			for i := range jobs.Items {
				j := jobs.Items[i]
				key := j.Namespace + "/" + j.Name
				k.mu.Lock()
				held := k.hold[j.Namespace]
				k.mu.Unlock()
				if started[key] || held || j.DeletionTimestamp != nil || len(j.Status.Conditions) > 0 {
					continue
				}
				started[key] = true
				go k.run(ctx, &j)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// run plays the kubelet and the Job controller for one Job.
func (k *kubelet) run(ctx context.Context, j *batchv1.Job) {
	k.mu.Lock()
	k.runs[j.Namespace+"/"+j.Name]++
	k.mu.Unlock()
	pod := j.Spec.Template.Spec
	var cm corev1.ConfigMap
	if err := k.c.Get(ctx, types.NamespacedName{Namespace: j.Namespace, Name: pod.Volumes[0].ConfigMap.Name}, &cm); err != nil {
		k.t.Errorf("Job %s: its ConfigMap: %v", j.Name, err)
		return
	}
	dir, _ := os.MkdirTemp("", "ldp-pod-")
	defer os.RemoveAll(dir)
	for name, body := range cm.Data {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	now := metav1.Now()
	j.Status.StartTime, j.Status.Active = &now, 1
	if err := k.c.Status().Update(ctx, j); err != nil {
		k.t.Logf("Job %s: start: %v", j.Name, err)
	}
	ctr := pod.Containers[0]
	var args []string
	for _, a := range ctr.Args {
		args = append(args, strings.Replace(a, kube.SpecMount, dir, 1))
	}
	cmd := exec.CommandContext(ctx, k.ldp, args...)
	cmd.Env = os.Environ()
	k.mu.Lock()
	if f := k.faults[j.Namespace+"/"+j.Annotations[kube.AnnotWindow]]; f != "" && j.Labels[kube.LabelAttempt] == "1" {
		cmd.Env = append(cmd.Env, "LDP_FAULT="+f)
	}
	k.mu.Unlock()
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
	}
	k.t.Logf("Job %s (%s) exited %d:\n%s", j.Name, strings.Join(ctr.Args, " "), code, out)
	if ctx.Err() != nil {
		return
	}
	if err := k.c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
		return // deleted meanwhile
	}
	done := metav1.Now()
	j.Status.Active = 0
	if code == 0 {
		j.Status.Succeeded, j.Status.CompletionTime = 1, &done
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"},
		}
	} else {
		reason, msg := "BackoffLimitExceeded", "Job has reached the specified backoff limit"
		if code == kube.ExitDataGate {
			reason, msg = "PodFailurePolicy", fmt.Sprintf("Container %s for pod %s/%s-pod failed with exit code %d matching FailJob rule at index 0", ctr.Name, j.Namespace, j.Name, code)
		}
		j.Status.Failed = 1
		j.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, LastTransitionTime: done, Reason: reason, Message: msg},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: done, Reason: reason, Message: msg},
		}
	}
	if err := k.c.Status().Update(ctx, j); err != nil {
		k.t.Errorf("Job %s: write its status: %v", j.Name, err)
	}
}

func (cl *cluster) namespace(t *testing.T, name string) string {
	t.Helper()
	if err := cl.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// pipelineMeta is a daily Pipeline's metadata over the cluster's orders, into table.
func (cl *cluster) pipelineMeta(table string, extra map[string]any) apiextv1.JSON {
	md := map[string]any{
		"window":  map[string]any{"size": "day", "column": "ordered_at"},
		"source":  map[string]any{"format": "CSV", "path": cl.data},
		"target":  map[string]any{"name": table, "format": "ICEBERG", "write_mode": "overwrite", "catalog": cl.catalog("shop")},
		"quality": []any{map[string]any{"check": "row_count", "min": 1}, map[string]any{"check": "unique", "columns": []any{"order_id"}}},
	}
	for k, v := range extra {
		md[k] = v
	}
	b, _ := json.Marshal(md)
	return apiextv1.JSON{Raw: b}
}

func day(n int) string {
	return time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, n).Format("2006-01-02")
}

// waitReady waits for the object's Ready condition to be True and returns its status.
func (cl *cluster) waitReady(t *testing.T, obj k8s.Object, timeout time.Duration) *k8s.Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		st := obj.GetStatus()
		for _, c := range st.Conditions {
			if c.Type == k8s.ConditionReady && c.Status == metav1.ConditionTrue && st.ObservedGeneration == obj.GetGeneration() {
				return st
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(st, "", "  ")
			t.Fatalf("%s %s is not Ready after %s:\n%s", obj.Kind(), obj.GetName(), timeout, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tableCounts queries a table through a dataset config on the shared catalog: rows, distinct
// ids, and the keys on main.
func (cl *cluster) tableCounts(t *testing.T, table string) (rows string, keys int) {
	t.Helper()
	dir := t.TempDir()
	spec := fmt.Sprintf(`{"identifier": "q_%s", "metadata": {"source": {"format": "CSV", "path": %q}, "target": {"name": %q, "format": "ICEBERG", "catalog": %s}}}`,
		table, cl.data, table, mustJSON(cl.catalog("shop")))
	path := filepath.Join(dir, "q.json")
	os.WriteFile(path, []byte(spec), 0o644)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"query", path, "SELECT count(*) || '/' || count(DISTINCT order_id) FROM " + table, "-o", "csv"}, &streams{Out: &out, Err: &errb, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("query %s: exit %d %s", table, code, errb.String())
	}
	rows = strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[1])
	out.Reset()
	if code := run(context.Background(), []string{"commits", path, "-o", "json"}, &streams{Out: &out, Err: &errb, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("commits %s: exit %d %s", table, code, errb.String())
	}
	var commits []map[string]any
	json.Unmarshal(out.Bytes(), &commits)
	return rows, len(commits)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jobsOf lists an object's Jobs.
func (cl *cluster) jobsOf(t *testing.T, ns, name string) []batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	if err := cl.c.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabels{kube.LabelObject: name}); err != nil {
		t.Fatal(err)
	}
	return jobs.Items
}

func TestKubernetes(t *testing.T) {
	cl := startCluster(t)
	ctx := context.Background()

	t.Run("a Workflow with catch-up over five days publishes each once", func(t *testing.T) {
		ns := cl.namespace(t, "catchup")
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns}, Spec: k8s.Spec{Identifier: "orders_catchup", Metadata: cl.pipelineMeta("orders_catchup", nil)}}
		md, _ := json.Marshal(map[string]any{"schedule": "5 0 * * *", "window": map[string]any{"size": "day"}, "catchup": true, "start": day(-5)})
		wf := &k8s.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "daily", Namespace: ns}, Spec: k8s.Spec{MaxConcurrentWindows: 2,
			Metadata: apiextv1.JSON{Raw: md}, Tasks: []apiextv1.JSON{{Raw: []byte(`{"id": "orders", "pipeline": "orders"}`)}}}}
		for _, o := range []client.Object{p, wf} {
			if err := cl.c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		st := cl.waitReady(t, wf, 3*time.Minute)
		if st.Windows["published"] != 5 || len(st.Windows) != 1 {
			t.Errorf("windows %v, want 5 published", st.Windows)
		}
		if want := day(-1) + "T00:00:00Z/" + day(0) + "T00:00:00Z"; st.LastPublishedWindow != want {
			t.Errorf("last published %s, want %s", st.LastPublishedWindow, want)
		}
		if rows, keys := cl.tableCounts(t, "orders_catchup"); rows != "25/25" || keys != 5 {
			t.Errorf("table: %s rows/ids and %d keys, want 25/25 and 5", rows, keys)
		}
		jobs := cl.jobsOf(t, ns, "daily")
		if len(jobs) != 5 {
			t.Errorf("%d Jobs, want one a window", len(jobs))
		}
		for _, j := range jobs {
			if n := cl.runs.ran(ns + "/" + j.Name); n != 1 {
				t.Errorf("Job %s ran %d times: the two managers must create each Job once", j.Name, n)
			}
		}
		// kubectl describe shows an Event for each published window.
		var evs corev1.EventList
		cl.c.List(ctx, &evs, client.InNamespace(ns))
		published := 0
		for _, e := range evs.Items {
			if e.Reason == "Published" && e.InvolvedObject.Name == "daily" {
				published++
			}
		}
		if published != 5 {
			t.Errorf("%d Published events, want 5", published)
		}
	})

	t.Run("a Pipeline's backfill annotation; a Job killed mid-window is followed by attempt 2", func(t *testing.T) {
		ns := cl.namespace(t, "killed")
		w := day(-3) + "T00:00:00Z/" + day(-2) + "T00:00:00Z"
		cl.runs.mu.Lock()
		cl.runs.faults[ns+"/"+w] = "staged:kill"
		cl.runs.mu.Unlock()
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns, Annotations: map[string]string{kube.AnnotBackfill: day(-5) + "/" + day(-1)}},
			Spec: k8s.Spec{Identifier: "orders_killed", Metadata: cl.pipelineMeta("orders_killed", map[string]any{"schedule": "5 0 * * *"})}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.waitDrained(t, p, 3*time.Minute)
		cl.waitReady(t, p, time.Minute)
		if rows, keys := cl.tableCounts(t, "orders_killed"); rows != "25/25" || keys != 5 {
			t.Errorf("table: %s rows/ids and %d keys, want 25/25 and 5", rows, keys)
		}
		var attempts []string
		for _, j := range cl.jobsOf(t, ns, "orders") {
			if j.Annotations[kube.AnnotWindow] == w {
				attempts = append(attempts, j.Labels[kube.LabelAttempt]+":"+j.Annotations[kube.AnnotRunID])
			}
		}
		if len(attempts) != 2 || strings.Split(attempts[0], ":")[1] != strings.Split(attempts[1], ":")[1] {
			t.Errorf("the killed window's Jobs: %v, want attempts 1 and 2 of one run", attempts)
		}
	})

	t.Run("kubectl apply of what ldp validate refuses is refused with its message", func(t *testing.T) {
		ns := cl.namespace(t, "invalid")
		local := map[string]any{"identifier": "shop", "warehouse_path": "warehouse"}
		sqlite := map[string]any{"type": "sql", "uri": "catalog.db", "identifier": "shop", "warehouse_path": "s3://bucket/warehouse"}
		fix := `use a catalog every pod reaches: {"type": "sql", "uri": "postgres://USER@HOST:PORT/DB", "warehouse_path": "s3://BUCKET/warehouse"} or {"type": "rest", "uri": "https://..."}`
		denied := `admission webhook "vpipeline.ldp.dev" denied the request: `
		for i, tc := range []struct {
			extra map[string]any
			want  string
		}{
			{map[string]any{"schedule": "5 0 * * *", "window": map[string]any{"size": "day", "column": "ordered_at", "timezone": "Europe/Londn"}},
				denied + `spec.metadata.window.timezone: unknown time zone "Europe/Londn" (did you mean "Europe/London"?): use an IANA name such as "Europe/Paris", "America/New_York" or "UTC"`},
			{map[string]any{"schedule": "5 25 * * *"},
				denied + `spec.metadata.schedule: invalid cron expression "5 25 * * *": end of range (25) above maximum (23): 25`},
			// The CRD's CEL rule: refused even where the webhook is not installed.
			{map[string]any{"target": map[string]any{"name": "orders_bad", "format": "ICEBERG", "write_mode": "upsert", "catalog": cl.catalog("shop")}},
				`Pipeline.ldp.dev "bad-2" is invalid: spec.metadata.target: Invalid value: write_mode upsert needs target.join_cols: the columns that identify a row`},
			{map[string]any{"target": map[string]any{"name": "orders_bad", "format": "ICEBERG", "catalog": local}},
				denied + "spec.metadata.target.catalog: a local catalog (a SQLite file in the warehouse folder) cannot work on a cluster, where each window runs in a pod of its own: " + fix},
			{map[string]any{"target": map[string]any{"name": "orders_bad", "format": "ICEBERG", "catalog": sqlite}},
				denied + "spec.metadata.target.catalog.uri: a sql catalog on a SQLite file (catalog.db) cannot work on a cluster, where each window runs in a pod of its own: " + fix},
		} {
			p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bad-%d", i), Namespace: ns}, Spec: k8s.Spec{Metadata: cl.pipelineMeta("orders_bad", tc.extra)}}
			err := cl.c.Create(ctx, p)
			if err == nil || err.Error() != tc.want {
				t.Errorf("create: %v\nwant: %s", err, tc.want)
			}
		}
		// An update is refused the same way, and the object stays as it was.
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns},
			Spec: k8s.Spec{Identifier: "orders_invalid", Suspend: true, Metadata: cl.pipelineMeta("orders_invalid", map[string]any{"schedule": "5 0 * * *"})}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatalf("a valid Pipeline is refused: %v", err)
		}
		patch := client.MergeFrom(p.DeepCopy()) // no resourceVersion: the controller adds its finalizer meanwhile
		p.Spec.Metadata = cl.pipelineMeta("orders_invalid", map[string]any{"schedule": "@dialy"})
		if err := cl.c.Patch(ctx, p, patch); err == nil || !strings.HasPrefix(err.Error(), denied+`spec.metadata.schedule: `) {
			t.Errorf("update to a bad schedule: %v", err)
		}
		// A Workflow whose task names a Pipeline that is not there (yet) is accepted, and
		// Stalled until it is, with no Job.
		md, _ := json.Marshal(map[string]any{"schedule": "5 0 * * *", "window": map[string]any{"size": "day"}})
		wf := &k8s.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "daily", Namespace: ns}, Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: md},
			Tasks: []apiextv1.JSON{{Raw: []byte(`{"id": "load", "pipeline": "absent"}`)}}}}
		if err := cl.c.Create(ctx, wf); err != nil {
			t.Fatal(err)
		}
		c := cl.waitCondition(t, wf, k8s.ConditionStalled, k8s.ReasonInvalidSpec, time.Minute)
		if want := "the tasks name Pipelines that do not exist in namespace invalid: absent"; c.Message != want {
			t.Errorf("Stalled says %q, want %q", c.Message, want)
		}
		if jobs := cl.jobsOf(t, ns, "daily"); len(jobs) != 0 {
			t.Errorf("the Stalled Workflow has %d Jobs", len(jobs))
		}
	})

	t.Run("ldp backfill --cluster; deleting an object stops its Jobs and leaves its table", func(t *testing.T) {
		ns := cl.namespace(t, "deleted")
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns},
			Spec: k8s.Spec{Identifier: "orders_deleted", Metadata: cl.pipelineMeta("orders_deleted", map[string]any{"schedule": "5 0 * * *"})}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		out := ldpOK(t, "backfill", "--cluster", "pipeline/orders", "-n", ns, "--from", day(-3), "--to", day(-1))
		if !strings.Contains(out, "pipeline deleted/orders: the windows "+day(-3)+" to "+day(-1)+" are asked for") {
			t.Errorf("ldp backfill --cluster said %q", out)
		}
		// Ready may come first for the scheduled window alone: wait for the backfill's too.
		cl.waitDrained(t, p, 2*time.Minute)
		cl.waitReady(t, p, time.Minute)
		if err := cl.c.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for {
			err := cl.c.Get(ctx, client.ObjectKeyFromObject(p), p)
			if apierrors.IsNotFound(err) && len(cl.jobsOf(t, ns, "orders")) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the Pipeline (%v) or its %d Jobs are still there", err, len(cl.jobsOf(t, ns, "orders")))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if rows, keys := cl.tableCounts(t, "orders_deleted"); rows != "15/15" || keys != 3 {
			t.Errorf("after the delete the table has %s rows/ids and %d keys, want 15/15 and 3", rows, keys)
		}
	})

	t.Run("one leader among the two managers", func(t *testing.T) {
		var lease coordinationv1.Lease
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: kube.LeaderElectionID}, &lease); err != nil {
			t.Fatalf("no leader election Lease: %v", err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			t.Error("the Lease has no holder")
		}
	})

	t.Run("kustomize build config/default is accepted by the API server", func(t *testing.T) {
		// What kubectl apply -k config/default sends, built by kustomize itself.
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../../config/default")
		if err != nil {
			t.Fatalf("kustomize build config/default: %v", err)
		}
		kinds := map[string]int{}
		for _, r := range res.Resources() {
			m, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{Object: m}
			kinds[u.GetKind()]++
			if u.GetKind() == "CustomResourceDefinition" {
				// The environment installed them from config/crd/bases: apply over them.
				err = cl.c.Patch(ctx, u, client.Apply, client.FieldOwner("kustomize-test"), client.ForceOwnership, client.FieldValidation("Strict"))
			} else {
				err = cl.c.Create(ctx, u, client.FieldValidation("Strict"))
			}
			if err != nil {
				t.Errorf("the API server refuses %s %s: %v", u.GetKind(), u.GetName(), err)
			}
		}
		// ClusterRoles: ldp-controller, ldp-metrics-auth, ldp-metrics-reader; the Service of the metrics.
		want := map[string]int{"Namespace": 1, "CustomResourceDefinition": 2, "ServiceAccount": 1, "ClusterRole": 3, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
			"Deployment": 1, "PodDisruptionBudget": 1, "Service": 1}
		if fmt.Sprint(kinds) != fmt.Sprint(want) {
			t.Errorf("kustomize built %v, want %v", kinds, want)
		}
		// The Deployment runs ldp controller with the Secret of the catalog, probed where it serves.
		var d appsv1.Deployment
		if err := cl.c.Get(ctx, types.NamespacedName{Namespace: "ldp-system", Name: "ldp-controller"}, &d); err != nil {
			t.Fatal(err)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if strings.Join(c.Command, " ") != "ldp controller" || !strings.Contains(strings.Join(c.Args, " "), "--env-secret ldp-catalog") {
			t.Errorf("the Deployment runs %v %v", c.Command, c.Args)
		}
		// The image is set once (kustomize images:): the Jobs run the pod's own, found by POD_NAME.
		podName := false
		for _, e := range c.Env {
			podName = podName || (e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name")
			if e.Name == "LDP_IMAGE" {
				t.Errorf("the Deployment sets the image twice: LDP_IMAGE=%s beside %s", e.Value, c.Image)
			}
		}
		if !podName || c.Image != "ldp:latest" {
			t.Errorf("the Deployment's image %s, POD_NAME from metadata.name: %t", c.Image, podName)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Errorf("the Deployment's probes: readiness %+v, liveness %+v", c.ReadinessProbe, c.LivenessProbe)
		}
		// The RBAC lets it read the pods of its Jobs.
		var role rbacv1.ClusterRole
		if err := cl.c.Get(ctx, types.NamespacedName{Name: "ldp-controller"}, &role); err != nil {
			t.Fatal(err)
		}
		pods := false
		for _, r := range role.Rules {
			pods = pods || (slices.Contains(r.Resources, "pods") && slices.Contains(r.Verbs, "watch"))
		}
		if !pods {
			t.Errorf("the ClusterRole cannot watch pods: %+v", role.Rules)
		}
	})

	t.Run("kustomize build config/with-webhook adds the webhook, its Service and certificate", func(t *testing.T) {
		// Built, not created: cert-manager's kinds are not on this API server, and a webhook
		// configuration whose Service has no pod would refuse every later Pipeline.
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "../../config/with-webhook")
		if err != nil {
			t.Fatalf("kustomize build config/with-webhook: %v", err)
		}
		kinds := map[string]int{}
		var args []string
		mounted := false
		for _, r := range res.Resources() {
			kinds[r.GetKind()]++
			if r.GetKind() == "Deployment" {
				m, _ := r.Map()
				var d appsv1.Deployment
				b, _ := json.Marshal(m)
				json.Unmarshal(b, &d)
				args = d.Spec.Template.Spec.Containers[0].Args
				for _, v := range d.Spec.Template.Spec.Volumes {
					mounted = mounted || (v.Secret != nil && v.Secret.SecretName == "ldp-webhook-cert")
				}
			}
		}
		for _, k := range []string{"ValidatingWebhookConfiguration", "Service", "Certificate", "Issuer", "Deployment", "CustomResourceDefinition"} {
			if kinds[k] == 0 {
				t.Errorf("no %s in %v", k, kinds)
			}
		}
		if a := strings.Join(args, " "); !strings.Contains(a, "--webhook-port=9443") || !strings.Contains(a, "--env-secret ldp-catalog") || !mounted {
			t.Errorf("the Deployment runs %q, the certificate mounted: %t", a, mounted)
		}
	})

	t.Run("ldp export k8s of the samples is accepted by the API server", func(t *testing.T) {
		ns := cl.namespace(t, "samples")
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"export", "k8s", "../../config/samples", "-n", ns}, &streams{Out: &out, Err: &errb, Getenv: os.Getenv}); code != 0 {
			t.Fatalf("export: exit %d %s", code, errb.String())
		}
		if !strings.Contains(errb.String(), "warning: Pipeline daily-orders: spec.metadata.target.catalog: a local catalog") {
			t.Errorf("export of local catalogs does not warn: %s", errb.String())
		}
		docs := strings.Split(out.String(), "\n---\n")
		if len(docs) < 5 {
			t.Fatalf("%d objects exported", len(docs))
		}
		for _, d := range docs {
			var tm metav1.TypeMeta
			yaml.Unmarshal([]byte(d), &tm)
			var obj client.Object = &k8s.Pipeline{}
			if tm.Kind == k8s.KindWorkflow {
				obj = &k8s.Workflow{}
			}
			if err := yaml.UnmarshalStrict([]byte(d), obj); err != nil {
				t.Fatalf("%v\n%s", err, d)
			}
			obj.(k8s.Object).GetSpec().Suspend = true // accepted, not run: the samples' paths are local
			// The samples' catalogs are a laptop's, which the webhook refuses (and export warns
			// of): the cluster's is the one change a team makes.
			spec := obj.(k8s.Object).GetSpec()
			spec.Metadata.Raw = sharedCatalogs(t, spec.Metadata.Raw, cl.catalog)
			for i := range spec.Tasks {
				spec.Tasks[i].Raw = sharedCatalogs(t, spec.Tasks[i].Raw, cl.catalog)
			}
			if err := cl.c.Create(ctx, obj, client.FieldValidation("Strict")); err != nil {
				t.Errorf("the API server refuses %s %s: %v", tm.Kind, obj.GetName(), err)
			}
		}
		// And it refuses what the schema forbids, as kubectl apply shows it.
		bad := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "bad-mode", Namespace: ns},
			Spec: k8s.Spec{Metadata: cl.pipelineMeta("x", map[string]any{"target": map[string]any{"name": "x", "format": "ICEBERG", "write_mode": "merge", "catalog": cl.catalog("shop")}})}}
		if err := cl.c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "write_mode") {
			t.Errorf("a bad write_mode was accepted by the API server: %v", err)
		}
	})

	t.Run("a credential the controller lacks: the plan's message names the Secret of its namespace", func(t *testing.T) {
		ns := cl.namespace(t, "creds")
		catalog := cl.catalog("shop")
		catalog["type"], catalog["uri"], catalog["token_env"] = "rest", "http://127.0.0.1:1", "LDP_K8S_TEST_TOKEN"
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns},
			Spec: k8s.Spec{Identifier: "orders_creds", Metadata: cl.pipelineMeta("orders_creds", map[string]any{"schedule": "5 0 * * *",
				"target": map[string]any{"name": "orders_creds", "format": "ICEBERG", "write_mode": "overwrite", "catalog": catalog}})}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		c := cl.waitCondition(t, p, k8s.ConditionReady, k8s.ReasonPlanFailed, time.Minute)
		for _, want := range []string{"LDP_K8S_TEST_TOKEN", "the Secret ldp-catalog of namespace default too", "the Secret ldp-catalog of namespace creds"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("PlanFailed says %q, want it to name %q", c.Message, want)
			}
		}
	})

	t.Run("a second ldp backfill --cluster while one runs: both ranges run, then the annotation is drained", func(t *testing.T) {
		ns := cl.namespace(t, "twice")
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns},
			Spec: k8s.Spec{Identifier: "orders_twice", Metadata: cl.pipelineMeta("orders_twice", nil)}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		ldpOK(t, "backfill", "--cluster", "pipeline/orders", "-n", ns, "--from", day(-8), "--to", day(-4))
		ldpOK(t, "backfill", "--cluster", "pipeline/orders", "-n", ns, "--from", day(-3), "--to", day(-1))
		// Both are asked for (the first window may be done, but not all of the first range).
		drained := cl.drained(t, p)
		if got, want := p.Annotations[kube.AnnotBackfill], day(-8)+"/"+day(-4)+","+day(-3)+"/"+day(-1); !drained && got != want {
			t.Errorf("after the second request the annotation is %q, want %q (or drained)", got, want)
		}
		cl.waitDrained(t, p, 3*time.Minute)
		if rows, keys := cl.tableCounts(t, "orders_twice"); rows != "30/30" || keys != 6 {
			t.Errorf("table: %s rows/ids and %d keys, want 30/30 and 6", rows, keys)
		}
	})

	t.Run("a pod that cannot start is Stalled with its reason and an Event; the Job has the spec's deadline", func(t *testing.T) {
		ns := cl.namespace(t, "nostart")
		cl.runs.mu.Lock()
		cl.runs.hold[ns] = true
		cl.runs.mu.Unlock()
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns, Annotations: map[string]string{kube.AnnotBackfill: day(-2) + "/" + day(-1)}},
			Spec: k8s.Spec{Identifier: "orders_nostart", TimeoutSeconds: 600, Metadata: cl.pipelineMeta("orders_nostart", nil),
				JobTemplate: &k8s.JobTemplate{Labels: map[string]string{"team": "shop"}, NodeSelector: map[string]string{"pool": "batch"},
					Tolerations: []corev1.Toleration{{Key: "batch", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
					Resources:   &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
					Env:         []corev1.EnvVar{{Name: "TZ", Value: "UTC"}}}}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		var job batchv1.Job
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			if jobs := cl.jobsOf(t, ns, "orders"); len(jobs) == 1 {
				job = jobs[0]
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no Job for the backfill's window")
			}
		}
		if d := job.Spec.ActiveDeadlineSeconds; d == nil || *d != 600 {
			t.Errorf("the Job's activeDeadlineSeconds is %v, want the spec's 600", d)
		}
		// The Job's pod carries the object's jobTemplate, and ldp's defaults: non-root, a
		// read-only root file system with HOME on the pod's /tmp.
		ps, ctr := job.Spec.Template.Spec, job.Spec.Template.Spec.Containers[0]
		if job.Spec.Template.Labels["team"] != "shop" || ps.NodeSelector["pool"] != "batch" || len(ps.Tolerations) != 1 ||
			ctr.Resources.Limits.Memory().String() != "4Gi" || len(ctr.Env) != 2 || ctr.Env[0].Name != "HOME" || ctr.Env[1].Name != "TZ" {
			t.Errorf("the Job's pod does not carry the jobTemplate: labels %v, nodeSelector %v, tolerations %v, resources %v, env %v",
				job.Spec.Template.Labels, ps.NodeSelector, ps.Tolerations, ctr.Resources, ctr.Env)
		}
		if ps.SecurityContext == nil || !*ps.SecurityContext.RunAsNonRoot || ctr.SecurityContext == nil || !*ctr.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("the Job's pod security: %+v, container %+v", ps.SecurityContext, ctr.SecurityContext)
		}
		// The Job controller's pod, and the kubelet's verdict on it.
		labels := map[string]string{batchv1.JobNameLabel: job.Name}
		maps.Copy(labels, job.Spec.Template.Labels)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-x7k2p", Namespace: ns, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
			Spec: job.Spec.Template.Spec}
		if err := cl.c.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: kube.Container, Image: "ldp:test",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "ldp-catalog" not found`}}}}}
		if err := cl.c.Status().Update(ctx, pod); err != nil {
			t.Fatal(err)
		}
		c := cl.waitCondition(t, p, k8s.ConditionStalled, k8s.ReasonPodCannotStart, time.Minute)
		if !strings.Contains(c.Message, "CreateContainerConfigError") || !strings.Contains(c.Message, `secret "ldp-catalog" not found`) || !strings.Contains(c.Message, pod.Name) {
			t.Errorf("Stalled says %q", c.Message)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			var evs corev1.EventList
			cl.c.List(ctx, &evs, client.InNamespace(ns))
			n := 0
			for _, e := range evs.Items {
				if e.Reason == "CreateContainerConfigError" && e.InvolvedObject.Name == "orders" && strings.Contains(e.Message, `secret "ldp-catalog" not found`) {
					n++
				}
			}
			if n == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d Events with the pod's reason, want 1", n)
			}
		}
		// The Secret is there now: the pod goes away and the Job runs; Stalled clears.
		if err := cl.c.Delete(ctx, pod); err != nil {
			t.Fatal(err)
		}
		cl.runs.mu.Lock()
		delete(cl.runs.hold, ns)
		cl.runs.mu.Unlock()
		st := cl.waitReady(t, p, 2*time.Minute)
		for _, c := range st.Conditions {
			if c.Type == k8s.ConditionStalled && c.Status == metav1.ConditionTrue {
				t.Errorf("still Stalled: %s", c.Message)
			}
		}
	})

	t.Run("the metrics port serves ldp's series and /readyz", func(t *testing.T) {
		ns := cl.namespace(t, "gate")
		p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: ns, Annotations: map[string]string{kube.AnnotBackfill: day(-2) + "/" + day(-1)}},
			Spec: k8s.Spec{Identifier: "orders_gate", Metadata: cl.pipelineMeta("orders_gate", map[string]any{"quality": []any{map[string]any{"check": "row_count", "min": 100}}})}}
		if err := cl.c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		cl.waitCondition(t, p, k8s.ConditionReady, k8s.ReasonBlocked, 2*time.Minute)
		for _, path := range []string{"/readyz", "/healthz"} {
			resp, err := http.Get("http://" + cl.probes + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %s", path, resp.Status)
			}
		}
		value := func(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
			f := families[name]
			if f == nil {
				t.Errorf("no %s on the metrics port", name)
				return -1
			}
		metrics:
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
						continue metrics
					}
				}
				if m.Gauge != nil {
					return m.Gauge.GetValue()
				}
				return m.Counter.GetValue()
			}
			t.Errorf("no %s%v on the metrics port", name, labels)
			return -1
		}
		// The status is written after the pass that counts: the gauges may trail it by a pass.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			resp, err := http.Get("http://" + cl.metrics + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			families, err := parser.TextToMetricFamilies(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("parse /metrics: %v", err)
			}
			gate := map[string]string{"kind": "Pipeline", "namespace": ns, "object": "orders"}
			got := []float64{
				value(families, "ldp_windows", map[string]string{"kind": "Workflow", "namespace": "catchup", "object": "daily", "state": "published"}),
				value(families, "ldp_windows", map[string]string{"kind": "Pipeline", "namespace": ns, "object": "orders", "state": "blocked"}),
				value(families, "ldp_data_gate_blocks_total", gate),
				value(families, "ldp_job_attempts_total", gate),
				value(families, "ldp_job_attempts_total", map[string]string{"kind": "Pipeline", "namespace": "killed", "object": "orders"}),
			}
			// gate: a blocked window gets its three attempts, each held back; killed: 5 windows,
			// one of them twice.
			want := []float64{5, 1, 3, 3, 6}
			if fmt.Sprint(got) == fmt.Sprint(want) || t.Failed() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("ldp's series: %v, want %v", got, want)
			}
		}
	})
}

// drained says whether the object's backfill annotation is gone: every range it asked for is done.
func (cl *cluster) drained(t *testing.T, obj k8s.Object) bool {
	t.Helper()
	if err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	_, asked := obj.GetAnnotations()[kube.AnnotBackfill]
	return !asked
}

// waitDrained waits for the controller to remove the object's backfill annotation.
func (cl *cluster) waitDrained(t *testing.T, obj k8s.Object, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cl.drained(t, obj); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(obj.GetStatus(), "", "  ")
			t.Fatalf("%s %s still asks for %q after %s:\n%s", obj.Kind(), obj.GetName(), obj.GetAnnotations()[kube.AnnotBackfill], timeout, b)
		}
	}
}

// waitCondition waits for the object's condition typ to have reason and returns it.
func (cl *cluster) waitCondition(t *testing.T, obj k8s.Object, typ, reason string, timeout time.Duration) metav1.Condition {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		if err := cl.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		for _, c := range obj.GetStatus().Conditions {
			if c.Type == typ && c.Reason == reason {
				return c
			}
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(obj.GetStatus(), "", "  ")
			t.Fatalf("%s %s has no %s condition of reason %s after %s:\n%s", obj.Kind(), obj.GetName(), typ, reason, timeout, b)
		}
	}
}

// sharedCatalogs replaces every catalog block of a spec's JSON with the cluster's, for its
// identifier.
func sharedCatalogs(t *testing.T, raw []byte, catalog func(identifier string) map[string]any) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if cat, ok := e.(map[string]any); ok && k == "catalog" {
					id, _ := cat["identifier"].(string)
					v[k] = catalog(id)
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	b, _ := json.Marshal(doc)
	return b
}
