package kube

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ldp-dev/ldp/apis/k8s"
	"github.com/ldp-dev/ldp/reconcile"
)

var update = flag.Bool("update", false, "rewrite config/crd/bases from the schemas")

// TestCRDFilesAreCurrent: config/crd/bases is what ldp export crds prints.
func TestCRDFilesAreCurrent(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		var b bytes.Buffer
		if err := WriteYAML(&b, []apiextv1.CustomResourceDefinition{c}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "config", "crd", "bases", k8s.Group+"_"+c.Spec.Names.Plural+".yaml")
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s is not current (%v): run go test ./controllers/kube -run TestCRDFilesAreCurrent -update", path, err)
		}
		if c.Spec.Versions[0].Subresources.Status == nil || len(c.Spec.Versions[0].AdditionalPrinterColumns) < 4 {
			t.Errorf("%s: no status subresource or printer columns", c.Name)
		}
	}
}

// TestExportRewritesTaskReferences: a workflow's task names the Pipeline object of the file it
// named, names are Kubernetes names, and the identifier the keys are made of is kept.
func TestExportRewritesTaskReferences(t *testing.T) {
	objs, err := Export([]string{"../../config/samples"}, "shop")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]k8s.Object{}
	for _, o := range objs {
		byName[o.Kind()+"/"+o.GetName()] = o
		if o.GetNamespace() != "shop" {
			t.Errorf("%s is in namespace %q", o.GetName(), o.GetNamespace())
		}
	}
	wf, ok := byName["Workflow/daily-orders-workflow"].(*k8s.Workflow)
	if !ok {
		t.Fatalf("no Workflow daily-orders-workflow among %d objects", len(objs))
	}
	if wf.Spec.Identifier != "daily_orders_workflow" {
		t.Errorf("identifier %q", wf.Spec.Identifier)
	}
	if refs := Refs(wf); strings.Join(refs, " ") != "customers daily-orders export-orders" {
		t.Errorf("the workflow names %v", refs)
	}
	for _, r := range Refs(wf) {
		if byName["Pipeline/"+r] == nil {
			t.Errorf("the workflow names Pipeline %s, which was not exported", r)
		}
	}
	// The object turned back into files is the same workflow, runnable as ldp runs files.
	pipelines := map[string]*k8s.Pipeline{}
	for _, r := range Refs(wf) {
		pipelines[r] = byName["Pipeline/"+r].(*k8s.Pipeline)
	}
	files, err := SpecFilesOf(wf, pipelines)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files.Files[files.Main]), `"pipeline": "daily-orders.json"`) || !strings.Contains(string(files.Files["daily-orders.json"]), `"identifier": "daily_orders"`) {
		t.Errorf("spec files:\n%s", files.Files[files.Main])
	}
}

