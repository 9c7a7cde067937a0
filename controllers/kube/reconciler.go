package kube

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ldp-dev/ldp/apis/k8s"
	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/reconcile"
)

// Reconciler reconciles the objects of one kind: it plans each one's desired windows with
// controllers.Reconciler (a dry run, as ldp diff does) against the keys on main of its shared
// catalog, and runs each window that is not done as a Job, one attempt a Job.
type Reconciler struct {
	Client   client.Client
	Kind     string
	Jobs     JobSettings
	Recorder events.EventRecorder
	// Home is the controller's own namespace, whose Secrets (the Deployment's envFrom) hold
	// the credentials it plans with.
	Home string
	// Now and Rand are the clock and the jitter's random source (seams for tests).
	Now  func() time.Time
	Rand func() float64
}

// Reconcile is one pass over one object. A conflict (409: the object changed since the cache
// read it, as when ldp backfill --cluster adds a range or the other replica wrote first) is
// routine: the pass runs again at once on the newer object, logged at debug level, not as
// controller-runtime's "Reconciler error".
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.pass(ctx, req)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("the object changed during the pass; reconciling it again", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// conflictRetry is how soon a pass that met a conflict runs again: the cache has the newer
// object within moments.
const conflictRetry = 200 * time.Millisecond

func (r *Reconciler) pass(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.finalize(ctx, obj)
	}
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := r.Client.Update(ctx, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	now := r.now()
	st := obj.GetStatus().DeepCopy()
	st.ObservedGeneration = obj.GetGeneration()
	result, err := r.reconcileWindows(ctx, obj, st, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, obj, st); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

func (r *Reconciler) newObject() k8s.Object {
	if r.Kind == k8s.KindWorkflow {
		return &k8s.Workflow{}
	}
	return &k8s.Pipeline{}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// reconcileWindows does the work of a pass and fills st in; an error is retried with backoff.
// It runs in sub-steps, Flux's way (load, plan, then the Jobs), each of which fills st in and
// may end the pass.
func (r *Reconciler) reconcileWindows(ctx context.Context, obj k8s.Object, st *k8s.Status, now time.Time) (ctrl.Result, error) {
	spec, res, err := r.load(ctx, obj, st)
	if spec == nil || err != nil {
		return res, err
	}
	files, sc := spec.files, spec.sc
	if obj.GetSpec().Suspend {
		r.conditions(st, obj, 0)
		return ctrl.Result{}, nil
	}
	if sc.WF.Schedule == "" && obj.GetAnnotations()[AnnotBackfill] == "" {
		// A Pipeline a Workflow runs as a task: nothing of its own is due.
		st.Windows, st.NextFire = nil, ""
		msg := "no schedule: it runs as a Workflow's task, or for the range of its " + AnnotBackfill + " annotation"
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonNothingIsDue, msg)
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionTrue, k8s.ReasonNothingIsDue, msg)
		return ctrl.Result{}, nil
	}
	plans, ranges, ok := r.plan(ctx, obj, st, sc, now)
	if !ok {
		return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
	}

	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(obj.GetNamespace()), client.MatchingLabels(labelsOf(obj))); err != nil {
		return ctrl.Result{}, err
	}
	var records []reconcile.JobRecord
	active := map[string]*batchv1.Job{}
	for i := range jobs.Items {
		j := &jobs.Items[i]
		rec, ok := recordOf(j)
		if !ok {
			continue
		}
		records = append(records, rec)
		r.report(ctx, obj, j, rec)
		if rec.Phase == reconcile.JobActive {
			active[j.Name] = j
		}
	}
	stuck, err := r.podsThatCannotStart(ctx, obj, active)
	if err != nil {
		return ctrl.Result{}, err
	}
	memory, retry := memoryOf(st.Attempts), obj.GetAnnotations()[AnnotRetry]
	records, recheck := reconcile.Recall(records, memory, retry, now, lostAfter)
	policy := controllers.PolicyOf(sc.WF.Retries, nil)
	attempts := policy.MaxAttempts
	if attempts < 3 && sc.WF.Retries == nil {
		attempts = 3 // a Job's process may die with its node: try a window thrice unless told
	}
	jp := reconcile.JobPolicy{MaxAttempts: attempts, MaxConcurrent: int(obj.GetSpec().MaxConcurrentWindows),
		Wait: func(n int) time.Duration { return policy.Wait(n, r.random()) }}
	decisions := reconcile.DecideJobs(plans, records, jp, now)
	requeue := time.Duration(0)
	if st.NextFire != "" {
		if t, err := time.Parse(time.RFC3339, st.NextFire); err == nil && t.After(now) {
			requeue = t.Sub(now)
		}
	}
	created, waiting := 0, 0
	if !obj.GetSpec().Suspend {
		var cm string
		for _, d := range decisions {
			if !d.At.IsZero() {
				waiting++
				if wait := d.At.Sub(now); requeue == 0 || wait < requeue {
					requeue = wait
				}
			}
			if !d.Create {
				continue
			}
			if cm == "" {
				c := specConfigMap(obj, files)
				if err := controllerutil.SetControllerReference(obj, c, r.Client.Scheme()); err != nil {
					return ctrl.Result{}, err
				}
				if err := r.Client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
					return ctrl.Result{}, err
				}
				cm = c.Name
			}
			set := r.Jobs
			if !keyed(d.Plan) {
				// No key vouches for a task of this window: its Job's success is the only
				// record that it is done, so the Job is kept.
				set.TTLAfterFinished = 0
			}
			job := buildJob(obj, files, cm, d.Plan.Start+"/"+d.Plan.End, d.Attempt, set)
			if err := controllerutil.SetControllerReference(obj, job, r.Client.Scheme()); err != nil {
				return ctrl.Result{}, err
			}
			// Create-if-absent is the lease: another controller that made this attempt's Job
			// first has it, and this one moves on.
			switch err := r.Client.Create(ctx, job); {
			case err == nil:
				jobAttempts.WithLabelValues(obj.Kind(), obj.GetNamespace(), obj.GetName()).Inc()
			case !apierrors.IsAlreadyExists(err):
				return ctrl.Result{}, err
			}
			created++
		}
	}
	keep, forgotten := reconcile.Remember(plans, decisions, records, memory, retry, now, k8s.MaxRememberedWindows)
	r.remember(st, obj, keep, forgotten)
	if recheck > 0 && (requeue == 0 || recheck < requeue) {
		requeue = recheck
	}
	st.Windows = reconcile.CountStates(plans, decisions)
	for _, d := range decisions {
		if d.Create {
			st.Windows[string(d.State)]--
			st.Windows[string(v1.StateRunning)]++
		}
	}
	for k, v := range st.Windows {
		if v == 0 {
			delete(st.Windows, k)
		}
	}
	st.LastPublishedWindow = reconcile.LastDone(plans, decisions)
	r.conditions(st, obj, waiting)
	if len(stuck) > 0 {
		r.stalled(st, obj, k8s.ReasonPodCannotStart, strings.Join(stuck, "; "))
	}
	setWindowGauges(obj, st.Windows)
	if err := r.drainBackfill(ctx, obj, ranges, decisions); err != nil {
		if !apierrors.IsConflict(err) {
			return ctrl.Result{}, err
		}
		requeue = time.Second // ldp backfill --cluster added a range meanwhile: plan it
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// credentialWords are in the errors of a catalog or object store that refused or missed the
// credentials: PostgreSQL's, the AWS SDK's, a REST catalog's, ldp's own for a *_env unset.
var credentialWords = []string{"password authentication failed", "no password supplied", "is not set: export it",
	"accessdenied", "invalidaccesskeyid", "signaturedoesnotmatch", "no valid credential", "failed to retrieve credentials",
	"unauthorized", "forbidden", "401", "403"}

// planHint is a failed plan's message. The controller plans in its own process, with its own
// environment; the Jobs run with the Secrets of the object's namespace. A credentials error
// while planning says where the controller's must be.
func (r *Reconciler) planHint(obj k8s.Object, err error) string {
	msg := err.Error()
	lower := strings.ToLower(msg)
	if !slices.ContainsFunc(credentialWords, func(w string) bool { return strings.Contains(lower, w) }) {
		return msg
	}
	var secrets []string
	for _, e := range r.Jobs.EnvFrom {
		if e.SecretRef != nil {
			secrets = append(secrets, e.SecretRef.Name)
		}
	}
	home := r.Home
	if home == "" {
		home = "ldp-system"
	}
	name := "ldp-catalog"
	if len(secrets) > 0 {
		name = strings.Join(secrets, ", ")
	}
	return fmt.Sprintf("%s. ldp controller plans in its own pod, with its own environment, not the Jobs': put the catalog's credentials in the Secret %s of namespace %s too (its Deployment reads it with envFrom, then restart it: kubectl -n %s rollout restart deployment ldp-controller); the Jobs read theirs from the Secret %s of namespace %s (docs/kubernetes.md, Secrets)",
		strings.TrimRight(msg, "."), name, home, home, name, obj.GetNamespace())
}

// conditions folds the pass into Ready and Reconciling.
func (r *Reconciler) conditions(st *k8s.Status, obj k8s.Object, waiting int) {
	counts := st.Windows
	total := int32(0)
	for _, n := range counts {
		total += n
	}
	summary := summarize(counts)
	count := func(s v1.WindowState) int32 { return counts[string(s)] }
	outcome := reconcile.FoldCounts(counts)
	switch {
	case obj.GetSpec().Suspend:
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonSuspended, "suspended: no new Jobs; "+summary)
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonSuspended, "suspended")
	case count(v1.StateRunning) > 0 || count(v1.StateMissing) > 0 || count(v1.StatePartial) > 0 || waiting > 0:
		reason := k8s.ReasonRunning
		if count(v1.StateRunning) == 0 {
			reason = k8s.ReasonWaitingRetry
		}
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionTrue, reason, summary)
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonProgressing, summary)
	case outcome == v1.Failed:
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonFailed, summary)
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonFailed, summary+": its attempts are spent (status.attempts); fix the cause, then set a new "+AnnotRetry+" annotation to run them again")
	case outcome == v1.Blocked:
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonBlocked, summary)
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonBlocked, summary+": a data gate held them back (status.attempts); fix the data, then set a new "+AnnotRetry+" annotation to run them again")
	case total == 0:
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonNothingIsDue, "no window is due yet")
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionTrue, k8s.ReasonNothingIsDue, "no window is due yet")
	default:
		r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, k8s.ReasonSucceeded, summary)
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionTrue, k8s.ReasonSucceeded, summary)
	}
}

