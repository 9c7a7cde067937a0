package lake

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// Environments (issue 32). An environment NAME is a branch ldp_env_NAME of each table an
// object writes with --env NAME, forked from main's head by its first publish (a table that
// does not exist yet is created with its empty ldp.init snapshot on main, and the environment
// forks from that: main holds no rows until a promote). A window published in an environment
// goes through the same protocol as on main (fence, key search, stage, one commit) with the
// branch in main's place: its key is searched on the branch's ancestry (the branch's own
// snapshots, then main's keys as they were at the fork, from main's key index), and the commit
// moves only the branch, asserting it is still the head the search read. main is never moved
// by an environment's publish. A promote moves main to the branch (a fast-forward) or, asked
// to, replays the environment's windows onto main, once each by key.
//
// An environment's snapshots carry no key index of their own: the index rides on main's head
// and every publish on main detaches the older ones, so a branch's keys after its fork are read
// from its snapshots' summaries (an environment is short-lived and holds few windows), and the
// keys before the fork from main's index, filtered to the fork's ancestry.

// EnvPrefix starts every environment's branch name. ldp's other refs start with ldp_r (the
// staging branches), ldp_fence_ and ldp_key_index, so no environment can take one of them.
const EnvPrefix = "ldp_env_"

// Snapshot summary keys of environments and audits.
const (
	// EnvProp names the environment a snapshot was published in.
	EnvProp = "ldp.env"
	// ChecksProp is "failed" on a window published although its checks failed
	// (quality.on_failure "warn"); a promote refuses it unless forced.
	ChecksProp = "ldp.checks"
	// ChecksFailed is ChecksProp's value for a window whose checks failed.
	ChecksFailed = "failed"
	// PromotedFromProp names the environment a window replayed onto main came from.
	PromotedFromProp = "ldp.promoted-from"
	// WriteModeProp, JoinColsProp and ReplaceWhereProp say how an environment's window
	// replaced rows (its write mode; an upsert's join columns, as JSON; an overwrite's
	// predicate over the table's rows, alias t, empty for the whole table), so that a rebase
	// replays it on main with the same write mode.
	WriteModeProp    = "ldp.write-mode"
	JoinColsProp     = "ldp.join-cols"
	ReplaceWhereProp = "ldp.replace-where"
)

var envName = regexp.MustCompile(v1.EnvNamePattern)

// EnvNameError is an environment name that breaks the naming rule.
type EnvNameError struct{ Name string }

func (e *EnvNameError) Error() string {
	return fmt.Sprintf("invalid environment name %q: use a lowercase letter followed by up to 39 lowercase letters, digits, '_' or '-' (for example dev or alice-2); main is the production branch, not an environment", e.Name)
}

// EnvBranch is the branch of environment name on every table, or an *EnvNameError.
func EnvBranch(name string) (string, error) {
	if !envName.MatchString(name) || name == table.MainBranch {
		return "", &EnvNameError{Name: name}
	}
	return EnvPrefix + name, nil
}

// CheckEnvName is an *EnvNameError when name is not a valid environment name.
func CheckEnvName(name string) error {
	_, err := EnvBranch(name)
	return err
}

// EnvHead is the head of environment env on tbl, nil when env has not written tbl.
func EnvHead(tbl *table.Table, env string) *table.Snapshot {
	branch, err := EnvBranch(env)
	if err != nil {
		return nil
	}
	r, ok := refNamed(tbl, branch)
	if !ok || r.SnapshotRefType != table.BranchRef {
		return nil
	}
	return tbl.SnapshotByID(r.SnapshotID)
}

// OnEnv is tbl as environment env sees it: a table whose main is env's head, so every reader
// and writer of main (a scan, an overwrite's rewrite, a view for ldp query) works on the
// branch unchanged. ok is false when env has not written tbl: its reads fall through to main.
// The returned table cannot commit; its metadata location is marked so that no cache keyed
// by location mistakes it for main's.
func OnEnv(tbl *table.Table, env string) (*table.Table, bool, error) {
	if env == "" {
		return tbl, false, nil
	}
	head := EnvHead(tbl, env)
	if head == nil {
		return tbl, false, nil
	}
	view, err := onSnapshot(tbl, head.SnapshotID, env)
	return view, err == nil, err
}

// onSnapshot is tbl with main at snapshot id, in memory.
func onSnapshot(tbl *table.Table, id int64, env string) (*table.Table, error) {
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := b.SetSnapshotRef(table.MainBranch, id, table.BranchRef); err != nil {
		return nil, fmt.Errorf("read environment %s of %s: %w", env, refOf(tbl), err)
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("read environment %s of %s: %w", env, refOf(tbl), err)
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation()+"#env="+env, tbl.FS, nil), nil
}

// envLine is an environment's part of its branch: the snapshots after the point where the
// branch meets main's ancestry (newest first), and that point (nil when the walk did not reach
// main: a parent is missing, or the branch does not descend from main).
type envLine struct {
	head    *table.Snapshot
	own     []*table.Snapshot
	meet    *table.Snapshot
	missing *int64
}

