package controllers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
	"github.com/ldp-dev/ldp/reconcile"
	"github.com/ldp-dev/ldp/schemas"
)

// fakeKind is a task kind a test registers: it counts its runs and keeps what it was given.
type fakeKind struct {
	runs []tasks.TaskContext
	last []string // what LastFingerprint said at each run
}

type fakeOutput struct {
	Count int    `json:"count"`
	Print string `json:"fingerprint"`
}

func (fakeOutput) Skipped() bool         { return false }
func (o fakeOutput) Fingerprint() string { return o.Print }

type fakePlan struct{}

func (fakePlan) Line() string { return "fake" }

func (*fakeKind) Evidence(tasks.Spec) reconcile.Evidence { return reconcile.ByLastRun }
func (*fakeKind) Reads(tasks.Spec) []string              { return nil }
func (*fakeKind) Plan(context.Context, tasks.Spec, v1.LogicalWindow) (tasks.Plan, error) {
	return tasks.Plan{Detail: fakePlan{}, Warnings: []string{"fake warning"}}, nil
}
func (k *fakeKind) Run(_ context.Context, tc tasks.TaskContext) (tasks.Output, error) {
	k.runs = append(k.runs, tc)
	k.last = append(k.last, tc.LastFingerprint())
	return fakeOutput{Count: len(k.runs), Print: "fp-1"}, nil
}

// TestARegisteredKindIsPlannedAndRun: a kind registered at the seam (here a fake in the place
// of maintain) is what validation, planning, the plan's detail and the runner use, by its name
// alone: its evidence decides the window's plan, its typed output is the task's detail, its
// fingerprint goes to the ledger and comes back to its next run.
func TestARegisteredKindIsPlannedAndRun(t *testing.T) {
	old := tasks.Lookup(v1.TaskMaintain)
	fake := &fakeKind{}
	tasks.Register(v1.TaskMaintain, fake)
	t.Cleanup(func() { tasks.Register(v1.TaskMaintain, old) })

	dir := t.TempDir()
	put(t, dir, "a.json", pipelineSpec("a"))
	put(t, dir, "wf.json", `{"kind": "Workflow", "identifier": "fake", "metadata": {"window": {"size": "day"}},
		"tasks": [{"id": "m", "maintain": {"config": "a.json"}}]}`)
	b, err := os.ReadFile(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res := schemas.Validate(b, "wf.json"); len(res.Problems) > 0 {
		t.Fatalf("the schema's kind list refuses the task: %v", res.Problems)
	}
	wf, err := LoadWorkflow(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := wf.Planning().Tasks[0].Evidence; ev != reconcile.ByLastRun {
		t.Fatalf("planning reads evidence %v, want the fake's ByLastRun", ev)
	}
	plan, err := wf.TaskPlan(context.Background(), wf.Tasks[0], aug1)
	if err != nil || plan.Detail == nil || plan.Detail.Line() != "fake" || len(plan.Warnings) != 1 {
		t.Fatalf("task plan %+v, %v: want the fake's", plan, err)
	}

	ctx := context.Background()
	obs, err := Observe(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	p := reconcile.Plan(wf.Planning(), []v1.LogicalWindow{aug1}, obs, reconcile.Options{})[0]
	if p.Action != v1.ActionRun {
		t.Fatalf("first plan %s/%s, want run", p.State, p.Action)
	}
	r := &Runner{}
	res := r.Run(ctx, wf, aug1, RunOptions{Plan: &p})
	if len(fake.runs) != 1 || res.Tasks[0].Status != v1.Succeeded {
		t.Fatalf("runs %d, status %s: the runner did not run the registered kind", len(fake.runs), res.Tasks[0].Status)
	}
	tc := fake.runs[0]
	if tc.Pipeline != wf.Pipelines["m"] || tc.Window != aug1 || tc.Ledger != wf.Ledger || tc.Workflow != "fake" || fake.last[0] != "" {
		t.Errorf("task context %+v, last fingerprint %q", tc.Spec, fake.last[0])
	}
	detail, _ := json.Marshal(res.Tasks[0].Detail)
	if string(detail) != `{"count":1,"fingerprint":"fp-1"}` {
		t.Errorf("detail %s, want the kind's own output", detail)
	}

	// Its evidence (its last run) now says the window is done: the plan skips it.
	obs, _ = Observe(ctx, wf)
	p = reconcile.Plan(wf.Planning(), []v1.LogicalWindow{aug1}, obs, reconcile.Options{})[0]
	if p.Action != v1.ActionSkip {
		t.Fatalf("second plan %s/%s, want skip", p.State, p.Action)
	}
	// Run again regardless: its fingerprint came back from the ledger.
	r.Run(ctx, wf, aug1, RunOptions{Replace: true})
	if len(fake.runs) != 2 || fake.last[1] != "fp-1" || !fake.runs[1].Replace {
		t.Errorf("runs %d, last fingerprints %q: want the ledger's fp-1 on the second run", len(fake.runs), fake.last)
	}
}

// TestAPublishDetailKeepsItsJSON: a load's detail is its kind's own output, and reads as it
// always has (ldp run --json, the page): status, key, snapshot id as a string, rows; a task the
// plan skipped says why.
func TestAPublishDetailKeepsItsJSON(t *testing.T) {
	_, wf := chainWorkflow(t, "")
	ctx := context.Background()
	r := &Runner{}
	res := r.Run(ctx, wf, aug1, RunOptions{})
	got, _ := json.Marshal(res.Tasks[0].Detail)
	if !regexp.MustCompile(`^\{"status":"published","idempotency_key":"[^"]+","snapshot_id":"[0-9]+","rows_written":1\}$`).Match(got) {
		t.Errorf("task %s detail %s", res.Tasks[0].ID, got)
	}
	obs, err := Observe(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	p := reconcile.Plan(wf.Planning(), []v1.LogicalWindow{aug1}, obs, reconcile.Options{})[0]
	res = r.Run(ctx, wf, aug1, RunOptions{Plan: &p})
	got, _ = json.Marshal(res.Tasks[0].Detail)
	if res.Tasks[0].Status != v1.Skipped || !regexp.MustCompile(`^\{"reason":"[^"]+"\}$`).Match(got) {
		t.Errorf("task %s %s, detail %s", res.Tasks[0].ID, res.Tasks[0].Status, got)
	}
}