// summarize writes counts as "5 published, 1 running", sorted by state.
func summarize(counts map[string]int32) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	if len(parts) == 0 {
		return "no windows"
	}
	return strings.Join(parts, ", ")
}

func (r *Reconciler) stalled(st *k8s.Status, obj k8s.Object, reason, msg string) {
	r.setCondition(st, obj, k8s.ConditionStalled, metav1.ConditionTrue, reason, msg)
	r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, reason, msg)
	r.setCondition(st, obj, k8s.ConditionReconciling, metav1.ConditionFalse, reason, "stalled until the object changes")
}

func (r *Reconciler) setCondition(st *k8s.Status, obj k8s.Object, typ string, status metav1.ConditionStatus, reason, msg string) {
	if len(msg) > 32000 {
		msg = msg[:32000]
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: obj.GetGeneration()})
}

// writeStatus writes the pass's status as a merge patch on the status subresource: only the
// fields that changed, and no resourceVersion to conflict on, since the leader is the status's
// one writer (a spec changed meanwhile makes a pass of its own).
func (r *Reconciler) writeStatus(ctx context.Context, obj k8s.Object, st *k8s.Status) error {
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	*obj.GetStatus() = *st
	return r.Client.Status().Patch(ctx, obj, patch)
}

func (r *Reconciler) random() float64 {
	if r.Rand != nil {
		return r.Rand()
	}
	return rand.Float64()
}

