package lake

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// envQuery reads table rides as environment env sees it (main when env is "").
func (f *fixture) envQuery(t *testing.T, env, q string) []string {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	view, _, err := OnEnv(tbl, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterView(f.ctx, f.db, "rides", view, 0); err != nil {
		t.Fatal(err)
	}
	rows, err := f.db.Query(f.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v any
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// windowBatch makes window i's batch: three rides with ids 10*i+1..10*i+3 and fare i.
func (f *fixture) windowBatch(t *testing.T, i int) {
	f.batch(t, rideCols, fmt.Sprintf("(%d, 'NYC', %d.0), (%d, 'BKK', %d.0), (%d, 'LIS', %d.0)", 10*i+1, i, 10*i+2, i, 10*i+3, i))
}

func (f *fixture) publishWindow(t *testing.T, env string, i int, extra map[string]string) *PublishResult {
	t.Helper()
	f.windowBatch(t, i)
	props := map[string]string{WindowProp: fmt.Sprintf("w%02d", i)}
	for k, v := range extra {
		props[k] = v
	}
	return f.publish(t, PublishOptions{Key: fmt.Sprintf("key-%02d", i), RunID: fmt.Sprintf("run-%s-%d", env, i), Env: env, WriteOptions: WriteOptions{SnapshotProps: props}})
}

func (f *fixture) mainHead(t *testing.T) int64 {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.CurrentSnapshot().SnapshotID
}

// TestEnvPublishLeavesMainAlone: five windows published into dev land on dev's branch once
// each, re-publishing skips them, main is not moved and its reader sees only main's rows.
func TestEnvPublishLeavesMainAlone(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	before := f.mainHead(t)
	for i := 1; i <= 5; i++ {
		if r := f.publishWindow(t, "dev", i, nil); r.Status != Published {
			t.Fatalf("window %d: %s", i, r.Status)
		}
	}
	for i := 1; i <= 5; i++ {
		if r := f.publishWindow(t, "dev", i, nil); r.Status != SkippedDuplicate {
			t.Fatalf("re-publish of window %d: %s, want skipped", i, r.Status)
		}
	}
	// A key main had at the fork is on dev's ancestry: skipped too.
	if r := f.publishWindow(t, "dev", 0, nil); r.Status != SkippedDuplicate {
		t.Fatalf("window 0 (on main before the fork) in dev: %s", r.Status)
	}
	if got := f.mainHead(t); got != before {
		t.Fatalf("main moved from %d to %d", before, got)
	}
	if got := f.envQuery(t, "", "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Errorf("main has %v rows, want 3", got)
	}
	if got := f.envQuery(t, "dev", "SELECT count(*) || '/' || count(DISTINCT ride_id) FROM rides"); got[0] != "18/18" {
		t.Errorf("dev has %v rows/distinct, want 18/18", got)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	keys, err := EnvKeys(f.ctx, tbl, "dev", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 6 {
		t.Errorf("dev's keys %d, want 6", len(keys))
	}
	if s, _ := FindKey(tbl, "key-03", time.Now()); s != nil {
		t.Errorf("dev's key found on main")
	}
	envs := Envs(tbl)
	if len(envs) != 1 || envs[0].Name != "dev" || len(envs[0].Windows) != 5 || envs[0].Fork != before || envs[0].Behind != 0 {
		t.Errorf("envs %+v", envs)
	}
}

// TestEnvOnNewTable: an environment that writes a table that does not exist creates it with
// main at the empty base, and forks from it.
func TestEnvOnNewTable(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "dev", 1, nil)
	if got := f.envQuery(t, "", "SELECT count(*) FROM rides"); got[0] != "0" {
		t.Errorf("main has %v rows, want 0", got)
	}
	if got := f.envQuery(t, "dev", "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Errorf("dev has %v rows, want 3", got)
	}
	r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != PromoteFastForward {
		t.Errorf("action %s", r.Action)
	}
	if got := f.envQuery(t, "", "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Errorf("main has %v rows after the promote, want 3", got)
	}
}

// TestPromoteFastForward: main not moved since the fork goes to dev's head in one commit;
// a reader of main sees the old rows until then and the new ones after; the keys are found on
// main (through the index attached by the promote) and a second promote does nothing.
func TestPromoteFastForward(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	for i := 1; i <= 5; i++ {
		f.publishWindow(t, "dev", i, nil)
	}
	if got := f.envQuery(t, "", "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Fatalf("main before the promote: %v rows", got)
	}
	r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != PromoteFastForward || len(r.Windows) != 5 {
		t.Fatalf("promote %+v", r)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	if head := EnvHead(tbl, "dev"); tbl.CurrentSnapshot().SnapshotID != head.SnapshotID {
		t.Errorf("main %d is not dev's head %d", tbl.CurrentSnapshot().SnapshotID, head.SnapshotID)
	}
	if _, ok := indexStats(tbl)[tbl.CurrentSnapshot().SnapshotID]; !ok {
		t.Errorf("main's new head carries no key index")
	}
	if got := f.envQuery(t, "", "SELECT count(*) || '/' || count(DISTINCT ride_id) FROM rides"); got[0] != "18/18" {
		t.Errorf("main after the promote: %v", got)
	}
	if got := keyCount(t, f); len(got) != 6 {
		t.Errorf("keys on main %v", got)
	}
	// Published on main now: a run on main skips them.
	if res := f.publishWindow(t, "", 3, nil); res.Status != SkippedDuplicate {
		t.Errorf("window 3 on main after the promote: %s", res.Status)
	}
	r, err = f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{})
	if err != nil || r.Action != PromoteUpToDate {
		t.Errorf("second promote: %+v %v", r, err)
	}
}

// TestPromoteWhenMainMoved: main published windows after the fork, one of them also in dev:
// the promote is refused naming main's windows; with rebase every window is on main once and
// the window main already had is not doubled.
func TestPromoteWhenMainMoved(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	for i := 1; i <= 5; i++ {
		f.publishWindow(t, "dev", i, nil)
	}
	f.publishWindow(t, "", 3, nil) // main gets window 3 itself
	f.publishWindow(t, "", 7, nil) // and one dev does not have
	_, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{})
	var moved *MainMovedError
	if !errors.As(err, &moved) {
		t.Fatalf("promote over a moved main: %v, want *MainMovedError", err)
	}
	if len(moved.Moved) != 2 || moved.Moved[0].Window != "w03" || moved.Moved[1].Window != "w07" || !strings.Contains(err.Error(), "--rebase") {
		t.Errorf("moved %+v: %v", moved.Moved, err)
	}
	r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != PromoteRebase || len(r.Windows) != 4 || len(r.Skipped) != 1 || r.Skipped[0].Window != "w03" {
		t.Fatalf("rebase %+v", r)
	}
	counts := keyCount(t, f)
	for _, i := range []int{0, 1, 2, 3, 4, 5, 7} {
		if k := fmt.Sprintf("key-%02d", i); counts[k] != 1 {
			t.Errorf("key %s on main %d times", k, counts[k])
		}
	}
	if got := f.envQuery(t, "", "SELECT count(*) || '/' || count(DISTINCT ride_id) FROM rides"); got[0] != "21/21" {
		t.Errorf("main after the rebase: %v, want 21/21", got)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	if s := tbl.CurrentSnapshot(); s.Summary.Properties[PromotedFromProp] != "dev" || s.Summary.Properties[EnvProp] != "" {
		t.Errorf("replayed head's summary %v", s.Summary.Properties)
	}
	r, err = f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Rebase: true})
	if err != nil || r.Action != PromoteUpToDate {
		t.Errorf("promote again: %+v %v", r, err)
	}
	if got := f.envQuery(t, "", "SELECT count(*) FROM rides"); got[0] != "21" {
		t.Errorf("main after a second rebase: %v", got)
	}
}

// TestTwoEnvsAtOnce: dev and qa write the same table apart; each sees its own windows, and
// promoting one leaves the other to rebase.
func TestTwoEnvsAtOnce(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	for i := 1; i <= 3; i++ {
		f.publishWindow(t, "dev", i, nil)
		f.publishWindow(t, "qa", i+10, nil)
	}
	f.publishWindow(t, "qa", 2, nil) // same key as dev's window 2, apart
	if got := f.envQuery(t, "dev", "SELECT count(*) FROM rides"); got[0] != "12" {
		t.Errorf("dev: %v rows, want 12", got)
	}
	if got := f.envQuery(t, "qa", "SELECT count(*) FROM rides"); got[0] != "15" {
		t.Errorf("qa: %v rows, want 15", got)
	}
	if _, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cat.Promote(f.ctx, f.ref, "qa", PromoteOptions{}); err == nil {
		t.Fatal("qa fast-forwarded over dev's promote")
	}
	r, err := f.cat.Promote(f.ctx, f.ref, "qa", PromoteOptions{Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Windows) != 3 || len(r.Skipped) != 1 {
		t.Errorf("qa rebase %+v", r)
	}
	if got := f.envQuery(t, "", "SELECT count(*) || '/' || count(DISTINCT ride_id) FROM rides"); got[0] != "21/21" {
		t.Errorf("main: %v, want 21/21", got)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	if envs := Envs(tbl); len(envs) != 2 {
		t.Errorf("envs %+v", envs)
	}
	if ok, err := f.cat.DeleteEnv(f.ctx, f.ref, "qa"); !ok || err != nil {
		t.Fatalf("delete qa: %v %v", ok, err)
	}
	tbl, _ = f.cat.Load(f.ctx, f.ref)
	if envs := Envs(tbl); len(envs) != 1 || envs[0].Name != "dev" {
		t.Errorf("envs after delete %+v", envs)
	}
	if ok, _ := f.cat.DeleteEnv(f.ctx, f.ref, "qa"); ok {
		t.Error("deleted qa twice")
	}
}

// TestPromoteAudit: a window published although its checks failed holds the promote back
// unless forced.
func TestPromoteAudit(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	f.publishWindow(t, "dev", 1, nil)
	f.publishWindow(t, "dev", 2, map[string]string{ChecksProp: ChecksFailed})
	before := f.mainHead(t)
	_, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{})
	var audit *AuditError
	if !errors.As(err, &audit) || len(audit.Failed) != 1 || audit.Failed[0].Window != "w02" {
		t.Fatalf("promote with a failed window: %v", err)
	}
	if f.mainHead(t) != before {
		t.Fatal("a refused promote moved main")
	}
	if r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Force: true}); err != nil || len(r.Windows) != 2 {
		t.Fatalf("forced promote %+v %v", r, err)
	}
}

// rebaseOnce promotes dev onto a main that moved, by rebase, and checks that main then holds
// each key once and the rows want (ride:fare, by ride).
func rebaseOnce(t *testing.T, f *fixture, key string, want string) {
	t.Helper()
	before := f.mainHead(t)
	if _, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{}); err == nil {
		t.Fatal("a promote over a moved main without --rebase went through")
	}
	if f.mainHead(t) != before {
		t.Fatal("a refused promote moved main")
	}
	r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Rebase: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Action != PromoteRebase || len(r.Windows) != 1 || r.Windows[0].Key != key {
		t.Fatalf("rebase %+v", r)
	}
	for k, n := range keyCount(t, f) {
		if n != 1 {
			t.Errorf("key %s on main %d times", k, n)
		}
	}
	if got := f.envQuery(t, "", "SELECT string_agg(ride_id || ':' || fare, ' ' ORDER BY ride_id) FROM rides"); got[0] != want {
		t.Errorf("main after the rebase: %v, want %s", got, want)
	}
	if r, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Rebase: true}); err != nil || r.Action != PromoteUpToDate {
		t.Errorf("promote again: %+v %v (a window main has must not be replayed twice)", r, err)
	}
}

