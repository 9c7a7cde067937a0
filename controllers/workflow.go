package controllers

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/robfig/cron/v3"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/pipeline"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/internal/window"
	"github.com/ldp-dev/ldp/reconcile"
)

// Object is what controllers reconciles: a loaded workflow, with its spec, the dataset configs
// its tasks name, and where its events go (a dataset config is a workflow of one task). It is
// not v1.Workflow, the spec as written: this is that spec resolved and ready to run.
type Object struct {
	Name     string
	File     string
	Schedule string
	Window   window.Spec
	// Retries is the workflow's policy; a task's own keys override it key by key.
	Retries   *v1.Retries
	Tasks     []v1.Task
	Pipelines map[string]*v1.Pipeline
	Ledger    string
	// Catchup and Start are a workflow's: with catchup, a tick runs the window of every fire
	// since start.
	Catchup bool
	Start   time.Time
	// End, when set, ends the schedule: no window ending after it is expected.
	End time.Time
	// Env is the environment the object runs in (docs/environments.md): each task publishes
	// into that environment's branch of its table and reads Iceberg tables from it where it
	// has written them; its keys are observed on the branch, and its runs in the ledger are
	// the environment's, apart from main's. "" is main. It is --env, or the metadata.env of
	// the dataset configs the object runs.
	Env string
	// Upstreams are the dataset configs whose windows overlapping a window of the object must
	// be published before the window runs (metadata.upstream, tasks[].upstream), each once.
	Upstreams []UpstreamObject

	// cron and cronErr are Schedule parsed, once, when the object is loaded (Cron reads them).
	cron    *cron.SpecSchedule
	cronErr error
}

// Cron is the object's schedule, parsed when it was loaded; an object built by hand has its
// schedule parsed at each call. The error is the schedule's parse error (an object with no
// schedule has one too).
func (w *Object) Cron() (*cron.SpecSchedule, error) {
	if w.cron == nil && w.cronErr == nil {
		return cronx.Parse(w.Schedule)
	}
	return w.cron, w.cronErr
}

// parsed is w with its schedule parsed.
func (w *Object) parsed() *Object {
	w.cron, w.cronErr = cronx.Parse(w.Schedule)
	return w
}

// LoadWorkflow validates a workflow file (or a dataset config) and everything it names.
func LoadWorkflow(path string) (*Object, error) { return loadWorkflow(specs.OS, path, nil) }

// loadWorkflow is LoadWorkflow of the file path of fsys and the files it names there, of the
// file's bytes when data is not nil (discovery has read them already).
func loadWorkflow(fsys fs.FS, path string, data []byte) (*Object, error) {
	obj, err := specs.LoadFS(fsys, path, data)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *v1.Workflow:
		wf := &Object{Name: o.Identifier, File: path, Schedule: o.Metadata.Schedule, Retries: o.Metadata.Retries,
			Tasks: o.Tasks, Pipelines: map[string]*v1.Pipeline{}, Ledger: ledger.PathFor(path)}
		if wf.Window, err = window.SpecOf(o.Metadata.Window); err != nil {
			return nil, err
		}
		wf.Catchup = o.Metadata.Catchup
		if o.Metadata.Start != "" {
			if wf.Start, err = window.ParseInstant(o.Metadata.Start, wf.Window.Location); err != nil {
				return nil, &ldperr.ConfigError{File: path, Msg: "metadata.start", Err: err}
			}
		}
		if o.Metadata.End != "" {
			if wf.End, err = window.ParseInstant(o.Metadata.End, wf.Window.Location); err != nil {
				return nil, &ldperr.ConfigError{File: path, Msg: "metadata.end", Err: err}
			}
		}
		for _, t := range o.Tasks {
			l, ok := tasks.Lookup(t.Kind()).(tasks.Loader)
			if !ok {
				continue
			}
			p, named, err := l.Load(fsys, o, path, t)
			if err != nil {
				return nil, err
			}
			if p == nil {
				continue
			}
			wf.Pipelines[t.ID] = p
			if e := p.Metadata.Env; e != "" {
				if wf.Env != "" && e != wf.Env {
					return nil, ldperr.Configf(path, "task %s publishes into environment %s (its metadata.env) and another task into %s: the tasks of a workflow run in one environment", t.ID, e, wf.Env)
				}
				wf.Env = e
			}
			// A window of the workflow is finished when every load's late rows are in.
			if ps, err := window.SpecOf(p.Metadata.Window); named && err == nil && ps.Delay > wf.Window.Delay {
				wf.Window.Delay = ps.Delay
			}
		}
		// A window of the workflow waits for its tasks' upstreams, and for those its dataset
		// configs name themselves: a config waits for its upstream however it is run.
		for _, t := range o.Tasks {
			if wf.Upstreams, err = addUpstreams(wf.Upstreams, filepath.Dir(path), t.Upstream); err != nil {
				return nil, err
			}
			if p := wf.Pipelines[t.ID]; p != nil && t.Kind() == v1.TaskPipeline {
				if wf.Upstreams, err = addUpstreams(wf.Upstreams, p.BaseDir, p.Metadata.Upstream); err != nil {
					return nil, err
				}
			}
		}
		return wf.parsed(), nil
	case *v1.Pipeline:
		return OneTask(o)
	}
	return nil, ldperr.Configf(path, "is neither a Workflow nor a Pipeline")
}

