package lake

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
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
		if name != "main" {
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
	f.write(t, WriteOptions{Mode: Append})
	f.batch(t, "id, day", "(10, DATE '2026-09-01')")
	f.publish(t, PublishOptions{Key: "day1-v2", RunID: "r", WriteOptions: WriteOptions{Mode: Overwrite},
		ReplaceWhere: `("day" >= DATE '2026-09-01' AND "day" < DATE '2026-09-02')`})
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
