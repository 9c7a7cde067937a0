package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ldp-dev/ldp/apis/k8s"
	"github.com/ldp-dev/ldp/reconcile"
)

// Labels and annotations ldp controller puts on what it creates.
const (
	LabelKind     = "ldp.dev/kind"
	LabelObject   = "ldp.dev/object"
	LabelAttempt  = "ldp.dev/attempt"
	AnnotWindow   = "ldp.dev/window"
	AnnotRunID    = "ldp.dev/run-id"
	AnnotReported = "ldp.dev/reported"
	// AnnotCannotStart on a Job is the reason its pod could not start that was last reported.
	AnnotCannotStart = "ldp.dev/cannot-start"
	// Finalizer holds an object until its Jobs are stopped.
	Finalizer = "ldp.dev/jobs"
	// SpecMount is where a Job finds the object's spec files (a ConfigMap).
	SpecMount = "/etc/ldp/spec"
	// Container is the name of a Job's one container.
	Container = "ldp"
	// ExitDataGate is ldp's exit code when a data gate held a window back: the first rule of
	// every Job's pod failure policy, so a Job's status tells a blocked window from a failed one.
	ExitDataGate = 3
)

// JobSettings are how ldp controller's Jobs run: the image, the service account, where the
// *_env variables come from (Secrets and ConfigMaps), and how long a finished Job is kept.
type JobSettings struct {
	Image          string
	ServiceAccount string
	EnvFrom        []corev1.EnvFromSource
	// TTLAfterFinished removes a finished Job after this long (0: kept). A window's keys on
	// main, not its Job, say it is done; a workflow with a task no key vouches for keeps them.
	TTLAfterFinished time.Duration
	// Timeout is a Job's activeDeadlineSeconds when its object's spec sets none (0: none).
	Timeout time.Duration
}

// EnvFrom is a Job's environment from the keys of Secrets and ConfigMaps, by name.
func EnvFrom(secrets, configMaps []string) []corev1.EnvFromSource {
	var out []corev1.EnvFromSource
	for _, name := range secrets {
		out = append(out, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
	for _, name := range configMaps {
		out = append(out, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
	return out
}

// configMapName is the name of the ConfigMap holding an object's spec files at a version of
// its content, so a Job always reads the spec it was created for.
func configMapName(o k8s.Object, files *SpecFiles) string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(files.Files)) {
		h.Write([]byte(name + "\x00"))
		h.Write(files.Files[name])
	}
	return reconcile.JobName(o.Kind(), o.GetNamespace(), o.GetName()+"-spec", hex.EncodeToString(h.Sum(nil)), 0)
}

// specConfigMap holds the files a Job runs.
func specConfigMap(o k8s.Object, files *SpecFiles) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName(o, files), Namespace: o.GetNamespace(), Labels: labelsOf(o)}, Data: map[string]string{}}
	for name, b := range files.Files {
		cm.Data[name] = string(b)
	}
	return cm
}

func labelsOf(o k8s.Object) map[string]string {
	return map[string]string{LabelKind: o.Kind(), LabelObject: o.GetName()}
}