// TestReconcilerDecisions runs one pass against controller-runtime's fake client: a Pipeline
// with catch-up over three days gets one Job (the concurrency limit), named and labelled for
// its window and attempt; a failed attempt is followed by attempt 2 of the same run.
func TestReconcilerDecisions(t *testing.T) {
	dir := t.TempDir()
	md := `{"schedule": "5 0 * * *", "window": {"size": "day", "column": "ts"},
	  "source": {"format": "CSV", "path": "` + dir + `/in.csv"},
	  "target": {"name": "t", "format": "ICEBERG", "catalog": {"identifier": "lake", "warehouse_path": "` + dir + `/wh"}}}`
	wf := `{"schedule": "5 0 * * *", "window": {"size": "day"}, "catchup": true, "start": "2026-08-01"}`
	objs := []client.Object{
		&k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}, Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(md)}}},
		&k8s.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "daily", Namespace: "shop"}, Spec: k8s.Spec{MaxConcurrentWindows: 2,
			Metadata: apiextv1.JSON{Raw: []byte(wf)}, Tasks: []apiextv1.JSON{{Raw: []byte(`{"id": "load", "pipeline": "orders"}`)}}}},
	}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).WithStatusSubresource(&k8s.Pipeline{}, &k8s.Workflow{}).Build()
	now := time.Date(2026, 8, 4, 12, 0, 0, 0, time.UTC)
	r := &Reconciler{Client: c, Kind: k8s.KindWorkflow, Jobs: JobSettings{Image: "ldp:test"}, Now: func() time.Time { return now }, Rand: func() float64 { return 0 }}
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "shop", Name: "daily"}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace("shop")); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 2 {
		t.Fatalf("%d Jobs for 3 due windows with maxConcurrentWindows 2, want 2", len(jobs.Items))
	}
	first := jobs.Items[0]
	for _, j := range jobs.Items {
		if j.Annotations[AnnotWindow] < first.Annotations[AnnotWindow] {
			first = j
		}
	}
	w := "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z"
	if first.Annotations[AnnotWindow] != w || first.Name != reconcile.JobName(k8s.KindWorkflow, "shop", "daily", w, 1) {
		t.Errorf("first Job %s for %s", first.Name, first.Annotations[AnnotWindow])
	}
	args := strings.Join(first.Spec.Template.Spec.Containers[0].Args, " ")
	runID := reconcile.JobRunID(k8s.KindWorkflow, "shop", "daily", w)
	if want := "workflow run " + SpecMount + "/workflow-daily.json --window " + w + " --run-id " + runID + " --attempt 1"; args != want {
		t.Errorf("args %q, want %q", args, want)
	}
	var got k8s.Workflow
	c.Get(ctx, key, &got)
	if got.Status.Windows["running"] != 2 || got.Status.Windows["missing"] != 1 || !hasCondition(got.Status, k8s.ConditionReconciling, metav1.ConditionTrue) {
		t.Errorf("status %+v", got.Status)
	}
	// The first Job fails: its window's next Job is attempt 2 of the same run.
	first.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)),
		Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
	if err := c.Status().Update(ctx, &first); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var second batchv1.Job
	if err := c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: reconcile.JobName(k8s.KindWorkflow, "shop", "daily", w, 2)}, &second); err != nil {
		t.Fatalf("no attempt 2: %v", err)
	}
	if !strings.Contains(strings.Join(second.Spec.Template.Spec.Containers[0].Args, " "), "--run-id "+runID+" --attempt 2") {
		t.Errorf("attempt 2 runs %v", second.Spec.Template.Spec.Containers[0].Args)
	}
	// An invalid object is Stalled, with the problem, and gets no Job.
	bad := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "shop"}, Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(`{"schedule": "every day"}`)}}}
	if err := c.Create(ctx, bad); err != nil {
		t.Fatal(err)
	}
	rp := &Reconciler{Client: c, Kind: k8s.KindPipeline, Jobs: JobSettings{Image: "ldp:test"}, Now: func() time.Time { return now }}
	if _, err := rp.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "bad"}}); err != nil {
		t.Fatal(err)
	}
	c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: "bad"}, bad)
	if !hasCondition(bad.Status, k8s.ConditionStalled, metav1.ConditionTrue) {
		t.Errorf("the invalid Pipeline is not Stalled: %+v", bad.Status.Conditions)
	}
	var badJobs batchv1.JobList
	c.List(ctx, &badJobs, client.MatchingLabels{LabelObject: "bad"})
	if len(badJobs.Items) != 0 {
		t.Errorf("the invalid Pipeline got %d Jobs", len(badJobs.Items))
	}
}

