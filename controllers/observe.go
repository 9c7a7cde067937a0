package controllers

import (
	"context"
	"errors"
	"sort"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/reconcile"
)

// Observe reads what is done for wf: the keys on main of each table its tasks publish to (one
// walk of each table's history for the whole plan) and, from the ledger, the last run of each
// window. Nothing is created: a table or catalog that does not exist holds no key.
func Observe(ctx context.Context, wf *Workflow) (reconcile.Observed, error) {
	obs := reconcile.Observed{Keys: map[string]map[string]bool{}, LastRuns: map[string]reconcile.LastRun{}}
	for _, t := range wf.Object().Tasks {
		if !t.Keyed() || obs.Keys[t.Target] != nil {
			continue
		}
		p := wf.Pipelines[t.ID]
		keys, err := KeysOnMain(ctx, p.Metadata.Target.Catalog, p.BaseDir, lake.RefOf(p.Metadata.Target))
		if err != nil {
			return obs, err
		}
		obs.Keys[t.Target] = keys
	}
	events, _, err := ledger.Read(wf.Ledger)
	if err != nil {
		return obs, err
	}
	obs.LastRuns = LastRuns(events, wf.Name)
	return obs, nil
}

// KeysOnMain walks a table's main branch once and returns its idempotency keys.
func KeysOnMain(ctx context.Context, c *v1.Catalog, base string, ref lake.Ref) (map[string]bool, error) {
	keys := map[string]bool{}
	cat, err := lake.OpenExisting(ctx, c, base)
	if err != nil || cat == nil {
		return keys, err
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, ref)
	var nf *lake.NotFoundError
	if errors.As(err, &nf) {
		return keys, nil
	}
	if err != nil {
		return nil, err
	}
	for s := tbl.CurrentSnapshot(); s != nil; {
		if k := s.Summary.Properties[lake.KeyProp]; k != "" {
			keys[k] = true
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return keys, nil
}

// LastRuns folds the workflow and task events of one workflow into the last run of each
// window. Several workflows (and dataset configs) in one folder share its ledger, so the
// events of the others are left out.
func LastRuns(events []ledger.Event, workflow string) map[string]reconcile.LastRun {
	type key struct {
		run     string
		attempt int
	}
	type runState struct {
		window string
		seen   int
		last   reconcile.LastRun
	}
	runs := map[key]*runState{}
	for i, e := range events {
		k := key{e.RunID, e.Attempt}
		switch e.Type {
		case WorkflowStarted:
			if name, _ := e.Payload["workflow"].(string); name != workflow {
				continue
			}
			w, _ := e.Payload["logical_window"].(string)
			runs[k] = &runState{window: w, seen: i, last: reconcile.LastRun{RunID: e.RunID, Attempt: e.Attempt, Tasks: map[string]string{}}}
		case TaskFinished:
			if r := runs[k]; r != nil {
				id, _ := e.Payload["task"].(string)
				st, _ := e.Payload["status"].(string)
				r.last.Tasks[id] = st
			}
		case WorkflowFinished:
			if r := runs[k]; r != nil {
				r.last.Finished = true
			}
		}
	}
	var all []*runState
	for _, r := range runs {
		all = append(all, r)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seen < all[j].seen })
	out := map[string]reconcile.LastRun{}
	for _, r := range all {
		out[r.window] = r.last
	}
	return out
}