// buildJob is attempt's Job of window: ldp run (a Pipeline) or ldp workflow run (a Workflow)
// of the spec in the ConfigMap, with the window, the run id every attempt shares and the
// attempt, which fences the attempts before it. The Job itself never retries (backoffLimit
// 0): a failed Job is followed by the next attempt, a Job of its own.
func buildJob(o k8s.Object, files *SpecFiles, cm string, window string, attempt int, set JobSettings) *batchv1.Job {
	runID := reconcile.JobRunID(o.Kind(), o.GetNamespace(), o.GetName(), window)
	args := []string{"run"}
	if o.Kind() == k8s.KindWorkflow {
		args = []string{"workflow", "run"}
	}
	args = append(args, SpecMount+"/"+files.Main, "--window", window, "--run-id", runID, "--attempt", strconv.Itoa(attempt))
	labels := labelsOf(o)
	labels[LabelAttempt] = strconv.Itoa(attempt)
	var ttl *int32
	if set.TTLAfterFinished > 0 {
		s := int32(set.TTLAfterFinished.Seconds())
		ttl = &s
	}
	var deadline *int64
	if s := o.GetSpec().TimeoutSeconds; s > 0 {
		deadline = &s
	} else if set.Timeout > 0 {
		deadline = ptr(int64(set.Timeout.Seconds()))
	}
	backoff := int32(0)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: reconcile.JobName(o.Kind(), o.GetNamespace(), o.GetName(), window, attempt), Namespace: o.GetNamespace(),
			Labels: labels, Annotations: map[string]string{AnnotWindow: window, AnnotRunID: runID},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            &backoff,
			ActiveDeadlineSeconds:   deadline,
			TTLSecondsAfterFinished: ttl,
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					ContainerName: ptr(Container), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{ExitDataGate},
				},
			}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					ServiceAccountName: set.ServiceAccount,
					SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: Container, Image: set.Image, Command: []string{"ldp"}, Args: args, EnvFrom: set.EnvFrom,
						// Anything that writes under $HOME (DuckDB's home directory, caches)
						// writes to the pod's /tmp, not the read-only root.
						Env: []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
						SecurityContext: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true), AllowPrivilegeEscalation: ptr(false),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						// The root file system is read-only: DuckDB's spill files and ldp's
						// scratch go to /tmp, a volume of the pod's own.
						VolumeMounts: []corev1.VolumeMount{{Name: "spec", MountPath: SpecMount, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"}},
					}},
					Volumes: []corev1.Volume{{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: cm},
					}}}, {Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
	applyTemplate(&job.Spec.Template, o.GetSpec().JobTemplate)
	return job
}

// applyTemplate puts an object's pod settings on its Job's pod: ldp's labels, arguments and
// spec mount stay, a securityContext given replaces ldp's default, the rest is added.
func applyTemplate(pod *corev1.PodTemplateSpec, t *k8s.JobTemplate) {
	if t == nil {
		return
	}
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, pod.Labels) // ldp's labels find the pods: they win
	pod.Labels = labels
	if len(t.Annotations) > 0 {
		pod.Annotations = maps.Clone(t.Annotations)
	}
	ps, c := &pod.Spec, &pod.Spec.Containers[0]
	if t.ServiceAccountName != "" {
		ps.ServiceAccountName = t.ServiceAccountName
	}
	ps.NodeSelector, ps.Tolerations, ps.Affinity = maps.Clone(t.NodeSelector), slices.Clone(t.Tolerations), t.Affinity.DeepCopy()
	if t.SecurityContext != nil {
		ps.SecurityContext = t.SecurityContext.DeepCopy()
	}
	if t.ContainerSecurityContext != nil {
		c.SecurityContext = t.ContainerSecurityContext.DeepCopy()
	}
	if t.Resources != nil {
		c.Resources = *t.Resources.DeepCopy()
	}
	c.Env = append(c.Env, t.Env...)
	c.VolumeMounts = append(c.VolumeMounts, t.VolumeMounts...)
	ps.Volumes = append(ps.Volumes, t.Volumes...)
}

// recordOf is what reconcile needs to know of a Job.
func recordOf(j *batchv1.Job) (reconcile.JobRecord, bool) {
	window := j.Annotations[AnnotWindow]
	attempt, err := strconv.Atoi(j.Labels[LabelAttempt])
	if window == "" || err != nil {
		return reconcile.JobRecord{}, false
	}
	rec := reconcile.JobRecord{Window: window, Attempt: attempt, Phase: reconcile.JobActive, Started: j.CreationTimestamp.Time}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			rec.Phase, rec.Finished = reconcile.JobSucceeded, c.LastTransitionTime.Time
		case batchv1.JobFailed:
			rec.Phase, rec.Finished = reconcile.JobFailed, c.LastTransitionTime.Time
			// The pod failure policy's one FailJob rule is ldp's exit code ExitDataGate: a Job
			// that rule failed (the condition's reason, not its message) was held back.
			if c.Reason == batchv1.JobReasonPodFailurePolicy {
				rec.Phase = reconcile.JobBlocked
			}
		}
	}
	if rec.Phase != reconcile.JobActive && rec.Finished.IsZero() && j.Status.CompletionTime != nil {
		rec.Finished = j.Status.CompletionTime.Time
	}
	if rec.Phase == reconcile.JobActive && j.DeletionTimestamp != nil {
		// A Job being deleted with no outcome runs no attempt: its pod is being stopped. The
		// attempt failed, and the next one fences it.
		rec.Phase, rec.Finished = reconcile.JobFailed, j.DeletionTimestamp.Time
	}
	return rec, true
}