func hasCondition(st k8s.Status, typ string, status metav1.ConditionStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

// TestBackfillRangesMerge: a second request is added beside the first, once, in order.
func TestBackfillRangesMerge(t *testing.T) {
	v := addRange("", "2026-08-01/2026-08-05")
	v = addRange(v, "2026-08-10/2026-08-12")
	v = addRange(v, "2026-08-01/2026-08-05")
	if v != "2026-08-01/2026-08-05,2026-08-10/2026-08-12" {
		t.Errorf("merged %q", v)
	}
	got, err := backfillRanges(v)
	if err != nil || len(got) != 2 || got[1] != [2]string{"2026-08-10", "2026-08-12"} {
		t.Errorf("ranges %v, %v", got, err)
	}
	if _, err := backfillRanges("2026-08-01"); err == nil || !strings.Contains(err.Error(), "START/END") {
		t.Errorf("a range with no END: %v", err)
	}
}

// TestPlanHintNamesTheControllersSecret: a credentials error names the Secret of the
// controller's namespace and the Jobs'; another error is left as it is.
func TestPlanHintNamesTheControllersSecret(t *testing.T) {
	r := &Reconciler{Home: "ldp-system", Jobs: JobSettings{EnvFrom: EnvFrom([]string{"ldp-catalog"}, nil)}}
	obj := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}}
	msg := r.planHint(obj, errors.New(`catalog shop: failed to connect: FATAL: password authentication failed for user "ldp" (SQLSTATE 28P01)`))
	for _, want := range []string{"password authentication failed", "the Secret ldp-catalog of namespace ldp-system too", "the Secret ldp-catalog of namespace shop"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not say %q", msg, want)
		}
	}
	if msg := r.planHint(obj, errors.New("window.size: bad")); msg != "window.size: bad" {
		t.Errorf("a plan error that is not about credentials became %q", msg)
	}
}

// TestConflictIsRetriedQuietly: a 409 on the status write (the object changed since the cache
// read it) is a routine retry, not an error controller-runtime logs as "Reconciler error".
func TestConflictIsRetriedQuietly(t *testing.T) {
	p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"},
		Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(`{"schedule": "5 0 * * *"}`)}}} // invalid: no source, no target
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(p).WithStatusSubresource(&k8s.Pipeline{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			conflicts++
			return apierrors.NewConflict(schema.GroupResource{Group: k8s.Group, Resource: "pipelines"}, o.GetName(), errors.New("the object has been modified"))
		}}).Build()
	var logged []string
	ctx := log.IntoContext(context.Background(), funcr.New(func(prefix, args string) { logged = append(logged, prefix+args) }, funcr.Options{Verbosity: 1}))
	r := &Reconciler{Client: c, Kind: k8s.KindPipeline, Jobs: JobSettings{Image: "ldp:test"}}
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "orders"}})
	if err != nil || res.RequeueAfter <= 0 || conflicts != 1 {
		t.Fatalf("Reconcile after a conflict: %+v, %v (%d status writes), want a quiet requeue", res, err, conflicts)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], `"level"=1`) || !strings.Contains(logged[0], "the object has been modified") {
		t.Errorf("logged %q, want one debug line with the conflict", logged)
	}
}

// TestCRDSchemaIsClean: kubectl explain shows no internal name of the CUE schema (a
// "#NonEmpty is ..." leaked), and a string the schema says must not be empty has minLength,
// so the API server refuses "" at kubectl apply.
func TestCRDSchemaIsClean(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	internal := regexp.MustCompile(`(^|[^A-Za-z0-9_])#[A-Z][A-Za-z0-9_]*`)
	for _, c := range crds {
		root := c.Spec.Versions[0].Schema.OpenAPIV3Schema
		var walk func(path string, s *apiextv1.JSONSchemaProps)
		walk = func(path string, s *apiextv1.JSONSchemaProps) {
			if m := internal.FindString(s.Description); m != "" {
				t.Errorf("%s %s: its description names %q: %s", c.Spec.Names.Kind, path, strings.TrimSpace(m), s.Description)
			}
			for k, p := range s.Properties {
				walk(path+"."+k, &p)
			}
			if s.Items != nil && s.Items.Schema != nil {
				walk(path+"[]", s.Items.Schema)
			}
			if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				walk(path+"{}", s.AdditionalProperties.Schema)
			}
		}
		walk("", root)
		at := func(path string) *apiextv1.JSONSchemaProps {
			s := root
			for _, k := range strings.Split(path, ".") {
				p, ok := s.Properties[k]
				if !ok {
					t.Fatalf("%s: no %s in the CRD", c.Spec.Names.Kind, path)
				}
				s = &p
			}
			return s
		}
		nonEmpty := []string{"spec.metadata.schedule"}
		if c.Spec.Names.Kind == k8s.KindPipeline {
			nonEmpty = append(nonEmpty, "spec.metadata.source.path", "spec.metadata.target.catalog.uri")
		}
		for _, path := range nonEmpty {
			if s := at(path); s.MinLength == nil || *s.MinLength < 1 {
				t.Errorf("%s %s: no minLength, so the API server takes \"\"", c.Spec.Names.Kind, path)
			}
		}
	}
}

