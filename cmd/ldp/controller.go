package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// controllerOptions are ldp controller's.
type controllerOptions struct {
	namespace, leaderNamespace string
	namespaces                 []string
	leaderElection             bool
	image, serviceAccount      string
	envSecrets, envConfigMaps  []string
	ttl, timeout               time.Duration
	metricsAddr, probeAddr     string
	metricsSecure              bool
	metricsCertDir             string
	webhookPort                int
	webhookCertDir             string
}

func (o *controllerOptions) Validate(cmd *cobra.Command, _ []string) error {
	if o.image == "" && os.Getenv("POD_NAME") == "" {
		return usageError(cmd, "--image is required outside a pod (in one, with POD_NAME set, the Jobs run the controller's own image): the ldp image the Jobs run, such as ghcr.io/you/ldp:0.2.0")
	}
	return nil
}

// Run runs the manager (kube_full.go), or, in the slim build, ldp-kube (kube_slim.go).
func (o *controllerOptions) Run(ctx context.Context, s *streams) error {
	return runController(ctx, s, o)
}

func orAll(namespaces []string) string {
	if len(namespaces) == 0 {
		return "all"
	}
	return strings.Join(namespaces, ",")
}

func newControllerCmd(s *streams) *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run ldp on Kubernetes: reconcile Pipeline and Workflow objects into one Job per window",
		Long: `Watch the Pipeline and Workflow objects (group ldp.dev, version v1; install config/crd) and,
for each, plan its desired windows as ldp diff does, against the keys on main of its shared
catalog, and run each window that is not done as a batch/v1 Job: ldp run (or ldp workflow
run) with --window, the run id every attempt of the window shares, and --attempt. A Job's
name is a hash of the object, the window and the attempt, so the API server's
create-if-absent keeps two controllers from starting the same attempt; a failed Job is
followed by the next attempt of the same run, after a full-jitter wait. Status is written as
Flux does (Ready, Reconciling, Stalled), with Events for each published, blocked or failed
window. Several replicas elect one leader.

It reaches the API server through KUBECONFIG, ~/.kube/config or the pod's service account.
docs/kubernetes.md tells how to install it.`,
		Example: `  ldp controller --image ghcr.io/you/ldp:0.2.0 --env-secret ldp-catalog
  ldp controller --image ldp:dev --namespaces shop,analytics --leader-elect=false --metrics-secure=false --metrics-bind-address 127.0.0.1:8080`,
		Args: cobra.NoArgs,
		RunE: runVerb(o, s),
	}
	f := cmd.Flags()
	f.StringVar(&o.image, "image", os.Getenv("LDP_IMAGE"), "the image the Jobs run (default $LDP_IMAGE, else the image of the controller's own pod, $POD_NAME)")
	f.StringSliceVar(&o.namespaces, "namespaces", nil, "reconcile the objects of these namespaces only, comma-separated (default: all); Roles there suffice (config/namespaced)")
	f.StringVar(&o.namespace, "namespace", "", "one namespace to reconcile the objects of")
	_ = f.MarkDeprecated("namespace", "use --namespaces")
	f.BoolVar(&o.leaderElection, "leader-elect", true, "elect one active manager among several replicas")
	f.StringVar(&o.leaderNamespace, "leader-election-namespace", "", "where the election's Lease lives (default: $POD_NAMESPACE, the controller's own, else the first of --namespaces)")
	f.StringVar(&o.serviceAccount, "job-service-account", "", "the service account the Jobs' pods run as")
	f.StringArrayVar(&o.envSecrets, "env-secret", nil, "a Secret whose keys become the Jobs' environment (token_env, credential_env, AWS keys, PGPASSWORD); repeatable")
	f.StringArrayVar(&o.envConfigMaps, "env-configmap", nil, "a ConfigMap whose keys become the Jobs' environment; repeatable")
	f.DurationVar(&o.ttl, "job-ttl", 24*time.Hour, "remove a finished Job after this long (0 keeps them)")
	f.DurationVar(&o.timeout, "job-timeout", 6*time.Hour, "a Job's deadline (activeDeadlineSeconds) when its object's spec.timeoutSeconds is not set (0: none)")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "serve controller-runtime's and ldp's metrics (ldp_windows, ldp_job_attempts_total, ldp_data_gate_blocks_total) here (0: off)")
	f.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve the metrics over HTTPS to a token the API server accepts with get on /metrics (the ClusterRole ldp-metrics-reader); false: plain HTTP, on a 127.0.0.1 address only")
	f.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "the folder of the metrics' tls.crt and tls.key (default: a self-signed certificate)")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", "0", "serve /healthz and /readyz here (0: off)")
	f.IntVar(&o.webhookPort, "webhook-port", 0, "serve the validating admission webhook (ldp validate's checks at kubectl apply; config/webhook) on this port (0: off)")
	f.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "the folder of the webhook's tls.crt and tls.key (cert-manager's Secret, mounted)")
	return cmd
}
