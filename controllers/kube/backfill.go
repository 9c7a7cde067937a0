package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// RequestBackfill asks ldp controller for the windows from..to of the cluster object ref
// (pipeline/NAME or workflow/NAME): it sets the object's backfill annotation, which the
// controller turns into Jobs within the object's maxConcurrentWindows. Config nil reads
// KUBECONFIG; namespace "" is the kubeconfig context's.
func RequestBackfill(ctx context.Context, cfg *rest.Config, namespace, ref, from, to string) (string, error) {
	kind, name, ok := strings.Cut(ref, "/")
	var obj k8s.Object
	switch strings.ToLower(strings.TrimSuffix(kind, "s")) {
	case "pipeline":
		obj = &k8s.Pipeline{}
	case "workflow":
		obj = &k8s.Workflow{}
	}
	if !ok || obj == nil || name == "" {
		return "", fmt.Errorf("%q: name the cluster object as pipeline/NAME or workflow/NAME", ref)
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil)
	if cfg == nil {
		var err error
		if cfg, err = loader.ClientConfig(); err != nil {
			return "", fmt.Errorf("reach the API server: %w (set KUBECONFIG)", err)
		}
	}
	if namespace == "" {
		namespace, _, _ = loader.Namespace()
		if namespace == "" {
			namespace = "default"
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return "", err
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		return "", fmt.Errorf("%s %s/%s: %w", obj.Kind(), namespace, name, err)
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotBackfill] = from + "/" + to
	obj.SetAnnotations(ann)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s/%s: the windows %s to %s are asked for; ldp controller runs them as Jobs (kubectl -n %s get %s %s -w)",
		strings.ToLower(obj.Kind()), namespace, name, from, orLast(to), namespace, strings.ToLower(obj.Kind()), name), nil
}

func orLast(to string) string {
	if to == "" {
		return "the last complete window"
	}
	return to
}