// OneTask wraps a dataset config as a workflow of one task, with its schedule, window and
// retries.
func OneTask(p *v1.Pipeline) (*Object, error) {
	ws, err := window.SpecOf(p.Metadata.Window)
	if err != nil {
		return nil, err
	}
	sched, _ := pipeline.Schedule(p)
	o := &Object{Name: p.Identifier, File: p.Path, Schedule: sched, Window: ws, Retries: p.Metadata.Retries,
		Tasks: []v1.Task{{ID: p.Identifier, Pipeline: filepath.Base(p.Path)}}, Pipelines: map[string]*v1.Pipeline{p.Identifier: p},
		Ledger: ledger.PathFor(p.Path), Env: p.Metadata.Env}
	if o.Upstreams, err = addUpstreams(nil, p.BaseDir, p.Metadata.Upstream); err != nil {
		return nil, err
	}
	return o.parsed(), nil
}

// InEnv is the object run in environment env: a copy of w with Env set ("" is w itself). An
// object whose specs name another environment (metadata.env) is refused, as a run of them
// would be (pipeline.EnvOf).
func (w *Object) InEnv(env string) (*Object, error) {
	switch {
	case env == "" || env == w.Env:
		return w, nil
	case w.Env != "":
		return nil, ldperr.Configf(w.File, "runs in environment %s (metadata.env), not %s: drop --env, or change metadata.env", w.Env, env)
	}
	if err := lake.CheckEnvName(env); err != nil {
		return nil, err
	}
	c := *w
	c.Env = env
	return &c, nil
}

// UpstreamObject is a dataset config whose windows an object's windows wait for, as loaded.
type UpstreamObject struct {
	File     string
	Pipeline *v1.Pipeline
	Window   window.Spec
}

// addUpstreams appends the upstream dataset configs refs name (relative to base) to ups, each
// file once. The loader checked them already (internal/specs: a windowed Iceberg config, no
// cycle), so they are read here without checking them again.
func addUpstreams(ups []UpstreamObject, base string, refs []v1.Upstream) ([]UpstreamObject, error) {
	for _, ref := range refs {
		path := ref.Pipeline
		if !filepath.IsAbs(path) {
			path = filepath.Join(base, path)
		}
		if slices.ContainsFunc(ups, func(u UpstreamObject) bool { return u.File == path }) {
			continue
		}
		p, err := specs.ReadPipeline(path)
		if err != nil {
			return nil, err
		}
		ws, err := window.SpecOf(p.Metadata.Window)
		if err != nil {
			return nil, &ldperr.ConfigError{File: path, Msg: "metadata.window", Err: err}
		}
		if ws.Size == "" {
			return nil, ldperr.Configf(path, "is an upstream but has no window size: set its metadata.window.size")
		}
		ups = append(ups, UpstreamObject{File: path, Pipeline: p, Window: ws})
	}
	return ups, nil
}

