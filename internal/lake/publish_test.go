package lake

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

func keyCount(t *testing.T, f *fixture) map[string]int {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for s := tbl.CurrentSnapshot(); s != nil; {
		if k := s.Summary.Properties[KeyProp]; k != "" {
			out[k]++
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}

func (f *fixture) publish(t *testing.T, o PublishOptions) *PublishResult {
	t.Helper()
	res, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPublishOnceThenSkip(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	r1 := f.publish(t, PublishOptions{Key: "k1", RunID: "run-1"})
	r2 := f.publish(t, PublishOptions{Key: "k1", RunID: "run-2"})
	r3 := f.publish(t, PublishOptions{Key: "k2", RunID: "run-3"})
	if r1.Status != Published || r2.Status != SkippedDuplicate || r3.Status != Published {
		t.Fatalf("statuses %s %s %s", r1.Status, r2.Status, r3.Status)
	}
	if r2.SnapshotID != r1.SnapshotID || r2.RowsWritten != 0 {
		t.Errorf("skip result %+v does not point at the first publish", r2)
	}
	if got := keyCount(t, f); got["k1"] != 1 || got["k2"] != 1 {
		t.Errorf("keys on main %v", got)
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "6" {
		t.Errorf("rows %v, want 6", got)
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	for name := range tbl.Metadata().Refs() {
		if name != "main" && name != KeyIndexTag {
			t.Errorf("branch %s left behind", name)
		}
	}
	s := tbl.CurrentSnapshot()
	if s.Summary.Properties[RunIDProp] != "run-3" || s.Summary.Properties[AttemptProp] != "1" {
		t.Errorf("summary %v", s.Summary.Properties)
	}
}

// TestMainMovesUnderThePublish: another writer publishes between our stage and our publish;
// ours re-stages on the new main, and both keys land once.
func TestMainMovesUnderThePublish(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	other := newFixtureOn(t, f)
	other.batch(t, rideCols, "(7, 'NYC', 1.0)")
	interfered := false
	res := f.publish(t, PublishOptions{Key: "k1", RunID: "r1", Sleep: noSleep, Hook: func(p string) {
		if p == "staged" && !interfered {
			interfered = true
			other.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
		}
	}})
	if res.Status != Published || res.Tries != 2 {
		t.Errorf("result %+v, want published on the second try", res)
	}
	if got := keyCount(t, f); got["k0"] != 1 || got["k1"] != 1 || got["k2"] != 1 {
		t.Errorf("keys on main %v", got)
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "7" {
		t.Errorf("rows %v, want 7", got)
	}
}

// TestALaterAttemptFencesAZombie: attempt 1 stages and stalls; attempt 2 of the same run
// fences it and publishes; attempt 1 then cannot publish.
func TestALaterAttemptFencesAZombie(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	other := newFixtureOn(t, f)
	other.batch(t, rideCols, rideVals)
	_, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k1", RunID: "run", Attempt: 1, Sleep: noSleep, Hook: func(p string) {
		if p == "staged" {
			other.publish(t, PublishOptions{Key: "k1", RunID: "run", Attempt: 2})
		}
	}})
	var fenced *FencedError
	if !errors.As(err, &fenced) || !strings.Contains(err.Error(), "attempt 1 of run run was fenced") {
		t.Fatalf("err = %v, want a FencedError", err)
	}
	if got := keyCount(t, f); got["k1"] != 1 {
		t.Errorf("keys on main %v", got)
	}
}

func TestWindowedOverwriteReplacesOnlyItsRows(t *testing.T) {
	f := newFixture(t)
	f.batch(t, "id, day", "(1, DATE '2026-09-01'), (2, DATE '2026-09-01'), (3, DATE '2026-09-02')")
	f.write(t, WriteOptions{Mode: v1.WriteAppend})
	f.batch(t, "id, day", "(10, DATE '2026-09-01')")
	f.publish(t, PublishOptions{Key: "day1-v2", RunID: "r", WriteOptions: WriteOptions{Mode: v1.WriteOverwrite},
		ReplaceColumn: "day", ReplaceWhere: func(string) (string, error) { return `("day" >= DATE '2026-09-01' AND "day" < DATE '2026-09-02')`, nil }})
	if got := f.query(t, "SELECT list(id ORDER BY id) FROM rides"); got[0] != "[3 10]" {
		t.Errorf("rows %v, want [3 10]", got)
	}
}

func noSleep(time.Duration) {}

// TestKeySearchFailsClosed: on a table written before the key index, when snapshots inside the
// idempotency horizon were expired, the search cannot prove a key absent, and the publish
// refuses rather than risk a second effect (the index it then writes records the gap).
func TestKeySearchFailsClosed(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	for _, k := range []string{"k1", "k2", "k3"} {
		f.publish(t, PublishOptions{Key: k, RunID: k})
	}
	stripIndex(t, f)
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	tbl, _ = f.cat.Load(f.ctx, f.ref)
	if s, err := FindKey(tbl, "k3", time.Now()); err != nil || s == nil {
		t.Errorf("the key of the kept head: %v, %v", s, err)
	}
	var unprovable *UnprovableError
	if _, err := FindKey(tbl, "k1", time.Now()); !errors.As(err, &unprovable) {
		t.Errorf("search for an expired key: err = %v, want an UnprovableError", err)
	}
	_, err = f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k1", RunID: "again"})
	if !errors.As(err, &unprovable) || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("publish: err = %v", err)
	}
	// Past the horizon, absence counts as proven.
	if s, err := FindKey(tbl, "k1", time.Now().Add(8*24*time.Hour)); err != nil || s != nil {
		t.Errorf("search past the horizon: %v, %v", s, err)
	}
}

// TestWritersCreateATableAtOnce: four writers publish to a table and namespace that do not
// exist yet, at the same moment; every key lands once.
func TestWritersCreateATableAtOnce(t *testing.T) {
	f := newFixture(t)
	f.ref = Ref{Namespace: "fresh", Name: "t"}
	var writers []*fixture
	for i := 0; i < 4; i++ {
		w := newFixtureOn(t, f)
		w.ref = f.ref
		w.batch(t, rideCols, rideVals)
		writers = append(writers, w)
	}
	start := make(chan struct{})
	errs := make(chan error, len(writers))
	for i, w := range writers {
		go func() {
			<-start
			_, err := w.cat.Publish(w.ctx, w.db, "batch", w.ref, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i)})
			errs <- err
		}()
	}
	close(start)
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("a writer failed: %v", err)
		}
	}
	if got := keyCount(t, f); len(got) != 4 {
		t.Errorf("keys on main %v, want 4", got)
	}
}