// TestJobCarriesTheTemplate: a Job's pod runs with the object's jobTemplate (resources,
// placement, identity, env, mounts), and by default as non-root on a read-only root file
// system with a writable /tmp.
func TestJobCarriesTheTemplate(t *testing.T) {
	p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}}
	files := &SpecFiles{Main: "orders.json", Files: map[string][]byte{"orders.json": []byte("{}")}}
	set := JobSettings{Image: "ldp:test", ServiceAccount: "ldp-jobs"}
	pod := buildJob(p, files, "cm", "w", 1, set).Spec.Template
	c := pod.Spec.Containers[0]
	if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("the pod's default securityContext %+v is not non-root", sc)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation {
		t.Errorf("the container's default securityContext %+v", sc)
	}
	if len(c.VolumeMounts) != 2 || c.VolumeMounts[1].MountPath != "/tmp" || pod.Spec.ServiceAccountName != "ldp-jobs" {
		t.Errorf("default mounts %+v, service account %q", c.VolumeMounts, pod.Spec.ServiceAccountName)
	}
	if len(c.Env) == 0 || c.Env[0].Name != "HOME" || c.Env[0].Value != "/tmp" {
		t.Errorf("env %+v: HOME must be the writable /tmp on a read-only root", c.Env)
	}

	p.Spec.JobTemplate = &k8s.JobTemplate{
		Labels: map[string]string{"team": "shop", LabelObject: "not-ours"}, ServiceAccountName: "shop-loader",
		NodeSelector: map[string]string{"pool": "batch"},
		Tolerations:  []corev1.Toleration{{Key: "batch", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Resources:    &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
		Env:          []corev1.EnvVar{{Name: "TZ", Value: "UTC"}},
		Volumes:      []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
	}
	pod = buildJob(p, files, "cm", "w", 1, set).Spec.Template
	c = pod.Spec.Containers[0]
	if pod.Labels["team"] != "shop" || pod.Labels[LabelObject] != "orders" || pod.Spec.ServiceAccountName != "shop-loader" ||
		pod.Spec.NodeSelector["pool"] != "batch" || len(pod.Spec.Tolerations) != 1 || c.Resources.Limits.Memory().String() != "4Gi" {
		t.Errorf("the template's settings are not on the pod: labels %v, account %q, nodeSelector %v, tolerations %v, resources %v",
			pod.Labels, pod.Spec.ServiceAccountName, pod.Spec.NodeSelector, pod.Spec.Tolerations, c.Resources)
	}
	if len(c.Env) != 2 || c.Env[1].Name != "TZ" || len(c.VolumeMounts) != 3 || c.VolumeMounts[2].MountPath != "/data" || len(pod.Spec.Volumes) != 3 || c.Image != "ldp:test" {
		t.Errorf("env %v, mounts %v, volumes %d, image %s", c.Env, c.VolumeMounts, len(pod.Spec.Volumes), c.Image)
	}
	if sc := c.SecurityContext; sc == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("a template without a securityContext loses the default")
	}
}