// Planning is the upstream as planning sees it: its windows that overlap a window, and the key
// of each. The plan looks the keys up where the object's own are observed (Observer.Observe):
// on the table's main, or in an environment on its branch of the table where it has written
// it and on main where it has not.
func (u UpstreamObject) Planning() reconcile.Upstream {
	p, ws := u.Pipeline, u.Window
	return reconcile.Upstream{Name: p.Identifier, File: u.File, Size: ws.Size, Zone: ws.Location.String(), Target: p.TargetIdentity(),
		Key: func(w v1.LogicalWindow) string { return p.IdempotencyKey(w) },
		Windows: func(w v1.LogicalWindow) []v1.LogicalWindow {
			// The size was checked when the upstream was loaded; an empty window overlaps none.
			out, _ := window.Overlapping(w, ws.Size, ws.Location)
			return out
		}}
}

// spec is task t as its kind sees it.
func (w *Object) spec(t v1.Task) tasks.Spec {
	return tasks.Spec{Task: t, Pipeline: w.Pipelines[t.ID], File: w.File}
}

// vouch is what vouches for task t's work: its kind says; a kind this ldp has not
// registered only its last run (it fails when it runs).
func (w *Object) vouch(t v1.Task) reconcile.Evidence {
	if k := tasks.Lookup(t.Kind()); k != nil {
		return k.Evidence(w.spec(t))
	}
	return reconcile.ByLastRun
}

// TableOf is the pipeline whose Iceberg table task t publishes under a key (a load or a SQL
// model), or nil.
func (w *Object) TableOf(t v1.Task) *v1.Pipeline {
	if p := w.Pipelines[t.ID]; p != nil && p.IsIceberg() && w.vouch(t) == reconcile.ByKey {
		return p
	}
	return nil
}

// Planning is the workflow as planning sees it.
func (w *Object) Planning() reconcile.Object {
	obj := reconcile.Object{Name: w.Name, File: w.File, Delay: w.Window.Delay}
	for _, u := range w.Upstreams {
		obj.Upstreams = append(obj.Upstreams, u.Planning())
	}
	for _, t := range w.Tasks {
		rt := reconcile.Task{ID: t.ID, Evidence: w.vouch(t), DependsOn: t.DependsOn, MaxAttempts: w.TaskPolicy(t).MaxAttempts}
		if p := w.TableOf(t); p != nil {
			rt.Target = p.TargetIdentity()
			rt.Key = func(win v1.LogicalWindow) string { return p.IdempotencyKey(win) }
		}
		obj.Tasks = append(obj.Tasks, rt)
	}
	return obj
}

// TaskPlan is what the plan of a workflow shows of one task beyond its key, for window win:
// its kind's detail and warnings (nothing runs).
func (w *Object) TaskPlan(ctx context.Context, t v1.Task, win v1.LogicalWindow) (tasks.Plan, error) {
	k := tasks.Lookup(t.Kind())
	if k == nil {
		return tasks.Plan{}, nil
	}
	return k.Plan(ctx, w.spec(t), win)
}

// RenameTaskConfigs replaces, in a task as written, each dataset config path it names with
// ref(path), as its kind says where it names one (ldp export k8s names Pipeline objects).
func RenameTaskConfigs(task map[string]any, ref func(string) string) { tasks.RenameConfigs(task, ref) }

// Policy is how a task is tried again.
type Policy struct {
	MaxAttempts int
	Delay       time.Duration
	Backoff     float64
}