// TestRebaseReplaysAnOverwrite: an environment's overwrite of a window's rows is replayed on a
// main that moved with its write mode: the window's rows as main has them now (a row main
// added after the fork included) are replaced by the batch; main's other windows stay.
func TestRebaseReplaysAnOverwrite(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil) // rides 1, 2, 3 at fare 0
	f.batch(t, rideCols, "(1, 'NYC', 5.0), (2, 'BKK', 6.0)")
	below10 := func(string) (string, error) { return "ride_id < 10", nil }
	f.publish(t, PublishOptions{Key: "ow", RunID: "ow", Env: "dev", ReplaceColumn: "ride_id", ReplaceWhere: below10, WriteOptions: WriteOptions{Mode: "overwrite"}})
	if got := f.envQuery(t, "dev", "SELECT count(*) FROM rides"); got[0] != "2" {
		t.Errorf("dev after its overwrite: %v rows, want 2", got)
	}
	f.publishWindow(t, "", 5, nil)
	f.batch(t, rideCols, "(4, 'X', 1.0)")
	f.publish(t, PublishOptions{Key: "late", RunID: "late"})
	rebaseOnce(t, f, "ow", "1:5.0 2:6.0 51:5.0 52:5.0 53:5.0")
}

// TestRebaseReplaysAnUpsert: an environment's upsert is replayed on a main that moved with its
// join keys: the batch's rows replace main's rows of the same keys now, and main's other
// rows, those after the fork included, stay.
func TestRebaseReplaysAnUpsert(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil) // rides 1, 2, 3 at fare 0
	f.batch(t, rideCols, "(1, 'NYC', 9.0), (99, 'X', 9.0)")
	f.publish(t, PublishOptions{Key: "up", RunID: "up", Env: "dev", WriteOptions: WriteOptions{Mode: "upsert", JoinCols: []string{"ride_id"}}})
	f.publishWindow(t, "", 5, nil)
	rebaseOnce(t, f, "up", "1:9.0 2:0.0 3:0.0 51:5.0 52:5.0 53:5.0 99:9.0")
}

