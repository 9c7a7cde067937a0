//go:build !nokube

package main

// The verbs' effects that need Kubernetes (controllers/kube, client-go, controller-runtime),
// in the full build: go install ./cmd/ldp, bin/ldp-kube, the image. The slim bin/ldp that
// make build writes (-tags nokube) has kube_slim.go instead, which runs ldp-kube for them:
// the Kubernetes packages' inits and size are most of a full binary's start-up.

import (
	"cmp"
	"context"
	"fmt"
	"os"

	"github.com/ldp-dev/ldp/controllers/kube"
)

func runController(ctx context.Context, s *streams, o *controllerOptions) error {
	set := kube.JobSettings{Image: o.image, ServiceAccount: o.serviceAccount, TTLAfterFinished: o.ttl, Timeout: o.timeout,
		EnvFrom: kube.EnvFrom(o.envSecrets, o.envConfigMaps)}
	namespaces := o.namespaces
	if o.namespace != "" {
		namespaces = append(namespaces, o.namespace)
	}
	leaderNS := o.leaderNamespace
	if leaderNS == "" {
		leaderNS = os.Getenv("POD_NAMESPACE")
	}
	if leaderNS == "" && len(namespaces) > 0 {
		leaderNS = namespaces[0]
	}
	fmt.Fprintf(s.Err, "ldp controller: reconciling Pipelines and Workflows (namespaces %s, leader election %t)\n", orAll(namespaces), o.leaderElection)
	return kube.RunManager(ctx, kube.ManagerOptions{Namespaces: namespaces, LeaderElection: o.leaderElection, LeaderElectionNamespace: leaderNS,
		MetricsAddr: o.metricsAddr, MetricsSecure: o.metricsSecure, MetricsCertDir: o.metricsCertDir, ProbeAddr: o.probeAddr,
		WebhookPort: o.webhookPort, WebhookCertDir: o.webhookCertDir, Jobs: set, Home: cmp.Or(os.Getenv("POD_NAMESPACE"), leaderNS), PodName: os.Getenv("POD_NAME")})
}

func exportK8s(s *streams, o *exportK8sOptions) error {
	objs, err := kube.Export(o.paths, o.namespace)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("no workflow and no dataset config under %v to export", o.paths)
	}
	// A laptop's catalog is exported as written; the cluster's webhook refuses it, so say so now.
	for _, obj := range objs {
		for _, p := range kube.ClusterCatalogProblems(obj) {
			fmt.Fprintf(s.Err, "warning: %s %s: %s\n", obj.Kind(), obj.GetName(), p)
		}
	}
	return kube.WriteYAML(s.Out, objs)
}

func exportCRDs(s *streams) error {
	crds, err := kube.CRDs()
	if err != nil {
		return err
	}
	return kube.WriteYAML(s.Out, crds)
}

func requestClusterBackfill(ctx context.Context, s *streams, o *backfillOptions) error {
	msg, err := kube.RequestBackfill(ctx, nil, o.namespace, o.args[0], o.bo.From, o.bo.To)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.Out, msg)
	return nil
}