// PolicyOf merges a task's retries over the workflow's, key by key, over the defaults
// (1 attempt, 30 s, x2).
func PolicyOf(workflow, task *v1.Retries) Policy {
	p := Policy{MaxAttempts: 1, Delay: 30 * time.Second, Backoff: 2}
	for _, r := range []*v1.Retries{workflow, task} {
		if r == nil {
			continue
		}
		if r.MaxAttempts != nil {
			p.MaxAttempts = *r.MaxAttempts
		}
		if r.DelayS != nil {
			p.Delay = time.Duration(*r.DelayS * float64(time.Second))
		}
		if r.Backoff != nil {
			p.Backoff = *r.Backoff
		}
	}
	return p
}

// TaskPolicy is task t's retry policy: its own retries over the workflow's, or, when neither
// has any, those of the dataset config it runs. The runner tries a task by it, and the planner
// holds a window whose task spent it.
func (w *Object) TaskPolicy(t v1.Task) Policy {
	if p := w.Pipelines[t.ID]; p != nil && t.Retries == nil && w.Retries == nil {
		return PolicyOf(p.Metadata.Retries, nil)
	}
	return PolicyOf(w.Retries, t.Retries)
}

// MaxWait bounds one wait between attempts.
const MaxWait = 24 * time.Hour

// Wait is the full-jitter wait after attempt n (1-based): a random time from 0 to
// delay * backoff^(n-1), never more than a day. r01 is a random number in [0, 1).
func (p Policy) Wait(n int, r01 float64) time.Duration {
	limit := float64(p.Delay)
	for i := 1; i < n; i++ {
		limit *= p.Backoff
		if limit > float64(MaxWait) {
			break
		}
	}
	if limit > float64(MaxWait) {
		limit = float64(MaxWait)
	}
	return time.Duration(r01 * limit)
}

// OrderWarnings lists the tasks that read a table another task writes with no depends_on path
// between them: they may run in either order.
func OrderWarnings(w *Object) []string {
	writers := map[string]string{}
	for _, t := range w.Tasks {
		if p := w.TableOf(t); p != nil {
			writers[p.TargetIdentity()] = t.ID
		}
	}
	deps := map[string][]string{}
	for _, t := range w.Tasks {
		deps[t.ID] = t.DependsOn
	}
	var reaches func(from, to string, seen map[string]bool) bool
	reaches = func(from, to string, seen map[string]bool) bool {
		if from == to {
			return true
		}
		if seen[from] {
			return false
		}
		seen[from] = true
		for _, d := range deps[from] {
			if reaches(d, to, seen) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, t := range w.Tasks {
		var reads []string
		if k := tasks.Lookup(t.Kind()); k != nil {
			reads = k.Reads(w.spec(t))
		}
		for _, src := range reads {
			if writer, ok := writers[src]; ok && writer != t.ID && !reaches(t.ID, writer, map[string]bool{}) {
				out = append(out, fmt.Sprintf("task %s reads %s, which task %s writes, but does not depend on it: add %q to its depends_on", t.ID, src[len("iceberg:"):], writer, writer))
			}
		}
	}
	return out
}

// OrderedTask is a task of a workflow in run order, with the key it publishes under for a
// window ("" when no key vouches for it, or no window was given).
type OrderedTask struct {
	v1.Task
	Key string
}

// Kind is the kind of the file the object was read from: a dataset config is a workflow of
// one task, itself.
func (w *Object) Kind() string {
	if len(w.Tasks) == 1 && w.Pipelines[w.Tasks[0].ID] != nil && w.File == w.Pipelines[w.Tasks[0].ID].Path {
		return v1.KindPipeline
	}
	return v1.KindWorkflow
}

// RunOrder is the workflow's tasks in the order they run (reconcile's order).
func (w *Object) RunOrder(win v1.LogicalWindow) []OrderedTask {
	byID := map[string]v1.Task{}
	for _, t := range w.Tasks {
		byID[t.ID] = t
	}
	var out []OrderedTask
	for _, rt := range reconcile.Order(w.Planning().Tasks) {
		ot := OrderedTask{Task: byID[rt.ID]}
		if rt.Keyed() && !win.IsZero() {
			ot.Key = rt.Key(win)
		}
		out = append(out, ot)
	}
	return out
}
