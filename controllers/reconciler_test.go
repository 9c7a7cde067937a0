package controllers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/specs"
)

// daysWorkflow writes a workflow of one daily pipeline task into a temp dir whose local
// (SQLite) catalog it publishes to, with a drop for each of days days from 2026-08-01 except
// the days in missing (those windows fail).
func daysWorkflow(t *testing.T, days int, missing ...int) (string, *Object) {
	t.Helper()
	dir := t.TempDir()
	put(t, dir, "a.json", pipelineSpec("a"))
	for d := 0; d < days; d++ {
		if !slices.Contains(missing, d) {
			put(t, dir, fmt.Sprintf("drops/a_2026-08-%02d.csv", d+1), fmt.Sprintf("id,v\n%d,1\n", d))
		}
	}
	put(t, dir, "wf.json", `{"kind": "Workflow", "identifier": "days", "metadata": {"window": {"size": "day"}}, "tasks": [
		{"id": "a", "pipeline": "a.json"}]}`)
	wf, err := LoadWorkflow(filepath.Join(dir, "wf.json"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, wf
}

// ends are the windows' fates as one word each: the run's status, or why it did not run.
func ends(runs []WindowRun) string {
	var out []string
	for _, w := range runs {
		if w.Result != nil {
			out = append(out, string(w.Result.Status))
			continue
		}
		out = append(out, string(w.NotRun))
	}
	return strings.Join(out, " ")
}

// TestWindowRunnerModes: one Reconcile of a range of four days, in each mode of the one window
// runner, against a real SQLite catalog. Each case says what became of every window, how
// many keys are on main after, and that OnWindow heard of every window in plan order.
func TestWindowRunnerModes(t *testing.T) {
	cases := []struct {
		name    string
		missing []int
		runs    WindowRuns
		fresh   bool
		want    string // what became of each window
		keys    int    // snapshots on main after
		due     int
		waiting int
	}{
		{"sequential runs every window", nil, WindowRuns{}, false, "succeeded succeeded succeeded succeeded", 4, 4, 0},
		{"sequential stops at Max; the rest wait", nil, WindowRuns{Max: 2}, false, "succeeded succeeded waiting waiting", 2, 4, 2},
		{"a failed window does not stop the others", []int{1}, WindowRuns{}, false, "succeeded failed succeeded succeeded", 3, 4, 0},
		{"StopOnFailure leaves the rest not run", []int{1}, WindowRuns{StopOnFailure: true}, true, "succeeded failed stopped stopped", 1, 4, 0},
		{"grouped publishes every window it can", []int{2}, WindowRuns{Mode: Grouped, Parallel: 2, Batch: 3}, true, "succeeded succeeded failed succeeded", 3, 4, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, wf := daysWorkflow(t, 4, c.missing...)
			var heard []int
			rc := &Reconciler{Runner: &Runner{Sleep: func(time.Duration) {}}}
			req := Request{Object: Scheduled{Path: wf.File, WF: wf}, From: "2026-08-01", To: "2026-08-05", Fresh: c.fresh, Run: c.runs,
				OnWindow: func(i int, _ WindowRun) { heard = append(heard, i) }}
			res, err := rc.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if got := ends(res.Runs); got != c.want {
				t.Errorf("windows ended %q, want %q", got, c.want)
			}
			if _, keys, _ := mainHistory(t, dir, "a"); len(keys) != c.keys {
				t.Errorf("%d keys on main, want %d", len(keys), c.keys)
			}
			if res.Due != c.due || res.Waiting != c.waiting {
				t.Errorf("due %d waiting %d, want %d and %d", res.Due, res.Waiting, c.due, c.waiting)
			}
			if !slices.Equal(heard, []int{0, 1, 2, 3}) {
				t.Errorf("OnWindow heard of windows %v, want every one in plan order", heard)
			}
			// Level-triggered: the same request again runs only what is not done.
			again, err := rc.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range again.Runs {
				if done := res.Runs[i].Result != nil && res.Runs[i].Result.Status == v1.Succeeded; done && w.NotRun != NotRunNotDue {
					t.Errorf("window %d was published and ran again: %s", i, ends(again.Runs[i:i+1]))
				}
			}
		})
	}
}

// TestLeasedNeedsASharedCatalog: the leased mode takes each window's lease in a PostgreSQL
// catalog; a workflow with none fails at its first window, saying how to tick instead, and
// runs nothing.
func TestLeasedNeedsASharedCatalog(t *testing.T) {
	_, wf := daysWorkflow(t, 2)
	rc := &Reconciler{Runner: &Runner{Leases: &LeaseOptions{Holder: "test", TTL: time.Minute}}}
	res, err := rc.Reconcile(context.Background(), Request{Object: Scheduled{Path: wf.File, WF: wf}, From: "2026-08-01", To: "2026-08-03", Run: WindowRuns{Mode: Leased}})
	if err == nil || !strings.Contains(err.Error(), "without one, tick without --leases") || !errors.Is(res.Err, err) {
		t.Fatalf("err %v (result's %v), want the shared-catalog config error in both", err, res.Err)
	}
	if got := ends(res.Runs); got != "failed" || len(res.Ran) != 0 || res.Outcome() != v1.Failed {
		t.Errorf("windows ended %q, ran %d, outcome %s: want the first refused and none run", got, len(res.Ran), res.Outcome())
	}
}

// TestFolderFansOut: a folder of a valid workflow and a broken one is a Reconcile of each, in
// discovery order: the broken one's problems come back in its result and do not stop the
// other's run; the fold of the two is failed, and Invalid names the broken file alone.
func TestFolderFansOut(t *testing.T) {
	dir, _ := daysWorkflow(t, 1)
	put(t, dir, "broken.json", `{"kind": "Workflow", "identifier": "broken", "tasks": [{"id": "x", "pipeline": "nowhere.json"}]}`)
	rc := &Reconciler{Runner: &Runner{}}
	f := Folder{Paths: []string{dir}, Each: Request{Window: "2026-08-01/2026-08-02"}}
	res, err := rc.ReconcileFolder(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range res.Objects {
		names = append(names, filepath.Base(o.File))
	}
	if !slices.Equal(names, []string{"broken.json", "wf.json"}) {
		t.Fatalf("objects %v, want broken.json and wf.json", names)
	}
	broken, good := res.Objects[0], res.Objects[1]
	if len(broken.Problems) == 0 || len(broken.Runs) != 0 {
		t.Errorf("broken.json: problems %v, runs %d: want problems and nothing run", broken.Problems, len(broken.Runs))
	}
	if len(good.Ran) != 1 || good.Ran[0].Status != v1.Succeeded || good.Due != 1 {
		t.Errorf("wf.json: ran %d, due %d: want its window run and published", len(good.Ran), good.Due)
	}
	var inv *specs.InvalidError
	if bad, ok := res.Invalid().(ObjectErrors); !ok || len(bad) != 1 || !errors.As(bad[0], &inv) || inv.Path != broken.File {
		t.Errorf("Invalid() = %v, want broken.json's problems alone", res.Invalid())
	}
	if res.Outcome() != v1.Failed {
		t.Errorf("outcome %s, want failed (an object could not be planned)", res.Outcome())
	}
	again, err := rc.ReconcileFolder(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if again.Pending() != 0 || len(again.Objects[1].Ran) != 0 {
		t.Errorf("the second fan-out has %d pending, ran %d: want nothing, the window is published", again.Pending(), len(again.Objects[1].Ran))
	}
}

// TestReconcileInEnv: a range reconciled in dev publishes on dev's branch only and is done in
// dev, not on main; a window that fails in dev is dev's failed run, not main's; the runs are
// recorded under dev in the ledger.
func TestReconcileInEnv(t *testing.T) {
	dir, wf := daysWorkflow(t, 3, 2)
	rc := &Reconciler{Runner: &Runner{Sleep: func(time.Duration) {}}}
	ctx := context.Background()
	req := Request{Object: Scheduled{Path: wf.File, WF: wf}, From: "2026-08-01", To: "2026-08-04", Env: "dev"}
	res, err := rc.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := ends(res.Runs); got != "succeeded succeeded failed" {
		t.Fatalf("windows in dev ended %q", got)
	}
	if res.WF.Env != "dev" || wf.Env != "" {
		t.Errorf("the reconciled object's env %q, the loaded one's %q: want dev and main", res.WF.Env, wf.Env)
	}
	if _, keys, _ := mainHistory(t, dir, "a"); len(keys) != 0 {
		t.Errorf("%d keys on main after a run in dev, want none", len(keys))
	}
	req.DryRun = true
	inDev, err := rc.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Env = ""
	onMain, err := rc.Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var dev, main []string
	for i := range inDev.Windows {
		dev = append(dev, string(inDev.Windows[i].State))
		main = append(main, string(onMain.Windows[i].State))
	}
	if strings.Join(dev, " ") != "published published failed" || strings.Join(main, " ") != "missing missing missing" {
		t.Errorf("states in dev %v, on main %v", dev, main)
	}
	events, _, err := ledger.Read(wf.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, e := range events {
		if e.Type == ledger.WorkflowStarted {
			started++
			if !strings.Contains(fmt.Sprint(e.Payload), "env:dev") {
				t.Errorf("workflow.started without env dev: %v", e.Payload)
			}
		}
	}
	if started != 3 {
		t.Errorf("%d workflow.started events, want 3", started)
	}
}