// TestImageOfPod: without --image, the Jobs run the controller's own pod's image, so the image
// is set in one place (kustomize images:).
func TestImageOfPod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ldp-controller-7d9f", Namespace: "ldp-system"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "sidecar", Image: "proxy:1"}, {Name: "manager", Image: "ghcr.io/you/ldp:0.2.0"}}}}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(pod).Build()
	ctx := context.Background()
	if img, err := ImageOfPod(ctx, c, "ldp-system", "ldp-controller-7d9f"); err != nil || img != "ghcr.io/you/ldp:0.2.0" {
		t.Errorf("ImageOfPod: %q, %v; want the manager container's image", img, err)
	}
	if _, err := ImageOfPod(ctx, c, "ldp-system", ""); err == nil || !strings.Contains(err.Error(), "POD_NAME is not set") {
		t.Errorf("without POD_NAME: %v", err)
	}
	if _, err := ImageOfPod(ctx, c, "ldp-system", "gone"); err == nil || !strings.Contains(err.Error(), "read the image of pod ldp-system/gone") {
		t.Errorf("a pod that is not there: %v", err)
	}
}

// TestAttemptsOutliveJobs: a window's attempts are remembered in the object's status, so a
// window blocked at its last attempt stays blocked once its Jobs are deleted (a TTL), instead
// of running again from attempt 1; and a Job being deleted is no running attempt.
func TestAttemptsOutliveJobs(t *testing.T) {
	dir := t.TempDir()
	md := `{"window": {"size": "day", "column": "ts"}, "retries": {"max_attempts": 2},
	  "source": {"format": "CSV", "path": "` + dir + `/in.csv"},
	  "target": {"name": "t", "format": "ICEBERG", "catalog": {"identifier": "lake", "warehouse_path": "` + dir + `/wh"}}}`
	w := "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z"
	objs := []client.Object{
		&k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "blocked", Namespace: "shop", Annotations: map[string]string{AnnotBackfill: "2026-08-01/2026-08-02"}},
			Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(md)}}},
		&k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "deleting", Namespace: "shop", Annotations: map[string]string{AnnotBackfill: "2026-08-01/2026-08-02"}},
			Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(md)}}},
	}
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).WithStatusSubresource(&k8s.Pipeline{}).Build()
	now := time.Date(2026, 8, 4, 12, 0, 0, 0, time.UTC)
	r := &Reconciler{Client: c, Kind: k8s.KindPipeline, Jobs: JobSettings{Image: "ldp:test"}, Now: func() time.Time { return now }, Rand: func() float64 { return 0 }}
	ctx := context.Background()
	pass := func(name string) {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	job := func(name string, attempt int) *batchv1.Job {
		t.Helper()
		var j batchv1.Job
		if err := c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: reconcile.JobName(k8s.KindPipeline, "shop", name, w, attempt)}, &j); err != nil {
			t.Fatalf("%s: no Job for attempt %d: %v", name, attempt, err)
		}
		return &j
	}
	jobs := func(name string) []batchv1.Job {
		var l batchv1.JobList
		c.List(ctx, &l, client.MatchingLabels{LabelObject: name})
		return l.Items
	}
	block := func(j *batchv1.Job) {
		t.Helper()
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)),
			Reason: batchv1.JobReasonPodFailurePolicy, Message: "Container ldp for pod shop/x failed with exit code 3 matching FailJob rule at index 0"}}
		if err := c.Status().Update(ctx, j); err != nil {
			t.Fatal(err)
		}
	}

	pass("blocked")
	block(job("blocked", 1))
	pass("blocked")
	block(job("blocked", 2))
	pass("blocked")
	for _, j := range jobs("blocked") {
		if err := c.Delete(ctx, &j); err != nil {
			t.Fatal(err)
		}
	}
	pass("blocked")
	if js := jobs("blocked"); len(js) != 0 {
		t.Errorf("once its Jobs were deleted the blocked window got a Job again: %s (attempt %s)", js[0].Name, js[0].Labels[LabelAttempt])
	}
	var p k8s.Pipeline
	c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: "blocked"}, &p)
	if a := p.Status.Attempts; len(a) != 1 || a[0].Window != w || a[0].Attempt != 2 || a[0].Outcome != "blocked" || a[0].Job != reconcile.JobName(k8s.KindPipeline, "shop", "blocked", w, 2) {
		t.Errorf("status.attempts %+v, want %s blocked at attempt 2", a, w)
	}
	if p.Status.Windows["blocked"] != 1 || !hasCondition(p.Status, k8s.ConditionReady, metav1.ConditionFalse) {
		t.Errorf("status %+v, want the window blocked", p.Status)
	}

	// A running attempt's Job is being deleted (its deletionTimestamp set, a finalizer holds
	// it): the attempt is over, and the next one runs.
	pass("deleting")
	first := job("deleting", 1)
	first.Finalizers = []string{"ldp.test/linger"}
	if err := c.Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	now = time.Now().Add(time.Minute) // the API server dates the deletion by its own clock
	pass("deleting")
	if second := job("deleting", 2); second.Labels[LabelAttempt] != "2" {
		t.Errorf("attempt 2's Job is labelled %v", second.Labels)
	}
}