// lineOf walks env's branch on tbl from its head back to main's ancestry: to a snapshot on
// main's ancestry as far as it is kept, or to the first snapshot the environment did not
// publish (the fork: after main's retention expired the snapshots between its head and the
// fork, main's walk no longer reaches it).
func lineOf(tbl *table.Table, env string, head *table.Snapshot) envLine {
	onMain := map[int64]bool{}
	for _, s := range Ancestry(tbl) {
		onMain[s.SnapshotID] = true
	}
	l := envLine{head: head}
	for s := head; s != nil; {
		if onMain[s.SnapshotID] || s.Summary == nil || s.Summary.Properties[EnvProp] != env {
			l.meet = s
			return l
		}
		l.own = append(l.own, s)
		if s.ParentSnapshotID == nil {
			return l
		}
		p := tbl.SnapshotByID(*s.ParentSnapshotID)
		if p == nil {
			l.missing = s.ParentSnapshotID
		}
		s = p
	}
	return l
}

// EnvKeys is every key on env's branch of tbl: those its own snapshots published, and main's
// keys as they were where the branch meets main (main's key index, expired snapshots included,
// less what main published after that point).
func EnvKeys(ctx context.Context, tbl *table.Table, env string, now time.Time) (map[string]KeyEntry, error) {
	head := EnvHead(tbl, env)
	if head == nil {
		return nil, nil
	}
	// A run asks for its window's key and each replace key on the same metadata: the keys of
	// one metadata file and environment are built once (a copy of main's keys each time
	// otherwise).
	cacheKey := tbl.MetadataLocation() + "\x00" + env
	if keys, ok := envKeyCache.get(cacheKey); ok {
		return keys, nil
	}
	keys, err := envKeys(ctx, tbl, env, head, now)
	if err == nil {
		envKeyCache.put(cacheKey, keys)
	}
	return keys, err
}

// envKeyCache holds EnvKeys of the last few metadata files and environments. A metadata file
// never changes, so neither do its keys; callers must not modify the map.
var envKeyCache = &recent[map[string]KeyEntry]{size: 4}

func envKeys(ctx context.Context, tbl *table.Table, env string, head *table.Snapshot, now time.Time) (map[string]KeyEntry, error) {
	l := lineOf(tbl, env, head)
	out := map[string]KeyEntry{}
	if l.meet != nil {
		main, err := KeysOnMain(ctx, tbl)
		if err != nil {
			return nil, err
		}
		before := map[int64]bool{}
		for s := l.meet; s != nil; {
			before[s.SnapshotID] = true
			if s.ParentSnapshotID == nil {
				break
			}
			s = tbl.SnapshotByID(*s.ParentSnapshotID)
		}
		for k, e := range main {
			// A snapshot still in the table is at the meeting point or before it exactly when
			// it is on its ancestry; an expired one is older than every kept snapshot, and
			// main is linear, so it was before the meeting point if it was older than it.
			if before[e.SnapshotID] || (tbl.SnapshotByID(e.SnapshotID) == nil && e.TimestampMs <= l.meet.TimestampMs) {
				out[k] = e
			}
		}
	} else if l.missing != nil {
		last := l.own[len(l.own)-1]
		if last.TimestampMs >= now.Add(-time.Duration(horizonDays(tbl))*24*time.Hour).UnixMilli() {
			return nil, &UnprovableError{Ref: refOf(tbl), Key: "(environment " + env + ")", Missing: *l.missing}
		}
	}
	for i := len(l.own) - 1; i >= 0; i-- {
		if e := entryOf(l.own[i]); e.Key != "" {
			out[e.Key] = e
		}
	}
	return out, nil
}

// FindEnvKey is the snapshot that published key on env's branch of tbl (an expired one as a
// stand-in), nil when key is not there. With env "" or an environment that has not written
// tbl it is FindKey on main: the branch would fork from main's head.
func FindEnvKey(ctx context.Context, tbl *table.Table, env, key string, now time.Time) (*table.Snapshot, error) {
	if env == "" || EnvHead(tbl, env) == nil {
		return FindKey(tbl, key, now)
	}
	keys, err := EnvKeys(ctx, tbl, env, now)
	if err != nil {
		return nil, err
	}
	if e, ok := keys[key]; ok {
		return standIn(tbl, e), nil
	}
	return nil, nil
}

