package kube

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// LeaderElectionID is the Lease the managers of one cluster elect their leader with.
const LeaderElectionID = "ldp-controller.ldp.dev"

// ManagerOptions are ldp controller's.
type ManagerOptions struct {
	// Config reaches the API server; nil reads KUBECONFIG, ~/.kube/config or the pod's account.
	Config *rest.Config
	// Namespaces limit the manager to these namespaces (none: all of them): its cache lists
	// and watches only there, so it reconciles, and writes Jobs, ConfigMaps, status and
	// Events, only there, and needs Roles there instead of a ClusterRole (config/namespaced).
	Namespaces []string
	// LeaderElection keeps one manager active among several; LeaderElectionNamespace is
	// where its Lease lives (the pod's namespace inside a cluster).
	LeaderElection          bool
	LeaderElectionNamespace string
	// LeaseDuration and RetryPeriod tune the election (controller-runtime's defaults when 0).
	LeaseDuration, RetryPeriod time.Duration
	MetricsAddr, ProbeAddr     string
	// MetricsSecure serves the metrics over HTTPS, to a client the API server authenticates
	// (TokenReview) and authorizes (SubjectAccessReview of get on /metrics: the ClusterRole
	// ldp-metrics-reader); the certificate is the tls.crt and tls.key of MetricsCertDir, else
	// a self-signed one. Without it the metrics are plain HTTP, which anyone who reaches the
	// port reads: MetricsAddr must then be a loopback address.
	MetricsSecure  bool
	MetricsCertDir string
	// WebhookPort serves the validating admission webhook (0: none) on WebhookHost, with the
	// tls.crt and tls.key of WebhookCertDir (cert-manager's Secret, mounted).
	WebhookPort                 int
	WebhookHost, WebhookCertDir string
	Jobs                        JobSettings
	// Home is the controller's own namespace (where its Secret of credentials is); the
	// messages that name it say ldp-system when it is not known.
	Home string
	// PodName is the controller's own pod (in Home): when Jobs.Image is not set, the Jobs run
	// the image this pod runs, so a kustomize images: entry sets both at once.
	PodName string
	// Now and Rand are seams for tests.
	Now  func() time.Time
	Rand func() float64
}

// Scheme is the scheme ldp controller's client speaks: Kubernetes' kinds and ldp's.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = k8s.AddToScheme(s)
	return s
}