// specFiles reads the object and, for a Workflow, the Pipelines it names; missing are the
// names that are not there.
func (r *Reconciler) specFiles(ctx context.Context, obj k8s.Object) (*SpecFiles, []string, error) {
	pipelines := map[string]*k8s.Pipeline{}
	var missing []string
	if wf, ok := obj.(*k8s.Workflow); ok {
		for _, name := range Refs(wf) {
			var p k8s.Pipeline
			err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, &p)
			switch {
			case apierrors.IsNotFound(err):
				missing = append(missing, name)
			case err != nil:
				return nil, nil, err
			default:
				pipelines[name] = &p
			}
		}
	}
	files, err := SpecFilesOf(obj, pipelines)
	return files, missing, err
}

// report turns a Job that has finished into an Event on the object, once (the Job is marked).
func (r *Reconciler) report(ctx context.Context, obj k8s.Object, j *batchv1.Job, rec reconcile.JobRecord) {
	if rec.Phase == reconcile.JobActive || j.Annotations[AnnotReported] != "" || r.Recorder == nil {
		return
	}
	switch rec.Phase {
	case reconcile.JobSucceeded:
		r.Recorder.Eventf(obj, j, corev1.EventTypeNormal, "Published", "RunWindow", "window %s published (attempt %d, Job %s)", rec.Window, rec.Attempt, j.Name)
	case reconcile.JobBlocked:
		dataGateBlocks.WithLabelValues(obj.Kind(), obj.GetNamespace(), obj.GetName()).Inc()
		r.Recorder.Eventf(obj, j, corev1.EventTypeWarning, "BlockedByDataGate", "RunWindow", "window %s held back by a data gate (attempt %d, Job %s): nothing was written", rec.Window, rec.Attempt, j.Name)
	default:
		r.Recorder.Eventf(obj, j, corev1.EventTypeWarning, "Failed", "RunWindow", "window %s failed (attempt %d, Job %s): see kubectl logs job/%s", rec.Window, rec.Attempt, j.Name, j.Name)
	}
	patch := client.MergeFrom(j.DeepCopy())
	if j.Annotations == nil {
		j.Annotations = map[string]string{}
	}
	j.Annotations[AnnotReported] = string(rec.Phase)
	_ = r.Client.Patch(ctx, j, patch) // a lost mark means one more event, never a lost window
}

