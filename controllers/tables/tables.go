package tables

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/specs"
)

// targetTable validates a spec and loads its Iceberg target table, read-only; what names the
// command's subject in the error for a file target ("snapshots", "commits").
func targetTable(ctx context.Context, path, what string) (*v1.Pipeline, *table.Table, error) {
	p, err := specs.LoadPipeline(path)
	if err != nil {
		return nil, nil, err
	}
	if !p.IsIceberg() {
		return nil, nil, ldperr.Configf(path, "writes a %s file, which has no %s; %s are for ICEBERG targets", p.Metadata.Target.Format, what, what)
	}
	cat, err := lake.OpenReadOnly(ctx, p.Metadata.Target.Catalog, p.BaseDir)
	if err != nil {
		return nil, nil, err
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, lake.RefOf(p.Metadata.Target))
	return p, tbl, err
}

// Snapshot is one snapshot of a table, as ldp snapshots lists it.
type Snapshot = lake.SnapshotInfo

// Snapshots lists the snapshots of the spec's table, oldest first.
func Snapshots(ctx context.Context, path string) ([]Snapshot, error) {
	_, tbl, err := targetTable(ctx, path, "snapshots")
	if err != nil {
		return nil, err
	}
	snaps := lake.Snapshots(tbl)
	if snaps == nil {
		snaps = []Snapshot{}
	}
	return snaps, nil
}

// Commit is one keyed publish on a table's main branch.
type Commit struct {
	SnapshotID  int64  `json:"snapshot_id,string"`
	TimestampMs int64  `json:"timestamp_ms"`
	Key         string `json:"idempotency_key"`
	RunID       string `json:"run_id"`
	Attempt     int    `json:"attempt,omitempty"`
	Window      string `json:"logical_window,omitempty"`
	Rows        *int64 `json:"rows_added,omitempty"`
}

// Commits lists the keyed publishes on main of the spec's table whose key starts with prefix,
// oldest first: each key appears at most once.
func Commits(ctx context.Context, path, prefix string) ([]Commit, error) {
	return EnvCommits(ctx, path, prefix, "")
}

// EnvCommits is Commits on environment env's branch (main's publishes up to the fork and the
// environment's own); env "", or an environment that has not written the table, is main.
func EnvCommits(ctx context.Context, path, prefix, env string) ([]Commit, error) {
	if env != "" {
		if err := lake.CheckEnvName(env); err != nil {
			return nil, err
		}
	}
	_, tbl, err := targetTable(ctx, path, "commits")
	if err != nil {
		return nil, err
	}
	chain, keysOf := tbl, lake.KeysOnMain
	if view, ok, err := lake.OnEnv(tbl, env); err != nil {
		return nil, err
	} else if ok {
		chain = view
		keysOf = func(ctx context.Context, _ *table.Table) (map[string]lake.KeyEntry, error) {
			return lake.EnvKeys(ctx, tbl, env, time.Now())
		}
	}
	rows := []Commit{}
	seen := map[string]bool{}
	for _, sn := range lake.Ancestry(chain) {
		props := sn.Summary.Properties
		if k := props[lake.KeyProp]; k != "" && strings.HasPrefix(k, prefix) {
			seen[k] = true
			rows = append(rows, Commit{SnapshotID: sn.SnapshotID, TimestampMs: sn.TimestampMs, Key: k, RunID: props[lake.RunIDProp],
				Attempt: atoiOr0(props[lake.AttemptProp]), Window: props[lake.WindowProp], Rows: int64Of(props["added-records"])})
		}
	}
	slices.Reverse(rows)
	// Publishes whose snapshots expired are in the key index: what it recorded of them.
	all, err := keysOf(ctx, tbl)
	if err != nil {
		return nil, err
	}
	for k, e := range all {
		if !seen[k] && strings.HasPrefix(k, prefix) {
			rows = append(rows, Commit{SnapshotID: e.SnapshotID, TimestampMs: e.TimestampMs, Key: k, RunID: e.RunID, Window: e.Window})
		}
	}
	slices.SortStableFunc(rows, func(a, b Commit) int { return cmp.Compare(a.TimestampMs, b.TimestampMs) })
	return rows, nil
}

// atoiOr0 reads a summary property a publish wrote as a number; 0 (absent) for anything else.
func atoiOr0(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// int64Of reads a counting summary property, nil when the snapshot does not carry it.
func int64Of(s string) *int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// EnvSnapshots lists the snapshots on environment env's branch of the spec's table, oldest
// first: main's up to the fork and the environment's own. An environment that has not
// written the table lists main's.
func EnvSnapshots(ctx context.Context, path, env string) ([]Snapshot, error) {
	if env == "" {
		return Snapshots(ctx, path)
	}
	if err := lake.CheckEnvName(env); err != nil {
		return nil, err
	}
	_, tbl, err := targetTable(ctx, path, "snapshots")
	if err != nil {
		return nil, err
	}
	view, _, err := lake.OnEnv(tbl, env)
	if err != nil {
		return nil, err
	}
	on := map[int64]bool{}
	for _, s := range lake.Ancestry(view) {
		on[s.SnapshotID] = true
	}
	out := []Snapshot{}
	for _, s := range lake.Snapshots(tbl) {
		if on[s.ID] {
			out = append(out, s)
		}
	}
	return out, nil
}
