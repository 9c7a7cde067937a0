package reconcile

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

var (
	d1 = v1.LogicalWindow{Start: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 8, 2, 0, 0, 0, 0, time.UTC)}
	d2 = v1.LogicalWindow{Start: d1.End, End: d1.End.AddDate(0, 0, 1)}
)

func keyed(id, target string, deps ...string) Task {
	return Task{ID: id, Kind: "pipeline", Target: target, DependsOn: deps, Key: func(w v1.LogicalWindow) string { return id + "@" + w.String() }}
}

func unkeyed(id, kind string, deps ...string) Task {
	return Task{ID: id, Kind: kind, DependsOn: deps}
}

func keysOf(pairs ...string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for i := 0; i < len(pairs); i += 2 {
		if out[pairs[i]] == nil {
			out[pairs[i]] = map[string]bool{}
		}
		out[pairs[i]][pairs[i+1]] = true
	}
	return out
}

func TestPlanStates(t *testing.T) {
	two := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), keyed("customers", "t:customers")}}
	withExport := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), unkeyed("export", "pipeline", "orders")}}
	withMaintain := Object{Name: "w", Tasks: []Task{keyed("orders", "t:orders"), unkeyed("tidy", "maintain", "orders")}}
	k := func(id string) string { return id + "@" + d1.String() }
	ok := func(tasks ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(tasks); i += 2 {
			m[tasks[i]] = tasks[i+1]
		}
		return m
	}
	cases := []struct {
		name       string
		obj        Object
		keys       map[string]map[string]bool
		last       *LastRun
		state      string
		action     string
		tasks      string // id:action, in run order
		unfinished bool
	}{
		{"nothing yet", two, nil, nil, Missing, Run, "orders:run customers:run", false},
		{"every key on main", two, keysOf("t:orders", k("orders"), "t:customers", k("customers")), nil, Published, Skip, "orders:skip customers:skip", false},
		{"one key on main", two, keysOf("t:orders", k("orders")), nil, Partial, Resume, "orders:skip customers:run", false},
		{"last run failed", two, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "failed")}, Failed, Resume, "orders:skip customers:run", false},
		{"last run blocked", two, nil, &LastRun{Finished: true, Tasks: ok("orders", "blocked", "customers", "upstream_failed")}, Blocked, Resume, "orders:run customers:run", false},
		{"blocked only", two, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "blocked")}, Blocked, Resume, "orders:skip customers:run", false},
		{"interrupted run, keys decide", two, keysOf("t:orders", k("orders")), &LastRun{Finished: false, Tasks: ok("orders", "succeeded")}, Partial, Resume, "orders:skip customers:run", true},
		{"interrupted before any key", two, nil, &LastRun{Finished: false}, Missing, Resume, "orders:run customers:run", true},
		{"unkeyed task needs the ledger", withExport, keysOf("t:orders", k("orders")), nil, Partial, Resume, "orders:skip export:run", false},
		{"unkeyed task succeeded last time", withExport, keysOf("t:orders", k("orders")), &LastRun{Finished: true, Tasks: ok("orders", "skipped", "export", "succeeded")}, Published, Skip, "orders:skip export:skip", false},
		{"maintain needs no ledger", withMaintain, keysOf("t:orders", k("orders")), nil, Published, Skip, "orders:skip tidy:skip", false},
		{"keys gone after a success", two, nil, &LastRun{Finished: true, Tasks: ok("orders", "succeeded", "customers", "succeeded")}, Missing, Run, "orders:run customers:run", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs := Observed{Keys: c.keys, LastRuns: map[string]LastRun{}}
			if c.last != nil {
				obs.LastRuns[d1.String()] = *c.last
			}
			p := Plan(c.obj, []v1.LogicalWindow{d1}, obs, Options{})[0]
			var tasks []string
			for _, tp := range p.Tasks {
				tasks = append(tasks, tp.ID+":"+tp.Action)
			}
			if p.State != c.state || p.Action != c.action || strings.Join(tasks, " ") != c.tasks || p.Unfinished != c.unfinished {
				t.Errorf("got %s/%s [%s] unfinished=%v; want %s/%s [%s] unfinished=%v",
					p.State, p.Action, strings.Join(tasks, " "), p.Unfinished, c.state, c.action, c.tasks, c.unfinished)
			}
		})
	}
}

func TestPlanReplaceAndOrder(t *testing.T) {
	obj := Object{Tasks: []Task{keyed("b", "t:b", "a"), keyed("c", "t:c"), keyed("a", "t:a"), unkeyed("d", "dbt", "b")}}
	obs := Observed{Keys: keysOf("t:a", "a@"+d2.String())}
	plans := Plan(obj, []v1.LogicalWindow{d2, d1}, obs, Options{})
	if plans[0].Window != d1 || plans[1].Window != d2 {
		t.Errorf("windows out of time order")
	}
	var ids []string
	for _, tp := range plans[0].Tasks {
		ids = append(ids, tp.ID)
	}
	if strings.Join(ids, ",") != "c,a,b,d" {
		t.Errorf("order %v, want c,a,b,d (file order, then dependencies)", ids)
	}
	if plans[1].Tasks[1].Action != Skip || plans[1].Tasks[1].Reason != ReasonKeyOnMain || plans[1].Tasks[3].Reason != ReasonNoKey {
		t.Errorf("tasks of d2 %+v", plans[1].Tasks)
	}
	rep := Plan(obj, []v1.LogicalWindow{d2}, obs, Options{Replace: true})[0]
	if rep.Action != Replace || rep.Tasks[1].Action != Run {
		t.Errorf("replace plan %+v", rep)
	}
	if !Pending(plans) || Pending(nil) {
		t.Error("Pending is wrong")
	}
}
