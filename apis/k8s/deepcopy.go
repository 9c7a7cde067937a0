package k8s

import (
	"maps"
	"slices"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The deep copies runtime.Object asks for, by hand: the types are few and small.

func (in *Spec) DeepCopyInto(out *Spec) {
	*out = *in
	in.Metadata.DeepCopyInto(&out.Metadata)
	if in.Tasks != nil {
		out.Tasks = make([]apiextv1.JSON, len(in.Tasks))
		for i := range in.Tasks {
			in.Tasks[i].DeepCopyInto(&out.Tasks[i])
		}
	}
	if in.JobTemplate != nil {
		out.JobTemplate = new(JobTemplate)
		in.JobTemplate.DeepCopyInto(out.JobTemplate)
	}
}

func (in *JobTemplate) DeepCopyInto(out *JobTemplate) {
	*out = *in
	out.Labels, out.Annotations, out.NodeSelector = maps.Clone(in.Labels), maps.Clone(in.Annotations), maps.Clone(in.NodeSelector)
	out.Tolerations = nil
	for i := range in.Tolerations {
		out.Tolerations = append(out.Tolerations, *in.Tolerations[i].DeepCopy())
	}
	out.Affinity, out.Resources = in.Affinity.DeepCopy(), in.Resources.DeepCopy()
	out.SecurityContext, out.ContainerSecurityContext = in.SecurityContext.DeepCopy(), in.ContainerSecurityContext.DeepCopy()
	out.Env, out.Volumes, out.VolumeMounts = nil, nil, nil
	for i := range in.Env {
		out.Env = append(out.Env, *in.Env[i].DeepCopy())
	}
	for i := range in.Volumes {
		out.Volumes = append(out.Volumes, *in.Volumes[i].DeepCopy())
	}
	for i := range in.VolumeMounts {
		out.VolumeMounts = append(out.VolumeMounts, *in.VolumeMounts[i].DeepCopy())
	}
}

func (in *Status) DeepCopyInto(out *Status) {
	*out = *in
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	out.Windows = maps.Clone(in.Windows)
	out.Missed = slices.Clone(in.Missed)
	if in.Attempts != nil {
		out.Attempts = make([]WindowAttempts, len(in.Attempts))
		for i := range in.Attempts {
			in.Attempts[i].DeepCopyInto(&out.Attempts[i])
		}
	}
	out.ForgottenWindows = maps.Clone(in.ForgottenWindows)
}

func (in *WindowAttempts) DeepCopyInto(out *WindowAttempts) {
	*out = *in
	out.Started, out.Finished, out.NextAttemptAt = in.Started.DeepCopy(), in.Finished.DeepCopy(), in.NextAttemptAt.DeepCopy()
}

func (in *Pipeline) DeepCopyInto(out *Pipeline) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *Pipeline) DeepCopy() *Pipeline {
	if in == nil {
		return nil
	}
	out := new(Pipeline)
	in.DeepCopyInto(out)
	return out
}

func (in *Pipeline) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *PipelineList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(PipelineList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Pipeline, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func (in *Workflow) DeepCopyInto(out *Workflow) {
	*out = *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

func (in *Workflow) DeepCopy() *Workflow {
	if in == nil {
		return nil
	}
	out := new(Workflow)
	in.DeepCopyInto(out)
	return out
}

func (in *Workflow) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *WorkflowList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(WorkflowList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Workflow, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func (in *Status) DeepCopy() *Status {
	if in == nil {
		return nil
	}
	out := new(Status)
	in.DeepCopyInto(out)
	return out
}