// TestBlockedIsTheFailurePolicysVerdict: a Job failed by its pod failure policy (whose one
// FailJob rule is ldp's exit code 3) is blocked, whatever its message says; any other failure
// is a failure.
func TestBlockedIsTheFailurePolicysVerdict(t *testing.T) {
	obj := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop"}}
	j := buildJob(obj, &SpecFiles{Main: "p.json"}, "cm", "a/b", 1, JobSettings{})
	rules := j.Spec.PodFailurePolicy.Rules
	if len(rules) != 1 || rules[0].Action != batchv1.PodFailurePolicyActionFailJob || rules[0].OnExitCodes == nil ||
		len(rules[0].OnExitCodes.Values) != 1 || rules[0].OnExitCodes.Values[0] != ExitDataGate {
		t.Fatalf("the pod failure policy %+v: its one FailJob rule must be exit code %d", rules, ExitDataGate)
	}
	for reason, want := range map[string]reconcile.JobPhase{
		batchv1.JobReasonPodFailurePolicy:     reconcile.JobBlocked,
		batchv1.JobReasonBackoffLimitExceeded: reconcile.JobFailed,
		batchv1.JobReasonDeadlineExceeded:     reconcile.JobFailed,
	} {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason,
			Message: "Pod shop/x-pod has condition DisruptionTarget matching FailJob rule at index 0"}}
		if rec, ok := recordOf(j); !ok || rec.Phase != want {
			t.Errorf("a Job failed with reason %s is %s, want %s", reason, rec.Phase, want)
		}
	}
}

// TestStatusIsPatched: the status is a merge patch on the status subresource, so a pass whose
// object another writer changed after it was read (a label, ldp backfill --cluster's
// annotation) still writes its status, and leaves the other write as it is.
func TestStatusIsPatched(t *testing.T) {
	p := &k8s.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "orders", Namespace: "shop", Finalizers: []string{Finalizer}},
		Spec: k8s.Spec{Metadata: apiextv1.JSON{Raw: []byte(`{"schedule": "5 0 * * *"}`)}}} // invalid: no source, no target
	bumped := false
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(p).WithStatusSubresource(&k8s.Pipeline{}).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, o, opts...); err != nil || bumped {
				return err
			}
			bumped = true
			other := o.DeepCopyObject().(client.Object)
			other.SetLabels(map[string]string{"team": "shop"})
			return c.Update(ctx, other)
		}}).Build()
	r := &Reconciler{Client: c, Kind: k8s.KindPipeline, Jobs: JobSettings{Image: "ldp:test"}}
	key := types.NamespacedName{Namespace: "shop", Name: "orders"}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	var got k8s.Pipeline
	if err := c.Get(context.Background(), key, &got); err != nil {
		t.Fatal(err)
	}
	if !bumped || !hasCondition(got.Status, k8s.ConditionStalled, metav1.ConditionTrue) || got.Labels["team"] != "shop" {
		t.Errorf("after one pass: labels %v, conditions %+v; want the status written beside the other writer's label", got.Labels, got.Status.Conditions)
	}
}