// TestACreateThatLostTheRaceIsNoLostCatalog: a writer found no table in the catalog, and
// before it listed the warehouse another writer created the table and committed to it. The
// files it lists then look like a lost catalog's (version 1 and later, beside no row it saw),
// yet the table is in the catalog: the writer must go on and use it, not refuse with "the
// catalog may have been deleted" (TestWritersCreateATableAtOnce failed so on a busy machine).
// Only when the row is really gone does it refuse.
func TestACreateThatLostTheRaceIsNoLostCatalog(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	late := newFixtureOn(t, f)
	// late's Load missed the row before f created it; this is what late does next.
	if err := late.cat.refuseOrphaned(late.ctx, late.ref); err != nil {
		t.Fatalf("the table another writer just created: %v, want it used", err)
	}
	q := `DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`
	if _, err := f.cat.db.ExecContext(f.ctx, q, f.cat.Identifier, f.ref.Namespace, f.ref.Name); err != nil {
		t.Fatal(err)
	}
	var oe *OrphanedTableError
	if err := late.cat.refuseOrphaned(late.ctx, late.ref); !errors.As(err, &oe) {
		t.Fatalf("the table whose catalog row is gone: %v, want an *OrphanedTableError", err)
	}
}

// TestFenceIsAssertedByThePublishCommit: attempt 2 of a run begins while attempt 1 has staged
// and not yet published, and main does not move. Attempt 1's publish commit asserts that no
// later attempt began, so it fails and attempt 1 is fenced: nothing of it reaches main, not
// even under a key of its own. Attempt 2 then publishes.
func TestFenceIsAssertedByThePublishCommit(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	_, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k1", RunID: "r", Attempt: 1, Sleep: noSleep, Hook: func(p string) {
		if p == "staged" {
			if err := f.cat.fence(f.ctx, f.ref, "r", 2); err != nil {
				t.Fatal(err)
			}
		}
	}})
	var fe *FencedError
	if !errors.As(err, &fe) || fe.Attempt != 1 {
		t.Fatalf("attempt 1 after attempt 2 began: %v, want a *FencedError", err)
	}
	if got := keyCount(t, f); len(got) != 0 {
		t.Fatalf("keys on main %v, want none", got)
	}
	f.publish(t, PublishOptions{Key: "k2", RunID: "r", Attempt: 2})
	if _, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k3", RunID: "r", Attempt: 1}); !errors.As(err, &fe) {
		t.Fatalf("attempt 1 once more: %v, want a *FencedError", err)
	}
	if got := keyCount(t, f); len(got) != 1 || got["k2"] != 1 {
		t.Errorf("keys on main %v, want k2 once", got)
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Errorf("rows %v, want 3", got)
	}
}