// TestEnvNames: a name that could collide with ldp's own refs, or main, is refused by rule.
func TestEnvNames(t *testing.T) {
	for _, bad := range []string{"", "main", "Dev", "1dev", "dev.x", "ldp r", strings.Repeat("a", 41)} {
		if err := CheckEnvName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, good := range []string{"dev", "alice-2", "pr_114"} {
		if err := CheckEnvName(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	if _, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k", RunID: "r", Env: "Main"}); err == nil || !strings.Contains(err.Error(), "lowercase letter") {
		t.Errorf("publish into env Main: %v", err)
	}
}

// TestEnvSurvivesRetention: main's publishes expire history under a retention of three
// snapshots; the environment's fork and snapshots stay, so its keys are still found and its
// rows read.
func TestEnvSurvivesRetention(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	if err := f.cat.SetTableProperties(f.ctx, f.ref, map[string]string{MaxSnapshotsProp: "3"}); err != nil {
		t.Fatal(err)
	}
	f.publishWindow(t, "dev", 1, nil)
	f.publishWindow(t, "dev", 2, nil)
	for i := 20; i < 28; i++ {
		f.publishWindow(t, "", i, nil)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	if n := len(Ancestry(tbl)); n > 4 {
		t.Fatalf("main kept %d snapshots: retention did not apply, so the test proves nothing", n)
	}
	for id := range EnvLive(tbl) {
		if tbl.SnapshotByID(id) == nil {
			t.Errorf("environment snapshot %d expired", id)
		}
	}
	if r := f.publishWindow(t, "dev", 1, nil); r.Status != SkippedDuplicate {
		t.Errorf("dev's window 1 after main's expiry: %s", r.Status)
	}
	if got := f.envQuery(t, "dev", "SELECT count(*) FROM rides"); got[0] != "9" {
		t.Errorf("dev: %v rows, want 9", got)
	}
	envs := Envs(tbl)
	if len(envs) != 1 || len(envs[0].Windows) != 2 || envs[0].Fork == 0 || envs[0].Behind < 3 {
		t.Errorf("envs %+v", envs)
	}
}

// TestEnvKeysStopAtTheFork: a window main publishes after the fork is not on the
// environment's branch, so the environment publishes it (its rows are not in the branch).
func TestEnvKeysStopAtTheFork(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	f.publishWindow(t, "dev", 1, nil)
	f.publishWindow(t, "", 7, nil)
	if r := f.publishWindow(t, "dev", 7, nil); r.Status != Published {
		t.Fatalf("window 7 in dev after main published it: %s, want published", r.Status)
	}
	if got := f.envQuery(t, "dev", "SELECT count(*) FROM rides"); got[0] != "9" {
		t.Errorf("dev: %v rows, want 9", got)
	}
}

// TestEnvDiff: what main lacks of dev, window by window and sorted, with its rows, operation
// and checks; a window main published itself is on main; the promote's action follows main.
func TestEnvDiff(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := EnvDiff(tbl, "dev", time.Now()); err != nil || d.Written || d.Promote != PromoteNoEnv || len(d.Lacks) != 0 {
		t.Fatalf("an environment that has not written the table: %+v %v", d, err)
	}
	for _, i := range []int{3, 1, 2} {
		f.publishWindow(t, "dev", i, nil)
	}
	f.publishWindow(t, "dev", 4, map[string]string{ChecksProp: ChecksFailed})
	tbl, _ = f.cat.Load(f.ctx, f.ref)
	d, err := EnvDiff(tbl, "dev", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range d.Lacks {
		got = append(got, fmt.Sprintf("%s %s %s %d %s", w.Window, w.Key, w.Operation, w.Rows, w.Checks))
	}
	want := []string{"w01 key-01 append 3 passed", "w02 key-02 append 3 passed", "w03 key-03 append 3 passed", "w04 key-04 append 3 failed"}
	if fmt.Sprint(got) != fmt.Sprint(want) || d.Promote != PromoteFastForward || d.MainMoved != 0 || len(d.OnMain) != 0 {
		t.Fatalf("diff %v (%s, main moved %d), want %v", got, d.Promote, d.MainMoved, want)
	}
	f.publishWindow(t, "", 2, nil) // main publishes window 2 itself
	tbl, _ = f.cat.Load(f.ctx, f.ref)
	d, err = EnvDiff(tbl, "dev", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Lacks) != 3 || len(d.OnMain) != 1 || d.OnMain[0].Window != "w02" || d.Promote != PromoteRebase || d.MainMoved != 1 {
		t.Fatalf("diff after main moved: %+v", d)
	}
	if _, err := f.cat.Promote(f.ctx, f.ref, "dev", PromoteOptions{Rebase: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	tbl, _ = f.cat.Load(f.ctx, f.ref)
	if d, err = EnvDiff(tbl, "dev", time.Now()); err != nil || len(d.Lacks) != 0 || len(d.OnMain) != 4 || d.Promote != PromoteUpToDate {
		t.Fatalf("diff after the promote: %+v %v", d, err)
	}
}

// TestRebaseReplaysAWholeTableOverwrite: an overwrite of the whole table in dev replaces, on a
// main that moved, everything main holds now: the write mode says so.
func TestRebaseReplaysAWholeTableOverwrite(t *testing.T) {
	f := newFixture(t)
	f.publishWindow(t, "", 0, nil)
	f.batch(t, rideCols, "(7, 'NYC', 7.0)")
	f.publish(t, PublishOptions{Key: "all", RunID: "all", Env: "dev", WriteOptions: WriteOptions{Mode: "overwrite"}})
	f.publishWindow(t, "", 5, nil)
	rebaseOnce(t, f, "all", "7:7.0")
}