// publishEnv is Publish into environment o.Env: the steps of Publish, with env's branch in
// main's place. The first publish to a table forks the branch from main's head in a commit of
// its own; a batch with new columns first unions them into the table's schema (Iceberg keeps
// one schema list for all branches; main's snapshots keep the schema they were written with,
// so main's readers see no change).
func (c *Catalog) publishEnv(ctx context.Context, db *engine.DB, relation string, ref Ref, o PublishOptions) (*PublishResult, error) {
	branch, err := EnvBranch(o.Env)
	if err != nil {
		return nil, err
	}
	res, b, err := c.begin(ctx, db, relation, ref, &o)
	if err != nil || b == nil {
		return res, err
	}
	defer b.release()
	mode := res.Mode
	if err := c.ensureBase(ctx, b.table); err != nil {
		return nil, err
	}
	if err := c.fence(ctx, ref, o.RunID, o.Attempt); err != nil {
		return nil, err
	}
	props := snapshotProps(o)
	props[EnvProp] = o.Env
	w := &writer{db: db, relation: relation, mode: mode, joinCols: o.JoinCols, props: props, tmp: b.tmp, replaceColumn: o.ReplaceColumn, replaceWhere: o.ReplaceWhere, prewritten: o.Prewritten, prewrittenParts: o.PrewrittenPartitions, empty: b.rows == 0, loc: o.Location}
	published := false
	defer func() {
		if !published {
			w.removeFiles()
		}
	}()
	deadline := o.Now().Add(o.Deadline)
	for try := 1; ; try++ {
		res.Tries = try
		tbl, err := c.Load(ctx, ref)
		if err != nil {
			return nil, err
		}
		done, err := c.envPrepareTry(ctx, tbl, branch, b.schema)
		if err != nil {
			return nil, err
		}
		if done {
			s, err := FindEnvKey(ctx, tbl, o.Env, o.Key, o.Now())
			if err != nil {
				return nil, err
			}
			if s != nil {
				return skipped(res, s), nil
			}
			if Fenced(tbl, o.RunID, o.Attempt) {
				return nil, fenceError(ref, o.RunID, o.Attempt)
			}
			head := EnvHead(tbl, o.Env)
			view, err := onSnapshot(tbl, head.SnapshotID, o.Env)
			if err != nil {
				return nil, err
			}
			res.RowsBefore = totalRecords(head)
			if err := replayProps(w, view); err != nil {
				return nil, err
			}
			tx := view.NewTransaction()
			if err := w.stage(ctx, tx, view); err != nil {
				return nil, clockHint(ref, err)
			}
			snaps, adds, err := builtSnapshots(view, tx)
			if err != nil {
				return nil, err
			}
			staged := snaps[len(snaps)-1]
			o.Hook("staged")
			fences, err := notFenced(tbl, o.RunID, o.Attempt)
			if err != nil {
				return nil, err
			}
			id := head.SnapshotID
			reqs := append([]table.Requirement{
				table.AssertTableUUID(tbl.Metadata().TableUUID()),
				table.AssertRefSnapshotID(branch, &id),
			}, fences...)
			// The branch keeps its own snapshots and its fork through any engine's expiry
			// (Iceberg's min-snapshots-to-keep of a branch), so its keys stay on it.
			keep := len(lineOf(tbl, o.Env, head).own) + 2
			updates := append(slices.Clone(adds), table.NewSetSnapshotRefUpdate(branch, staged.SnapshotID, table.BranchRef, 0, 0, keep))
			err = c.commit(ctx, ref, reqs, updates)
			mine := func(t *table.Table) *table.Snapshot {
				if s, _ := FindEnvKey(ctx, t, o.Env, o.Key, o.Now()); s != nil && s.Summary.Properties[RunIDProp] == o.RunID {
					return s
				}
				return nil
			}
			if out, ended, err := c.settleCommit(ctx, ref, err, o.Hook, res, staged, &published, " in environment "+o.Env, mine); ended {
				return out, err
			}
			if now, lerr := c.Load(ctx, ref); lerr == nil && Fenced(now, o.RunID, o.Attempt) {
				return nil, fenceError(ref, o.RunID, o.Attempt)
			}
		}
		if try >= o.MaxTries || o.Now().After(deadline) {
			return nil, &ConflictError{Ref: ref, Err: fmt.Errorf("environment %s kept moving: gave up after %d tries", o.Env, try)}
		}
		if !done {
			continue // a fork or a schema union landed: go on at once
		}
		o.backoff(try)
	}
}

// envPrepareTry makes tbl ready for a publish on branch: a base snapshot, the batch's new
// columns in the schema, the branch forked from main. done is false when it committed one of
// those (or lost a race doing so): the caller reloads and comes back.
func (c *Catalog) envPrepareTry(ctx context.Context, tbl *table.Table, branch string, bs *iceberg.Schema) (done bool, err error) {
	ref := refOf(tbl)
	if tbl.CurrentSnapshot() == nil {
		return false, c.ensureBase(ctx, tbl)
	}
	if len(schemaChanges(tbl.Schema(), bs)) > 0 {
		tx := tbl.NewTransaction()
		if err := evolve(tx, tbl.Schema(), bs); err != nil {
			return false, err
		}
		if _, err := tx.Commit(ctx); err != nil && !isConflict(err) {
			return false, fmt.Errorf("add the new columns of %s: %w", ref, clockHint(ref, err))
		}
		return false, nil
	}
	if r, ok := refNamed(tbl, branch); ok {
		if r.SnapshotRefType != table.BranchRef {
			return false, fmt.Errorf("table %s has a tag %s, not a branch: remove it or use another environment name", ref, branch)
		}
		return true, nil
	}
	fork := tbl.CurrentSnapshot().SnapshotID
	err = c.commit(ctx, ref, []table.Requirement{
		table.AssertRefSnapshotID(branch, nil),
		table.AssertRefSnapshotID(table.MainBranch, &fork),
	}, []table.Update{table.NewSetSnapshotRefUpdate(branch, fork, table.BranchRef, 0, 0, 1)})
	if err != nil && !isConflict(err) {
		return false, fmt.Errorf("fork environment branch %s of %s from main: %w", branch, ref, err)
	}
	return false, nil
}