// TestFenceTakesConstantSpace: the fence of a run is at most two tags whatever its attempt (a
// tag per attempt grew the metadata from 3 KB to 1.6 MB at --attempt 20000, and --attempt
// 1700000000 ran out of memory), a table that an older ldp fenced with a tag per attempt is
// cleaned by the next fence, and the guarantee holds: no attempt older than the newest
// publishes, whether it begins late or was staged when the newer one fenced it.
func TestFenceTakesConstantSpace(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r", Attempt: 1})
	fenceRefs := func() []string {
		t.Helper()
		var names []string
		for name := range mustLoad(t, f).Metadata().Refs() {
			if strings.HasPrefix(name, "ldp_fence_") {
				names = append(names, name)
			}
		}
		return names
	}
	// What an older ldp left: a tag for each of attempts 2..50.
	tbl := mustLoad(t, f)
	var old []table.Update
	for a := 2; a <= 50; a++ {
		old = append(old, table.NewSetSnapshotRefUpdate(fenceTag("r", a), tbl.CurrentSnapshot().SnapshotID, table.TagRef, 0, 0, 0))
	}
	if err := f.cat.commit(f.ctx, f.ref, nil, old); err != nil {
		t.Fatal(err)
	}
	var fe *FencedError
	for _, attempt := range []int{49, 1} {
		if _, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: fmt.Sprintf("old-%d", attempt), RunID: "r", Attempt: attempt}); !errors.As(err, &fe) {
			t.Fatalf("attempt %d after an older ldp's attempt 50: %v, want a *FencedError", attempt, err)
		}
	}
	f.publish(t, PublishOptions{Key: "k51", RunID: "r", Attempt: 51})
	if got := fenceRefs(); len(got) != 2 {
		t.Fatalf("fence refs after attempt 51: %v, want the marker and attempt 51's tag", got)
	}
	size := func() int64 {
		t.Helper()
		info, err := os.Stat(localPath(mustLoad(t, f).MetadataLocation()))
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	before := size()

	// Attempt 20000 is staged when attempt 1700000000 begins: its publish commit fails.
	_, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k20000", RunID: "r", Attempt: 20000, Sleep: noSleep, Hook: func(p string) {
		if p == "staged" {
			if err := f.cat.fence(f.ctx, f.ref, "r", 1700000000); err != nil {
				t.Fatal(err)
			}
		}
	}})
	if !errors.As(err, &fe) || fe.Attempt != 20000 {
		t.Fatalf("attempt 20000 staged when attempt 1700000000 began: %v, want a *FencedError", err)
	}
	f.publish(t, PublishOptions{Key: "k1700000000", RunID: "r", Attempt: 1700000000})
	for _, attempt := range []int{1, 2, 51, 20000, 1699999999} {
		if _, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: fmt.Sprintf("late-%d", attempt), RunID: "r", Attempt: attempt}); !errors.As(err, &fe) {
			t.Fatalf("attempt %d after attempt 1700000000: %v, want a *FencedError", attempt, err)
		}
	}
	if got := fenceRefs(); len(got) != 2 || !slices.Contains(got, fenceTag("r", 1700000000)) {
		t.Fatalf("fence refs after attempt 1700000000: %v, want the marker and its tag", got)
	}
	// Two more snapshots on main, no more fence: a few hundred bytes, not a tag per attempt.
	if after := size(); after > before+4096 {
		t.Errorf("metadata grew from %d to %d bytes over attempts 51 to 1700000000", before, after)
	}
	if got := keyCount(t, f); len(got) != 3 || got["k1"] != 1 || got["k51"] != 1 || got["k1700000000"] != 1 {
		t.Errorf("keys on main %v, want k1, k51 and k1700000000 once each", got)
	}
}

