package kube

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// RequestBackfill asks ldp controller for the windows from..to of the cluster object ref
// (pipeline/NAME or workflow/NAME): it adds the range to the object's backfill annotation,
// after the ranges asked for before, which the controller turns into Jobs within the
// object's maxConcurrentWindows. Config nil reads KUBECONFIG; namespace "" is the kubeconfig
// context's.
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
	want := from + "/" + to
	// Another request may land between the read and the write: the patch carries the
	// resourceVersion read, so a lost race is a conflict, read again, never a range dropped.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
			return fmt.Errorf("%s %s/%s: %w", obj.Kind(), namespace, name, err)
		}
		patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotBackfill] = addRange(ann[AnnotBackfill], want)
		obj.SetAnnotations(ann)
		return c.Patch(ctx, obj, patch)
	})
	if err != nil {
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

// AnnotBackfill on an object asks for the windows of ranges, START/END as ldp backfill's
// --from and --to take them, comma-separated (2026-08-01/2026-08-05,2026-09-01/2026-09-03):
// their Jobs are created as the schedule's are, within the object's concurrency limit. The
// controller removes a range once all its windows are done; a done window never runs again.
const AnnotBackfill = "ldp.dev/backfill"

// backfillRanges are the ranges of a backfill annotation, in the order they were asked for.
func backfillRanges(v string) ([][2]string, error) {
	var out [][2]string
	for _, r := range strings.Split(v, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		from, to, ok := strings.Cut(r, "/")
		if !ok || from == "" {
			return nil, fmt.Errorf("annotation %s=%q: write START/END ranges, comma-separated, such as 2026-08-01/2026-09-01", AnnotBackfill, v)
		}
		out = append(out, [2]string{from, to})
	}
	return out, nil
}

// addRange appends r to the ranges of v unless v has it.
func addRange(v, r string) string {
	var keep []string
	for _, have := range strings.Split(v, ",") {
		if have = strings.TrimSpace(have); have == r {
			return v
		} else if have != "" {
			keep = append(keep, have)
		}
	}
	return strings.Join(append(keep, r), ",")
}