// EnvWindow is one window of an environment (or of main since a fork).
type EnvWindow struct {
	Key          string `json:"idempotency_key,omitempty"`
	Window       string `json:"window,omitempty"`
	SnapshotID   int64  `json:"snapshot_id,string"`
	Operation    string `json:"operation"`
	Rows         int64  `json:"rows_added"`
	ChecksFailed bool   `json:"checks_failed,omitempty"`
}

func envWindow(s *table.Snapshot) EnvWindow {
	w := EnvWindow{SnapshotID: s.SnapshotID}
	if s.Summary != nil {
		p := s.Summary.Properties
		w.Key, w.Window, w.Operation = p[KeyProp], p[WindowProp], string(s.Summary.Operation)
		w.Rows, _ = strconv.ParseInt(p["added-records"], 10, 64)
		w.ChecksFailed = p[ChecksProp] == ChecksFailed
	}
	return w
}

func (w EnvWindow) String() string {
	name := w.Window
	if name == "" {
		name = "snapshot " + strconv.FormatInt(w.SnapshotID, 10)
	}
	if w.Key == "" {
		return name + " (no key)"
	}
	return name
}

// EnvDiffWindow is one window of an environment as ldp diff --env shows it.
type EnvDiffWindow struct {
	EnvWindow
	// RowsDeleted are the rows the window's snapshot removed (an overwrite's, an upsert's).
	RowsDeleted int64 `json:"rows_deleted"`
	// Checks is "failed" for a window published although its checks failed (on_failure
	// "warn"), "passed" otherwise: a window whose checks held it back was never published.
	Checks string `json:"checks"`
}

// EnvDiffResult is what main of one table lacks that an environment has.
type EnvDiffResult struct {
	Table string `json:"table"`
	Env   string `json:"env"`
	// Written is false when the environment has not written the table: main lacks nothing.
	Written bool `json:"written"`
	// Promote is what ldp promote would do: PromoteFastForward, PromoteRebase (main moved:
	// it needs --rebase), PromoteUpToDate or PromoteNoEnv.
	Promote string `json:"promote"`
	// MainMoved is how many snapshots main published since the fork.
	MainMoved int `json:"main_moved"`
	// Lacks are the environment's windows whose keys main does not have, OnMain those it has;
	// each sorted by window, key and snapshot.
	Lacks  []EnvDiffWindow `json:"lacks"`
	OnMain []EnvDiffWindow `json:"on_main"`
}

// EnvDiff is what main of tbl lacks that environment env has, window by window: each of the
// environment's own snapshots, by whether main has its key (a promote would skip it), with
// its rows and its checks.
func EnvDiff(tbl *table.Table, env string, now time.Time) (*EnvDiffResult, error) {
	if err := CheckEnvName(env); err != nil {
		return nil, err
	}
	res := &EnvDiffResult{Table: refOf(tbl).String(), Env: env, Promote: PromoteNoEnv, Lacks: []EnvDiffWindow{}, OnMain: []EnvDiffWindow{}}
	head := EnvHead(tbl, env)
	if head == nil {
		return res, nil
	}
	res.Written = true
	l := lineOf(tbl, env, head)
	for _, s := range l.own {
		w := EnvDiffWindow{EnvWindow: envWindow(s), Checks: "passed"}
		if w.ChecksFailed {
			w.Checks = ChecksFailed
		}
		if s.Summary != nil {
			w.RowsDeleted, _ = strconv.ParseInt(s.Summary.Properties["deleted-records"], 10, 64)
		}
		var found *table.Snapshot
		if w.Key != "" {
			var err error
			if found, err = FindKey(tbl, w.Key, now); err != nil {
				return nil, err
			}
		}
		if found != nil {
			res.OnMain = append(res.OnMain, w)
		} else {
			res.Lacks = append(res.Lacks, w)
		}
	}
	for _, ws := range [][]EnvDiffWindow{res.Lacks, res.OnMain} {
		slices.SortFunc(ws, func(a, b EnvDiffWindow) int {
			return cmp.Or(cmp.Compare(a.Window, b.Window), cmp.Compare(a.Key, b.Key), cmp.Compare(a.SnapshotID, b.SnapshotID))
		})
	}
	main := tbl.CurrentSnapshot()
	for _, s := range Ancestry(tbl) {
		if l.meet != nil && s.SnapshotID == l.meet.SnapshotID {
			break
		}
		res.MainMoved++
	}
	switch {
	case len(res.Lacks) == 0:
		res.Promote = PromoteUpToDate
	case l.meet != nil && main != nil && l.meet.SnapshotID == main.SnapshotID:
		res.Promote = PromoteFastForward
	default:
		res.Promote = PromoteRebase
	}
	return res, nil
}

