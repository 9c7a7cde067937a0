// Package k8s holds ldp's Kubernetes resources, Pipeline and Workflow in the API group ldp.dev
// at version v1: the body of an ldp/v1 spec file as the object's spec, and the status ldp
// controller writes, as Flux writes it. It is a leaf: it knows nothing of how ldp runs.
package k8s

import (
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version of ldp's resources; a Kubernetes apiVersion needs a dotted group, so the
// spec files' ldp/v1 becomes ldp.dev/v1.
const (
	Group   = "ldp.dev"
	Version = "v1"
)

// GroupVersion is ldp.dev/v1.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// Kinds.
const (
	KindPipeline = "Pipeline"
	KindWorkflow = "Workflow"
)

// Condition types and reasons, Flux's: Ready says the object's windows are done, Reconciling
// that Jobs are running for it, Stalled that it cannot progress until it is changed.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"

	ReasonInvalidSpec  = "InvalidSpec"
	ReasonPlanFailed   = "PlanFailed"
	ReasonRunning      = "JobsRunning"
	ReasonFailed       = "WindowsFailed"
	ReasonBlocked      = "BlockedByDataGate"
	ReasonSuspended    = "Suspended"
	ReasonWaitingRetry = "WaitingForRetry"
	ReasonProgressing  = "Progressing"
	ReasonSucceeded    = "Succeeded"
	ReasonNothingIsDue = "NothingIsDue"
	// ReasonPodCannotStart: a window's pod is waiting on something only a person can fix (a
	// Secret or ConfigMap that is missing, an image that cannot be pulled).
	ReasonPodCannotStart = "PodCannotStart"
)

// Spec is an ldp/v1 spec file's body. Identifier is the ldp identifier the idempotency keys
// are made of (the object's name when empty: a Kubernetes name cannot hold an underscore, an
// identifier can). Metadata is the file's metadata, Tasks a Workflow's tasks, in which a task
// names a Pipeline object (pipeline, maintain.config, a sql input) where the file names a
// dataset config file.
type Spec struct {
	Identifier  string          `json:"identifier,omitempty"`
	Description string          `json:"description,omitempty"`
	Metadata    apiextv1.JSON   `json:"metadata"`
	Tasks       []apiextv1.JSON `json:"tasks,omitempty"`
	// Suspend stops new Jobs; running ones finish.
	Suspend bool `json:"suspend,omitempty"`
	// MaxConcurrentWindows bounds the Jobs running at once for the object (1 when 0).
	MaxConcurrentWindows int32 `json:"maxConcurrentWindows,omitempty"`
	// TimeoutSeconds bounds a window's Job (its activeDeadlineSeconds): a pod that cannot
	// start, or a run that hangs, fails the attempt instead of holding the window forever.
	// ldp controller's --job-timeout when 0.
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
	// JobTemplate is how the object's pods run, beside what ldp controller sets itself.
	JobTemplate *JobTemplate `json:"jobTemplate,omitempty"`
}

// JobTemplate holds the pod settings of an object's Jobs, in the fields of a pod spec (the
// Spark operator's shape): a platform team's resources, placement, identity and mounts. The
// image is not here: it is the controller's (--image), set once. A securityContext given
// replaces ldp's default (non-root, a read-only root file system, no privilege escalation,
// every capability dropped); the rest is added to ldp's own (labels, env, volumes).
type JobTemplate struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// ServiceAccountName replaces ldp controller's --job-service-account.
	ServiceAccountName string                       `json:"serviceAccountName,omitempty"`
	NodeSelector       map[string]string            `json:"nodeSelector,omitempty"`
	Tolerations        []corev1.Toleration          `json:"tolerations,omitempty"`
	Affinity           *corev1.Affinity             `json:"affinity,omitempty"`
	Resources          *corev1.ResourceRequirements `json:"resources,omitempty"`
	// SecurityContext is the pod's, ContainerSecurityContext the ldp container's.
	SecurityContext          *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	ContainerSecurityContext *corev1.SecurityContext    `json:"containerSecurityContext,omitempty"`
	Env                      []corev1.EnvVar            `json:"env,omitempty"`
	Volumes                  []corev1.Volume            `json:"volumes,omitempty"`
	VolumeMounts             []corev1.VolumeMount       `json:"volumeMounts,omitempty"`
}

