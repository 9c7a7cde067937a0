package tables

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/specs"
)

// Environments (issue 32): the verbs over the environments of the tables a folder's objects
// write. The branches and their rules are internal/lake's (env.go); here they are gathered
// over every table of the objects named.

// EnvInfo is what an environment holds on one table.
type EnvInfo = lake.EnvInfo

// PromoteResult says what a promote did (or would do) to one table.
type PromoteResult = lake.PromoteResult

// PromoteOptions say how a promote may move main.
type PromoteOptions = lake.PromoteOptions

// What a promote did to a table (PromoteResult.Action).
const (
	PromoteFastForward = lake.PromoteFastForward
	PromoteRebase      = lake.PromoteRebase
	PromoteUpToDate    = lake.PromoteUpToDate
	PromoteNoEnv       = lake.PromoteNoEnv
)

// CheckEnvName is an error naming the rule when name cannot be an environment.
func CheckEnvName(name string) error { return lake.CheckEnvName(name) }

// envTable is one Iceberg table that objects write.
type envTable struct {
	p   *v1.Pipeline
	ref lake.Ref
}

// envTables are the Iceberg tables the objects under paths write (a file named is one object,
// a folder every spec in it), each once, in path order. A file in a folder that is not a spec
// is passed over; one named that is not is an error.
func envTables(paths []string) ([]envTable, error) {
	cands, err := specs.Discover(paths)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Path < cands[j].Path })
	var out []envTable
	seen := map[string]bool{}
	for _, c := range cands {
		if c.TooLarge && !c.Explicit {
			continue
		}
		wf, err := controllers.LoadWorkflow(c.Path)
		if err != nil {
			if c.Explicit {
				return nil, err
			}
			continue
		}
		for _, t := range wf.Tasks {
			p := wf.Pipelines[t.ID]
			if p == nil || !p.IsIceberg() {
				continue
			}
			id := lake.WarehouseDir(p.Metadata.Target.Catalog, p.BaseDir) + "\x00" + p.TargetIdentity()
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, envTable{p: p, ref: lake.RefOf(p.Metadata.Target)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no object under %v writes an Iceberg table, so there is no environment there; name the folder or spec of the objects (-f)", paths)
	}
	return out, nil
}

// each opens the catalog of every table under paths and calls f with the table's ref; a
// table that does not exist yet is passed over.
func eachEnvTable(ctx context.Context, paths []string, readOnly bool, f func(cat *lake.Catalog, t envTable) error) error {
	tables, err := envTables(paths)
	if err != nil {
		return err
	}
	for _, t := range tables {
		open := lake.Open
		if readOnly {
			open = lake.OpenReadOnly
		}
		cat, err := open(ctx, t.p.Metadata.Target.Catalog, t.p.BaseDir)
		if err != nil {
			return err
		}
		err = f(cat, t)
		cat.Close()
		var nf *lake.NotFoundError
		if err != nil && !errors.As(err, &nf) {
			return err
		}
	}
	return nil
}

// EnvList lists the environments on the tables the objects under paths write, by name then
// table.
func EnvList(ctx context.Context, paths []string) ([]EnvInfo, error) {
	out := []EnvInfo{}
	err := eachEnvTable(ctx, paths, true, func(cat *lake.Catalog, t envTable) error {
		tbl, err := cat.Load(ctx, t.ref)
		if err != nil {
			return err
		}
		out = append(out, lake.Envs(tbl)...)
		return nil
	})
	slices.SortStableFunc(out, func(a, b EnvInfo) int {
		if a.Name != b.Name {
			return cmp.Compare(a.Name, b.Name)
		}
		return cmp.Compare(a.Table, b.Table)
	})
	return out, err
}

// EnvDelete removes environment name from every table the objects under paths write and
// returns the tables it was on.
func EnvDelete(ctx context.Context, paths []string, name string) ([]string, error) {
	if err := lake.CheckEnvName(name); err != nil {
		return nil, err
	}
	var from []string
	err := eachEnvTable(ctx, paths, false, func(cat *lake.Catalog, t envTable) error {
		ok, err := cat.DeleteEnv(ctx, t.ref, name)
		if ok {
			from = append(from, t.ref.String())
		}
		return err
	})
	return from, err
}

// Promote makes main of every table the objects under paths write hold environment name's
// windows (lake.Promote), one catalog commit per table. Every table is checked first: if any
// would be refused (main moved without rebase, a window whose checks failed without force, a
// window a rebase cannot replay), nothing is promoted and every refusal is returned together.
func Promote(ctx context.Context, paths []string, name string, o PromoteOptions) ([]*PromoteResult, error) {
	if err := lake.CheckEnvName(name); err != nil {
		return nil, err
	}
	check := o
	check.DryRun = true
	var refusals []error
	var planned []*PromoteResult
	if err := eachEnvTable(ctx, paths, true, func(cat *lake.Catalog, t envTable) error {
		r, err := cat.Promote(ctx, t.ref, name, check)
		if err != nil {
			if isRefusal(err) {
				refusals = append(refusals, err)
				return nil
			}
			return err
		}
		planned = append(planned, r)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(refusals) > 0 {
		return planned, errors.Join(refusals...)
	}
	if o.DryRun {
		return planned, nil
	}
	var out []*PromoteResult
	err := eachEnvTable(ctx, paths, false, func(cat *lake.Catalog, t envTable) error {
		r, err := cat.Promote(ctx, t.ref, name, o)
		if r != nil {
			out = append(out, r)
		}
		return err
	})
	return out, err
}

// isRefusal reports whether err is a promote refused by its rules (not a failure to read).
func isRefusal(err error) bool {
	var moved *lake.MainMovedError
	var audit *lake.AuditError
	var rebase *lake.RebaseError
	return errors.As(err, &moved) || errors.As(err, &audit) || errors.As(err, &rebase)
}

// EnvDiffResult is what main of one table lacks that an environment has (lake.EnvDiff), with
// the object that writes the table.
type EnvDiffResult struct {
	Object string `json:"object"`
	File   string `json:"file"`
	*lake.EnvDiffResult
}

// EnvDiffWindow is one window of an environment as a diff shows it.
type EnvDiffWindow = lake.EnvDiffWindow

// EnvDiff is what main lacks that environment name has, on every table the objects under paths
// write, in path order (ldp diff --env). It reads and never writes; a table that does not
// exist yet lacks nothing.
func EnvDiff(ctx context.Context, paths []string, name string, now time.Time) ([]EnvDiffResult, error) {
	if err := lake.CheckEnvName(name); err != nil {
		return nil, err
	}
	out := []EnvDiffResult{}
	err := eachEnvTable(ctx, paths, true, func(cat *lake.Catalog, t envTable) error {
		tbl, err := cat.Load(ctx, t.ref)
		if err != nil {
			return err
		}
		d, err := lake.EnvDiff(tbl, name, now)
		if err != nil {
			return err
		}
		out = append(out, EnvDiffResult{Object: t.p.Identifier, File: t.p.Path, EnvDiffResult: d})
		return nil
	})
	return out, err
}