// RunManager runs the controller of Pipelines and Workflows until ctx ends.
func RunManager(ctx context.Context, o ManagerOptions) error {
	log.SetLogger(logr.FromSlogHandler(slog.Default().Handler()))
	if err := checkMetricsAddr(o.MetricsAddr, o.MetricsSecure); err != nil {
		return err
	}
	cfg := o.Config
	if cfg == nil {
		var err error
		if cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig(); err != nil {
			return fmt.Errorf("reach the API server: %w (set KUBECONFIG, or run in a pod with a service account)", err)
		}
	}
	if o.Jobs.Image == "" {
		c, err := client.New(cfg, client.Options{Scheme: Scheme()})
		if err != nil {
			return err
		}
		if o.Jobs.Image, err = ImageOfPod(ctx, c, o.Home, o.PodName); err != nil {
			return fmt.Errorf("the image the Jobs run: --image is not set, and %w", err)
		}
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	if o.ProbeAddr == "" {
		o.ProbeAddr = "0"
	}
	mo := ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// The manager exits when ctx ends, so the next leader need not wait out the lease.
		LeaderElectionReleaseOnCancel: true,
	}
	if o.LeaseDuration > 0 {
		renew := o.LeaseDuration * 2 / 3
		mo.LeaseDuration, mo.RenewDeadline = &o.LeaseDuration, &renew
	}
	if o.RetryPeriod > 0 {
		mo.RetryPeriod = &o.RetryPeriod
	}
	// Only the pods of ldp's Jobs are watched (to tell one that cannot start), not every pod.
	ours, err := labels.Parse(LabelObject)
	if err != nil {
		return err
	}
	mo.Cache = cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: ours}}}
	if len(o.Namespaces) > 0 {
		mo.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.Namespaces {
			mo.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if o.WebhookPort > 0 {
		mo.WebhookServer = webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir})
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return err
	}
	if o.WebhookPort > 0 {
		// Every replica serves it, the leader or not: admission must answer while the lease moves.
		mgr.GetWebhookServer().Register(ValidatePipelinePath, &webhook.Admission{Handler: Validator{Kind: k8s.KindPipeline}})
		mgr.GetWebhookServer().Register(ValidateWorkflowPath, &webhook.Admission{Handler: Validator{Kind: k8s.KindWorkflow}})
	}
	if o.ProbeAddr != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		// Ready once the caches it reconciles from have synced (a replica that waits for the
		// lease is ready too: it takes over at once).
		err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
			ctx, cancel := context.WithTimeout(req.Context(), time.Second)
			defer cancel()
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				return fmt.Errorf("the caches have not synced")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, kind := range []string{k8s.KindPipeline, k8s.KindWorkflow} {
		r := &Reconciler{Client: mgr.GetClient(), Kind: kind, Jobs: o.Jobs, Recorder: mgr.GetEventRecorder("ldp-controller"), Home: o.Home, Now: o.Now, Rand: o.Rand}
		b := ctrl.NewControllerManagedBy(mgr).Named("ldp-" + kind).For(r.newObject()).Owns(&batchv1.Job{}).Owns(&corev1.ConfigMap{}).
			// Several managers in one process (a test's two replicas) register the same names.
			WithOptions(controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: ptr(true)})
		// A Job's pod that cannot start changes nothing of the Job: the pod itself is watched.
		b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podOwner(kind)))
		if kind == k8s.KindWorkflow {
			// A Workflow runs the Pipelines it names: one of them changing changes its Jobs.
			b = b.Watches(&k8s.Pipeline{}, handler.EnqueueRequestsFromMapFunc(workflowsNaming(mgr.GetClient())))
		}
		if err := b.Complete(r); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}

// metricsOptions serve the metrics as o asks: authenticated, authorized and over HTTPS, or
// plain on a loopback address.
func metricsOptions(o ManagerOptions) metricsserver.Options {
	mo := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		mo.SecureServing, mo.CertDir = true, o.MetricsCertDir
		mo.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return mo
}

// checkMetricsAddr refuses plain-HTTP metrics anywhere but on a loopback address: they are
// served to whoever reaches the port, with no token asked.
func checkMetricsAddr(addr string, secure bool) error {
	if secure || addr == "" || addr == "0" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("the metrics address %q: %w (use HOST:PORT, such as 127.0.0.1:8080)", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("the metrics address %q serves plain HTTP, with no token asked, beyond this machine: serve them securely (--metrics-secure, the default), or on 127.0.0.1 (--metrics-bind-address 127.0.0.1:%s)", addr, port)
}

// ImageOfPod is the image a pod's manager container runs (its first container's, if none is
// named manager): the controller's own, which its Jobs run too.
func ImageOfPod(ctx context.Context, c client.Reader, namespace, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("POD_NAME is not set to read the controller's own image from (set --image, or POD_NAME from metadata.name)")
	}
	var pod corev1.Pod
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &pod); err != nil {
		return "", fmt.Errorf("read the image of pod %s/%s: %w", namespace, name, err)
	}
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == "manager" {
			return ctr.Image, nil
		}
	}
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("pod %s/%s has no container to read the image of", namespace, name)
	}
	return pod.Spec.Containers[0].Image, nil
}

// workflowsNaming maps a Pipeline to the Workflows of its namespace whose tasks name it.
func workflowsNaming(c client.Client) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var wfs k8s.WorkflowList
		if err := c.List(ctx, &wfs, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range wfs.Items {
			if slices.Contains(Refs(&wfs.Items[i]), o.GetName()) {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: wfs.Items[i].Name}})
			}
		}
		return out
	}
}

// podOwner maps a pod of one of ldp's Jobs to the object of kind that the Job runs.
func podOwner(kind string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		if l[LabelKind] != kind || l[LabelObject] == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: l[LabelObject]}}}
	}
}