// finalize stops an object's Jobs (and their pods) and lets it go; its tables stay as they are.
func (r *Reconciler) finalize(ctx context.Context, obj k8s.Object) error {
	if !controllerutil.ContainsFinalizer(obj, Finalizer) {
		return nil
	}
	bg := metav1.DeletePropagationBackground
	if err := r.Client.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(obj.GetNamespace()), client.MatchingLabels(labelsOf(obj)),
		client.PropagationPolicy(bg)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := r.Client.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(obj.GetNamespace()), client.MatchingLabels(labelsOf(obj))); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	forgetMetrics(obj)
	controllerutil.RemoveFinalizer(obj, Finalizer)
	return r.Client.Update(ctx, obj)
}

// keyed says whether every task of a window has a key on main to vouch that it is done.
func keyed(p reconcile.WindowPlan) bool {
	for _, t := range p.Tasks {
		if t.Key == "" {
			return false
		}
	}
	return true
}

// backfillPlans plans each range an object's backfill annotation asks for, range by range.
func (r *Reconciler) backfillPlans(ctx context.Context, planner *controllers.Reconciler, obj k8s.Object, sc controllers.Scheduled, now time.Time) ([][]reconcile.WindowPlan, error) {
	ranges, err := backfillRanges(obj.GetAnnotations()[AnnotBackfill])
	if err != nil {
		return nil, err
	}
	var out [][]reconcile.WindowPlan
	for _, rg := range ranges {
		res, err := planner.Reconcile(ctx, controllers.Request{Object: sc, From: rg[0], To: rg[1], Now: now, DryRun: true})
		if err != nil {
			return nil, fmt.Errorf("annotation %s, range %s/%s: %w", AnnotBackfill, rg[0], rg[1], err)
		}
		out = append(out, res.Windows)
	}
	return out, nil
}