// Status is what ldp controller found at its last reconcile.
type Status struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	// LastPublishedWindow is the latest window that is done, START/END in UTC.
	LastPublishedWindow string `json:"lastPublishedWindow,omitempty"`
	// Windows counts the desired windows by state (published, failed, blocked, partial,
	// missing, running).
	Windows map[string]int32 `json:"windows,omitempty"`
	// Missed are windows before the latest that catch-up would have run (catchup off), and
	// Backfill the command that fills them.
	Missed   []string `json:"missed,omitempty"`
	Backfill string   `json:"backfill,omitempty"`
	// NextFire is the schedule's next fire, RFC 3339 in UTC.
	NextFire string `json:"nextFire,omitempty"`
	// Attempts is ldp controller's memory of the windows that are not published: each one's
	// last attempt, its outcome and when the next may start. A finished Job is deleted after
	// --job-ttl; the attempts are counted here, never by the Jobs that still exist. At most
	// MaxRememberedWindows, the newest windows first.
	Attempts []WindowAttempts `json:"attempts,omitempty"`
	// ForgottenWindows counts, by the outcome of their last attempt, the windows dropped from
	// Attempts past its bound.
	ForgottenWindows map[string]int32 `json:"forgottenWindows,omitempty"`
}

// MaxRememberedWindows bounds status.attempts.
const MaxRememberedWindows = 100

// WindowAttempts is what ldp controller remembers of one window's attempts.
type WindowAttempts struct {
	// Window is START/END in UTC.
	Window string `json:"window"`
	// Attempt is the number of the window's last attempt.
	Attempt int32 `json:"attempt"`
	// Outcome is the last attempt's: running, failed or blocked.
	Outcome string `json:"outcome"`
	// Job is the last attempt's Job (it may be deleted already).
	Job      string       `json:"job,omitempty"`
	Started  *metav1.Time `json:"started,omitempty"`
	Finished *metav1.Time `json:"finished,omitempty"`
	// NextAttemptAt is when the next attempt may start, for a window with attempts left.
	NextAttemptAt *metav1.Time `json:"nextAttemptAt,omitempty"`
	// Retry is the ldp.dev/retry annotation the window's attempts were counted under, and
	// FirstAttempt the first of them: a new value gives a spent window its attempts again.
	Retry        string `json:"retry,omitempty"`
	FirstAttempt int32  `json:"firstAttempt,omitempty"`
}

// Pipeline is an ldp/v1 Pipeline (a dataset config) as a Kubernetes object.
type Pipeline struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// PipelineList is a list of Pipelines.
type PipelineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Pipeline `json:"items"`
}

// Workflow is an ldp/v1 Workflow as a Kubernetes object.
type Workflow struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec   `json:"spec"`
	Status            Status `json:"status,omitempty"`
}

// WorkflowList is a list of Workflows.
type WorkflowList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workflow `json:"items"`
}

// Object is what Pipeline and Workflow share, so one reconciler serves both.
type Object interface {
	metav1.Object
	runtime.Object
	GetSpec() *Spec
	GetStatus() *Status
	Kind() string
}

func (p *Pipeline) GetSpec() *Spec     { return &p.Spec }
func (p *Pipeline) GetStatus() *Status { return &p.Status }
func (p *Pipeline) Kind() string       { return KindPipeline }
func (w *Workflow) GetSpec() *Spec     { return &w.Spec }
func (w *Workflow) GetStatus() *Status { return &w.Status }
func (w *Workflow) Kind() string       { return KindWorkflow }

// AddToScheme registers the kinds with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Pipeline{}, &PipelineList{}, &Workflow{}, &WorkflowList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