// EnvInfo is what an environment holds on one table.
type EnvInfo struct {
	Name    string      `json:"name"`
	Table   string      `json:"table"`
	Head    int64       `json:"head,string"`
	Fork    int64       `json:"fork,string,omitempty"`
	Windows []EnvWindow `json:"windows"`
	// Behind is how many snapshots main published since the fork.
	Behind int `json:"main_moved"`
}

// envHeads yields each environment's name and the head of its branch on tbl.
func envHeads(tbl *table.Table) iter.Seq2[string, *table.Snapshot] {
	return func(yield func(string, *table.Snapshot) bool) {
		for name, r := range tbl.Metadata().Refs() {
			env, ok := strings.CutPrefix(name, EnvPrefix)
			if !ok || r.SnapshotRefType != table.BranchRef {
				continue
			}
			if head := tbl.SnapshotByID(r.SnapshotID); head != nil && !yield(env, head) {
				return
			}
		}
	}
}

// Envs lists the environments on tbl, by name.
func Envs(tbl *table.Table) []EnvInfo {
	var out []EnvInfo
	main := Ancestry(tbl)
	for env, head := range envHeads(tbl) {
		l := lineOf(tbl, env, head)
		info := EnvInfo{Name: env, Table: refOf(tbl).String(), Head: head.SnapshotID, Windows: []EnvWindow{}}
		for i := len(l.own) - 1; i >= 0; i-- {
			info.Windows = append(info.Windows, envWindow(l.own[i]))
		}
		if l.meet != nil {
			info.Fork = l.meet.SnapshotID
			for _, s := range main {
				if s.SnapshotID == l.meet.SnapshotID {
					break
				}
				info.Behind++
			}
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EnvLive are the snapshots of tbl that its environments need: each branch from its head back
// to where it meets main, that point included. Expiry keeps them while the branch exists, so an
// environment's keys and files stay (its data files are also kept through its head's
// manifests) and a promote can still find its fork.
func EnvLive(tbl *table.Table) map[int64]bool {
	out := map[int64]bool{}
	for env, head := range envHeads(tbl) {
		l := lineOf(tbl, env, head)
		for _, s := range l.own {
			out[s.SnapshotID] = true
		}
		if l.meet != nil {
			out[l.meet.SnapshotID] = true
		}
	}
	return out
}

// DeleteEnv removes environment env's branch from the table ref, reporting whether it was
// there, and in the same commit the environment's snapshots that no other ref reaches (not
// those a promote put on main): orphan removal then takes the data files only they held.
func (c *Catalog) DeleteEnv(ctx context.Context, ref Ref, env string) (bool, error) {
	branch, err := EnvBranch(env)
	if err != nil {
		return false, err
	}
	for try := 1; try <= 20; try++ {
		tbl, err := c.Load(ctx, ref)
		if err != nil {
			return false, err
		}
		r, ok := refNamed(tbl, branch)
		if !ok {
			return false, nil
		}
		id := r.SnapshotID
		updates := []table.Update{table.NewRemoveSnapshotRefUpdate(branch)}
		if drop := envOnly(tbl, env, branch); len(drop) > 0 {
			updates = append(updates, table.NewRemoveSnapshotsUpdate(drop, false))
		}
		err = c.commit(ctx, ref, []table.Requirement{table.AssertRefSnapshotID(branch, &id)}, updates)
		if err == nil {
			return true, nil
		}
		if !isConflict(err) {
			return false, fmt.Errorf("delete environment %s of %s: %w", env, ref, err)
		}
	}
	return false, &ConflictError{Ref: ref, Err: fmt.Errorf("delete environment %s: the table kept moving", env)}
}

// Promotion outcomes.
const (
	PromoteFastForward = "fast-forward"
	PromoteRebase      = "rebase"
	PromoteUpToDate    = "up-to-date"
	PromoteNoEnv       = "not-in-env"
)

// PromoteOptions say how a promote may move main.
type PromoteOptions struct {
	// Rebase replays the environment's windows onto a main that moved since the fork.
	Rebase bool
	// Force promotes windows whose checks failed.
	Force bool
	// DryRun checks and reports what the promote would do, and commits nothing.
	DryRun bool
	Now    func() time.Time
	// Hook is called at "committing", just before a table's promote commit, and "promoted",
	// just after it landed, so a test can kill a real process there. Nil in production.
	Hook func(point string)
}

// PromoteResult says what a promote did to one table.
type PromoteResult struct {
	Table  string `json:"table"`
	Env    string `json:"env"`
	Action string `json:"action"`
	// Windows are the environment's windows main received, oldest first.
	Windows []EnvWindow `json:"windows"`
	// Skipped are the environment's windows main already had (by key): not replayed.
	Skipped []EnvWindow `json:"skipped,omitempty"`
	From    int64       `json:"from,string"`
	To      int64       `json:"to,string"`
}

// MainMovedError is a promote refused because main moved since the fork: a fast-forward would
// drop main's new snapshots.
type MainMovedError struct {
	Ref   Ref
	Env   string
	Moved []EnvWindow
	// Lost is set when main's walk back did not reach the fork (snapshots expired).
	Lost bool
}

func (e *MainMovedError) Error() string {
	var names []string
	for _, w := range e.Moved {
		names = append(names, w.String())
	}
	more := ""
	if e.Lost {
		more = " (and older snapshots since expired)"
	}
	return fmt.Sprintf("cannot promote environment %s to %s: main moved since the fork (%d snapshot(s): %s%s); a fast-forward would drop them. Use --rebase to replay the environment's windows onto main (each once by key, none main already has)",
		e.Env, e.Ref, len(e.Moved), strings.Join(names, ", "), more)
}

// AuditError is a promote refused because windows of the environment failed their checks.
type AuditError struct {
	Ref    Ref
	Env    string
	Failed []EnvWindow
}

func (e *AuditError) Error() string {
	var names []string
	for _, w := range e.Failed {
		names = append(names, w.String())
	}
	return fmt.Sprintf("cannot promote environment %s to %s: %d window(s) failed their checks: %s; fix and re-run them in the environment under a new key, or promote anyway with --force",
		e.Env, e.Ref, len(e.Failed), strings.Join(names, ", "))
}

// RebaseError is a window the rebase cannot replay.
type RebaseError struct {
	Ref    Ref
	Env    string
	Window EnvWindow
	Why    string
}

func (e *RebaseError) Error() string {
	return fmt.Sprintf("cannot rebase environment %s onto %s: window %s %s", e.Env, e.Ref, e.Window, e.Why)
}

// Promote makes main of table ref hold environment env's windows. When main has not moved
// since the fork (it is on the branch's ancestry), main fast-forwards to the branch's head in
// one catalog commit asserting main and the branch are where the promote read them, with the
// key index of the new head attached. When main moved, it is a *MainMovedError, or with
// o.Rebase the environment's windows whose keys main lacks are replayed onto main (their data
// files added again, each window its own snapshot under its own key) in one commit asserting
// main did not move; a window main already has is skipped. A window whose checks failed is an
// *AuditError unless o.Force. The branch is kept (env delete removes it).
func (c *Catalog) Promote(ctx context.Context, ref Ref, env string, o PromoteOptions) (*PromoteResult, error) {
	branch, err := EnvBranch(env)
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hook == nil {
		o.Hook = func(string) {}
	}
	res := &PromoteResult{Table: ref.String(), Env: env, Windows: []EnvWindow{}}
	for try := 1; ; try++ {
		tbl, err := c.Load(ctx, ref)
		if err != nil {
			return nil, err
		}
		head := EnvHead(tbl, env)
		if head == nil {
			res.Action = PromoteNoEnv
			return res, nil
		}
		main := tbl.CurrentSnapshot()
		res.From, res.To = main.SnapshotID, main.SnapshotID
		l := lineOf(tbl, env, head)
		var pending, skipped []*table.Snapshot
		for i := len(l.own) - 1; i >= 0; i-- {
			s := l.own[i]
			var key string
			if s.Summary != nil {
				key = s.Summary.Properties[KeyProp]
			}
			if key != "" {
				found, err := FindKey(tbl, key, o.Now())
				if err != nil {
					return nil, err
				}
				if found != nil {
					skipped = append(skipped, s)
					continue
				}
			}
			pending = append(pending, s)
		}
		res.Skipped = res.Skipped[:0]
		for _, s := range skipped {
			res.Skipped = append(res.Skipped, envWindow(s))
		}
		if len(pending) == 0 {
			res.Action = PromoteUpToDate
			return res, nil
		}
		var failed []EnvWindow
		for _, s := range pending {
			if w := envWindow(s); w.ChecksFailed {
				failed = append(failed, w)
			}
		}
		if len(failed) > 0 && !o.Force {
			return nil, &AuditError{Ref: ref, Env: env, Failed: failed}
		}
		ff := l.meet != nil && l.meet.SnapshotID == main.SnapshotID
		var updates []table.Update
		var reqs []table.Requirement
		var newHead int64
		if ff {
			staged := slices.Clone(l.own)
			slices.Reverse(staged)
			index, err := c.promoteIndex(ctx, tbl, staged, o)
			if err != nil {
				return nil, err
			}
			hid, mid := head.SnapshotID, main.SnapshotID
			reqs = []table.Requirement{
				table.AssertTableUUID(tbl.Metadata().TableUUID()),
				table.AssertRefSnapshotID(table.MainBranch, &mid),
				table.AssertRefSnapshotID(branch, &hid),
			}
			updates = append([]table.Update{table.NewSetSnapshotRefUpdate(table.MainBranch, hid, table.BranchRef, 0, 0, 0)}, index...)
			newHead = hid
			res.Action = PromoteFastForward
		} else {
			if !o.Rebase {
				return nil, mainMoved(tbl, ref, env, l)
			}
			snaps, adds, err := c.replay(ctx, tbl, ref, env, pending, o.DryRun)
			if err != nil {
				return nil, err
			}
			index, err := c.promoteIndex(ctx, tbl, snaps, o)
			if err != nil {
				return nil, err
			}
			mid := main.SnapshotID
			newHead = snaps[len(snaps)-1].SnapshotID
			reqs = []table.Requirement{
				table.AssertTableUUID(tbl.Metadata().TableUUID()),
				table.AssertRefSnapshotID(table.MainBranch, &mid),
			}
			updates = append(slices.Clone(adds), table.NewSetSnapshotRefUpdate(table.MainBranch, newHead, table.BranchRef, 0, 0, 0))
			updates = append(updates, index...)
			res.Action = PromoteRebase
		}
		if o.DryRun {
			res.To = newHead
			for _, s := range pending {
				res.Windows = append(res.Windows, envWindow(s))
			}
			return res, nil
		}
		o.Hook("committing")
		err = c.commit(ctx, ref, reqs, updates)
		if err == nil {
			o.Hook("promoted")
			res.To = newHead
			res.Windows = res.Windows[:0]
			for _, s := range pending {
				res.Windows = append(res.Windows, envWindow(s))
			}
			c.cleanMetadata(ctx, ref)
			return res, nil
		}
		if !isConflict(err) {
			return nil, fmt.Errorf("promote environment %s to %s: outcome unknown (run ldp promote again: a window main has is not promoted twice): %w", env, ref, err)
		}
		if try >= 20 {
			return nil, &ConflictError{Ref: ref, Err: fmt.Errorf("promote environment %s: main kept moving: gave up after %d tries", env, try)}
		}
	}
}

// promoteIndex is nextIndex for a promote's new head of main, nothing for a dry run (which
// must write no file).
func (c *Catalog) promoteIndex(ctx context.Context, tbl *table.Table, staged []*table.Snapshot, o PromoteOptions) ([]table.Update, error) {
	if o.DryRun {
		return nil, nil
	}
	return c.nextIndex(ctx, tbl, staged)
}

// mainMoved says what main published since the fork.
func mainMoved(tbl *table.Table, ref Ref, env string, l envLine) error {
	e := &MainMovedError{Ref: ref, Env: env, Lost: l.meet == nil}
	var moved []EnvWindow
	reached := false
	for _, s := range Ancestry(tbl) {
		if l.meet != nil && s.SnapshotID == l.meet.SnapshotID {
			reached = true
			break
		}
		moved = append(moved, envWindow(s))
	}
	slices.Reverse(moved)
	e.Moved, e.Lost = moved, !reached
	return e
}

// replay builds, on main's head of tbl, one snapshot for each of the environment's windows in
// pending (their summary's ldp keys, and PromotedFromProp), and returns them with the updates
// that add them: an append adds its data files again; an overwrite or upsert is replayed with
// its write mode (replayReplace). A window that carries no key, or that replaced rows without
// recording how, cannot be replayed exactly once: a *RebaseError. A dry run writes no file.
func (c *Catalog) replay(ctx context.Context, tbl *table.Table, ref Ref, env string, pending []*table.Snapshot, dryRun bool) ([]*table.Snapshot, []table.Update, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx := tbl.NewTransaction()
	for _, s := range pending {
		w := envWindow(s)
		switch {
		case w.Key == "":
			return nil, nil, &RebaseError{Ref: ref, Env: env, Window: w, Why: "has no idempotency key, so it cannot be replayed exactly once; publish it with --window"}
		case s.Summary.Operation != table.OpAppend && !replayable(s):
			return nil, nil, &RebaseError{Ref: ref, Env: env, Window: w, Why: fmt.Sprintf("is an %s (it replaced rows) published before ldp recorded how it replaced them; re-run the window on main (ldp run without --env)", s.Summary.Operation)}
		}
		ms, err := s.Manifests(fsys)
		if err != nil {
			return nil, nil, fmt.Errorf("read the manifests of environment %s's snapshot %d: %w", env, s.SnapshotID, err)
		}
		var files []iceberg.DataFile
		for _, m := range ms {
			if m.SnapshotID() != s.SnapshotID || m.AddedDataFiles() == 0 {
				continue
			}
			ents, err := m.FetchEntries(fsys, true)
			if err != nil {
				return nil, nil, fmt.Errorf("read the manifests of environment %s's snapshot %d: %w", env, s.SnapshotID, err)
			}
			for _, ent := range ents {
				if ent.Status() == iceberg.EntryStatusADDED && ent.SnapshotID() == s.SnapshotID {
					files = append(files, ent.DataFile())
				}
			}
		}
		props := iceberg.Properties{PromotedFromProp: env}
		for k, v := range s.Summary.Properties {
			if strings.HasPrefix(k, "ldp.") && k != EnvProp {
				props[k] = v
			}
		}
		if s.Summary.Operation != table.OpAppend {
			if err := c.replayReplace(ctx, tx, s, files, props, dryRun); err != nil {
				return nil, nil, fmt.Errorf("replay window %s of environment %s onto %s: %w", w, env, ref, err)
			}
			continue
		}
		if len(files) == 0 {
			// An empty window (allow_empty) is still a window: it keeps its key.
			if err := tx.AddFiles(ctx, nil, props, true); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := tx.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck()); err != nil {
			return nil, nil, fmt.Errorf("replay window %s of environment %s onto %s: %w", w, env, ref, err)
		}
	}
	snaps, adds, err := builtSnapshots(tbl, tx)
	if err == nil && len(snaps) != len(pending) {
		err = fmt.Errorf("replay environment %s onto %s: %d snapshots for %d windows", env, ref, len(snaps), len(pending))
	}
	return snaps, adds, err
}

// refNamed is tbl's ref called name.
func refNamed(tbl *table.Table, name string) (table.SnapshotRef, bool) {
	for n, r := range tbl.Metadata().Refs() {
		if n == name {
			return r, true
		}
	}
	return table.SnapshotRef{}, false
}

// envOnly are the snapshots of env's branch that no other ref of tbl reaches.
func envOnly(tbl *table.Table, env, branch string) []int64 {
	r, _ := refNamed(tbl, branch)
	head := tbl.SnapshotByID(r.SnapshotID)
	if head == nil {
		return nil
	}
	reached := map[int64]bool{}
	for name, other := range tbl.Metadata().Refs() {
		if name == branch {
			continue
		}
		for s := tbl.SnapshotByID(other.SnapshotID); s != nil && !reached[s.SnapshotID]; {
			reached[s.SnapshotID] = true
			if s.ParentSnapshotID == nil {
				break
			}
			s = tbl.SnapshotByID(*s.ParentSnapshotID)
		}
	}
	var out []int64
	for _, s := range lineOf(tbl, env, head).own {
		if !reached[s.SnapshotID] {
			out = append(out, s.SnapshotID)
		}
	}
	return out
}

// replayProps records in w's snapshot properties how a window published into an environment
// replaces rows (WriteModeProp and the rest), for a rebase to replay it on main; tbl is the
// table as the window's write sees it.
func replayProps(w *writer, tbl *table.Table) error {
	if needsArrowWriter(tbl.Schema(), tbl.Spec()) {
		return nil // iceberg-go writes the files: a batch's cannot be told from survivors
	}
	w.props[WriteModeProp] = string(w.mode)
	switch {
	case w.mode == v1.WriteUpsert:
		cols, err := json.Marshal(w.joinCols)
		if err != nil {
			return err
		}
		w.props[JoinColsProp] = string(cols)
	case w.mode == v1.WriteOverwrite && w.replaceWhere != nil:
		pred, err := w.replacePredicate(tbl)
		if err != nil {
			return err
		}
		w.props[ReplaceWhereProp] = pred
	}
	return nil
}

// replayable reports whether an environment's snapshot that replaced rows recorded how
// (replayProps).
func replayable(s *table.Snapshot) bool {
	p := s.Summary.Properties
	switch v1.WriteMode(p[WriteModeProp]) {
	case v1.WriteOverwrite:
		return true
	case v1.WriteUpsert:
		var cols []string
		return json.Unmarshal([]byte(p[JoinColsProp]), &cols) == nil && len(cols) > 0
	}
	return false
}

// replayReplace adds to tx the window s of an environment that replaced rows, replayed with its
// write mode on the table as tx has staged it (main's head, and the windows replayed before
// it): the rows of its batch (the files s added, less the survivors its own rewrite wrote)
// replace, on main now, the window's rows (an overwrite's predicate, or the whole table) or
// the rows whose join keys the batch holds (an upsert), main's files rewritten without them.
// A dry run checks and stages a stand-in that writes nothing.
func (c *Catalog) replayReplace(ctx context.Context, tx *table.Transaction, s *table.Snapshot, files []iceberg.DataFile, props iceberg.Properties, dryRun bool) error {
	if dryRun {
		return tx.AddFiles(ctx, nil, props, true)
	}
	var batch []string
	for _, f := range files {
		if !isRewrite(f.FilePath()) {
			batch = append(batch, f.FilePath())
		}
	}
	st, err := tx.StagedTable()
	if err != nil {
		return err
	}
	cur := st.Table
	db, err := engine.Open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	w := &writer{db: db, props: props}
	if err := w.useFS(ctx, cur); err != nil {
		return err
	}
	var deleted, rewritten []string
	p := s.Summary.Properties
	switch mode := v1.WriteMode(p[WriteModeProp]); {
	case mode == v1.WriteOverwrite && p[ReplaceWhereProp] == "":
		if deleted, err = currentFiles(ctx, cur); err != nil {
			return err
		}
	case mode == v1.WriteOverwrite:
		if deleted, rewritten, err = w.rewriteWithout(ctx, cur, p[ReplaceWhereProp]); err != nil {
			return err
		}
	default: // an upsert: replayable checked its join columns
		if len(batch) == 0 {
			break // no row to upsert
		}
		if err := json.Unmarshal([]byte(p[JoinColsProp]), &w.joinCols); err != nil {
			return err
		}
		local, err := fetch(w.fs, batch)
		if err != nil {
			return err
		}
		w.relation = "read_parquet(" + engine.LitList(local) + ", hive_partitioning = false)"
		match, err := w.keyMatch(ctx, cur, "t")
		if err != nil {
			return err
		}
		if deleted, rewritten, err = w.rewriteWithout(ctx, cur, match); err != nil {
			return err
		}
	}
	if len(deleted) == 0 {
		return tx.AddFiles(ctx, batch, props, true)
	}
	return tx.ReplaceDataFiles(ctx, deleted, append(rewritten, batch...), props)
}