// drainBackfill removes from the backfill annotation the ranges whose windows are all done,
// so that it lists what is still asked for. The patch carries the resourceVersion read: a
// range ldp backfill --cluster added meanwhile makes it a conflict, and the next pass drains.
func (r *Reconciler) drainBackfill(ctx context.Context, obj k8s.Object, ranges [][]reconcile.WindowPlan, decisions []reconcile.JobDecision) error {
	if len(ranges) == 0 {
		return nil
	}
	published := map[string]bool{}
	for _, d := range decisions {
		if d.State == v1.StatePublished {
			published[d.Plan.Start+"/"+d.Plan.End] = true
		}
	}
	asked, _ := backfillRanges(obj.GetAnnotations()[AnnotBackfill])
	var keep []string
	for i, plans := range ranges {
		done := true
		for _, p := range plans {
			if p.Action != v1.ActionSkip && !published[p.Start+"/"+p.End] {
				done = false
			}
		}
		if !done {
			keep = append(keep, asked[i][0]+"/"+asked[i][1])
		}
	}
	if len(keep) == len(asked) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	ann := obj.GetAnnotations()
	if len(keep) == 0 {
		delete(ann, AnnotBackfill)
	} else {
		ann[AnnotBackfill] = strings.Join(keep, ",")
	}
	obj.SetAnnotations(ann)
	return r.Client.Patch(ctx, obj, patch)
}

// loaded is an object's spec as a pass plans it: its files, and the object loaded from them.
type loaded struct {
	files *SpecFiles
	sc    controllers.Scheduled
}

// load is a pass's first step: the object's spec files (a Workflow's with the Pipelines it
// names), validated as ldp validate does and loaded from memory, as the files a Job runs. It
// is nil when the object is Stalled for them (st says why, the result when to look again).
func (r *Reconciler) load(ctx context.Context, obj k8s.Object, st *k8s.Status) (*loaded, ctrl.Result, error) {
	files, missing, err := r.specFiles(ctx, obj)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("the tasks name Pipelines that do not exist in namespace %s: %s", obj.GetNamespace(), strings.Join(missing, ", "))
		r.stalled(st, obj, k8s.ReasonInvalidSpec, msg)
		return nil, ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	sc := controllers.LoadObject(files.FS(), files.Main)
	if len(sc.Problems) > 0 {
		var lines []string
		for _, p := range sc.Problems {
			lines = append(lines, p.String())
		}
		r.stalled(st, obj, k8s.ReasonInvalidSpec, strings.Join(lines, "; "))
		return nil, ctrl.Result{}, nil // not retried: the object has to change
	}
	apimeta.RemoveStatusCondition(&st.Conditions, k8s.ConditionStalled)
	return &loaded{files: files, sc: sc}, ctrl.Result{}, nil
}

// plan is a pass's second step: the desired windows of the schedule (as ldp diff plans them)
// and of each range the backfill annotation asks for, merged, and the schedule's next fire and
// missed windows in st. Not ok when the plan failed (st says why). One observation serves
// them all, and the schedule's windows are planned once, with its status.
func (r *Reconciler) plan(ctx context.Context, obj k8s.Object, st *k8s.Status, sc controllers.Scheduled, now time.Time) (plans []reconcile.WindowPlan, ranges [][]reconcile.WindowPlan, ok bool) {
	observer := new(controllers.Observer)
	defer observer.Close()
	planner := (&controllers.Reconciler{Runner: &controllers.Runner{Log: io.Discard}}).Sharing(observer)
	if sc.WF.Schedule != "" {
		status, err := observer.StatusOf(ctx, sc, now, 1000)
		if err != nil {
			r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonPlanFailed, r.planHint(obj, fmt.Errorf("%s: %w", sc.Path, err)))
			return nil, nil, false
		}
		plans = status.Plan
		st.NextFire = ""
		if !status.NextFire.IsZero() {
			st.NextFire = status.NextFire.UTC().Format(time.RFC3339)
		}
		st.Missed, st.Backfill = nil, ""
		for _, m := range status.Missed {
			st.Missed = append(st.Missed, m.Start+"/"+m.End)
		}
		if n := len(status.Missed); n > 0 {
			st.Backfill = fmt.Sprintf("ldp backfill --cluster %s/%s -n %s --from %s --to %s", strings.ToLower(obj.Kind()), obj.GetName(), obj.GetNamespace(), status.Missed[0].Start, status.Missed[n-1].End)
		}
	}
	ranges, err := r.backfillPlans(ctx, planner, obj, sc, now)
	if err != nil {
		r.setCondition(st, obj, k8s.ConditionReady, metav1.ConditionFalse, k8s.ReasonPlanFailed, r.planHint(obj, err))
		return nil, nil, false
	}
	for _, extra := range ranges {
		plans = controllers.MergePlans(plans, extra)
	}
	return plans, ranges, true
}
