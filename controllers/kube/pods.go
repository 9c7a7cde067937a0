package kube

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// cannotStart are the reasons a container waits on something the kubelet will not fix by
// itself: a Secret or ConfigMap that is not there, an image it cannot pull or name. A pod
// waiting for one of them would hold its window "running" until the Job's deadline.
var cannotStart = map[string]bool{
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"ErrImageNeverPull":          true,
	"InvalidImageName":           true,
}

// podsThatCannotStart finds the pods of the object's running Jobs that cannot start, reports
// each one's reason once as an Event (the Job is marked), and says what blocks them.
func (r *Reconciler) podsThatCannotStart(ctx context.Context, obj k8s.Object, active map[string]*batchv1.Job) ([]string, error) {
	if len(active) == 0 {
		return nil, nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabels(labelsOf(obj))); err != nil {
		return nil, err
	}
	var out []string
	for i := range pods.Items {
		pod := &pods.Items[i]
		j := active[jobOf(pod)]
		if j == nil || pod.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
			w := cs.State.Waiting
			if w == nil || !cannotStart[w.Reason] {
				continue
			}
			window := j.Annotations[AnnotWindow]
			out = append(out, fmt.Sprintf("window %s: pod %s cannot start: %s: %s (Job %s fails at its deadline and the next attempt runs; fix the cause, such as the Secret or the image, and the pod starts)",
				window, pod.Name, w.Reason, strings.TrimSpace(w.Message), j.Name))
			if j.Annotations[AnnotCannotStart] != w.Reason && r.Recorder != nil {
				r.Recorder.Eventf(obj, pod, corev1.EventTypeWarning, w.Reason, "StartPod", "window %s: pod %s of Job %s cannot start: %s", window, pod.Name, j.Name, w.Message)
				patch := client.MergeFrom(j.DeepCopy())
				if j.Annotations == nil {
					j.Annotations = map[string]string{}
				}
				j.Annotations[AnnotCannotStart] = w.Reason
				_ = r.Client.Patch(ctx, j, patch) // a lost mark means one more event
			}
			break
		}
	}
	return out, nil
}

// jobOf is the name of the Job that owns a pod.
func jobOf(pod *corev1.Pod) string {
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
		return ref.Name
	}
	return pod.Labels[batchv1.JobNameLabel]
}