// TestClockBehindTheLastCommit: the table's last commit is dated 10 minutes ahead of this
// machine's clock (the clock was stepped back after it). A publish fails, retriable, saying
// the clock is behind the table's last commit and by how much, and writes nothing (it failed
// with iceberg-go's "invalid update timestamp ... before last snapshot log entry").
func TestClockBehindTheLastCommit(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	// Date the last commit 10 minutes ahead: a new metadata file, and the catalog row moved
	// to it, as a commit would.
	tbl := mustLoad(t, f)
	b, err := os.ReadFile(localPath(tbl.MetadataLocation()))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	ahead := float64(10 * time.Minute / time.Millisecond)
	meta["last-updated-ms"] = meta["last-updated-ms"].(float64) + ahead
	log := meta["snapshot-log"].([]any)
	last := log[len(log)-1].(map[string]any)
	last["timestamp-ms"] = last["timestamp-ms"].(float64) + ahead
	lastMs := int64(last["timestamp-ms"].(float64))
	if b, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	loc := strings.TrimSuffix(tbl.MetadataLocation(), ".metadata.json") + "-ahead.metadata.json"
	if err := os.WriteFile(localPath(loc), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cat.db.ExecContext(f.ctx, `UPDATE iceberg_tables SET metadata_location = ? WHERE table_name = ?`, loc, f.ref.Name); err != nil {
		t.Fatal(err)
	}

	_, err = f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k2", RunID: "r2"})
	var cb *ClockBehindError
	if !errors.As(err, &cb) {
		t.Fatalf("a publish with the clock behind the last commit: %v, want a *ClockBehindError", err)
	}
	if cb.Behind < 9*time.Minute || cb.Behind > 11*time.Minute || cb.Last.UnixMilli() != lastMs {
		t.Errorf("behind by %s, last commit at %s: want about 10m, at %s", cb.Behind, cb.Last, time.UnixMilli(lastMs))
	}
	if !strings.Contains(err.Error(), "the clock of this machine is 10m0s behind the last commit to lake.rides") && !strings.Contains(err.Error(), "the clock of this machine is 9m59s behind the last commit to lake.rides") {
		t.Errorf("message %q does not say how far the clock is behind", err)
	}
	var r interface{ Retriable() bool }
	if !errors.As(err, &r) || !r.Retriable() {
		t.Errorf("%v is not retriable", err)
	}
	if got := keyCount(t, f); len(got) != 1 || got["k1"] != 1 {
		t.Errorf("keys on main %v, want k1 alone", got)
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "3" {
		t.Errorf("rows %v, want 3", got)
	}
}

// TestOlderAttemptReadsTheLockHolder: a write of attempt 3 of run r-1 goes on without the
// table's lock only when what the holder wrote names an older attempt of that very run.
func TestOlderAttemptReadsTheLockHolder(t *testing.T) {
	started := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		holder Owner
		want   bool
	}{
		{Owner{PID: 7, Host: "h", Started: started, RunID: "r-1", Attempt: 2}, true},
		{Owner{PID: 7, Host: "h", RunID: "r-1", Attempt: 1}, true},
		{Owner{PID: 7, Host: "h", Started: started, RunID: "r-1", Attempt: 3}, false},
		{Owner{PID: 7, Host: "h", Started: started, RunID: "r-1", Attempt: 30}, false},
		{Owner{PID: 7, Host: "h", Started: started, RunID: "xr-1", Attempt: 1}, false},
		{Owner{PID: 7, Host: "h", Started: started, RunID: "r-10", Attempt: 1}, false},
		{Owner{PID: 7, Host: "h", Started: started}, false},
	} {
		if got := olderAttempt(c.holder.String(), "r-1", 3); got != c.want {
			t.Errorf("olderAttempt(%q) = %v, want %v", c.holder.String(), got, c.want)
		}
	}
}
