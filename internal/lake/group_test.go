package lake

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// currentVersion is the version number in the name of the table's current metadata file: it
// goes up by one with each catalog commit.
func currentVersion(t *testing.T, f *fixture) int {
	t.Helper()
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	n := metadataVersion(tbl.MetadataLocation())
	if n < 0 {
		t.Fatalf("metadata file %s has no version", tbl.MetadataLocation())
	}
	return n
}

type groupRun struct {
	f   *fixture
	o   PublishOptions
	res *PublishResult
	err error
}

// publishInGroup publishes each run's batch through one group, every run entered before any
// starts, so they all gather in one batch.
func publishInGroup(t *testing.T, runs []*groupRun) {
	t.Helper()
	publishThrough(t, NewGroup(len(runs), DefaultGroupSize), runs)
}

func publishThrough(t *testing.T, g *Group, runs []*groupRun) {
	t.Helper()
	for range runs {
		g.Enter()
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.Leave()
			r.o.Group = g
			r.res, r.err = r.f.cat.Publish(r.f.ctx, r.f.db, "batch", r.f.ref, r.o)
		}()
	}
	wg.Wait()
}

// TestGroupPublishesEachKeyOnceInOneCommit: eight windows waiting together go onto main in one
// commit, each its own snapshot with its own key, in window order; a window whose key is
// already on main is skipped.
func TestGroupPublishesEachKeyOnceInOneCommit(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0", WriteOptions: WriteOptions{SnapshotProps: map[string]string{WindowProp: "w0"}}})
	before := currentVersion(t, f)
	var runs []*groupRun
	// Started in reverse, so the commit must put them in order.
	for i := 8; i >= 0; i-- {
		o := newFixtureOn(t, f)
		o.batch(t, rideCols, fmt.Sprintf("(%d, 'NYC', 1.0)", 100+i))
		runs = append(runs, &groupRun{f: o, o: PublishOptions{Key: "k" + strconv.Itoa(i), RunID: "r" + strconv.Itoa(i),
			WriteOptions: WriteOptions{SnapshotProps: map[string]string{WindowProp: "w" + strconv.Itoa(i)}}}})
	}
	publishInGroup(t, runs)
	for _, r := range runs {
		if r.err != nil {
			t.Fatalf("%s: %v", r.o.Key, r.err)
		}
		want := Published
		if r.o.Key == "k0" {
			want = SkippedDuplicate
		}
		if r.res.Status != want {
			t.Errorf("%s: status %s, want %s", r.o.Key, r.res.Status, want)
		}
	}
	if got := currentVersion(t, f) - before; got != 1 {
		t.Errorf("the group took %d catalog commits, want 1", got)
	}
	for k, n := range keyCount(t, f) {
		if n != 1 {
			t.Errorf("key %s is on main %d times", k, n)
		}
	}
	tbl, _ := f.cat.Load(f.ctx, f.ref)
	var windows []string
	for s := tbl.CurrentSnapshot(); s != nil && s.ParentSnapshotID != nil; s = tbl.SnapshotByID(*s.ParentSnapshotID) {
		windows = append([]string{s.Summary.Properties[WindowProp]}, windows...)
	}
	if got := strings.Join(windows, ","); got != "w0,w1,w2,w3,w4,w5,w6,w7,w8" {
		t.Errorf("snapshots on main in window order %s", got)
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "11" {
		t.Errorf("rows %v, want 3 + 8", got)
	}
	for _, r := range runs {
		if r.o.Key == "k3" && (r.res.RowsBefore != 3+2 || r.res.RowsAfter != 3+3) {
			t.Errorf("k3 rows before/after %d/%d, want 5/6", r.res.RowsBefore, r.res.RowsAfter)
		}
	}
}

// TestGroupLeavesANewColumnToItsOwnCommit: a batch with a column the table lacks changes the
// schema, so it publishes alone with its column; the others of its group are published too.
func TestGroupLeavesANewColumnToItsOwnCommit(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	var runs []*groupRun
	for i := 1; i <= 3; i++ {
		o := newFixtureOn(t, f)
		if i == 2 {
			o.batch(t, rideCols+", tip", fmt.Sprintf("(%d, 'NYC', 1.0, 0.5)", i))
		} else {
			o.batch(t, rideCols, fmt.Sprintf("(%d, 'NYC', 1.0)", i))
		}
		runs = append(runs, &groupRun{f: o, o: PublishOptions{Key: "k" + strconv.Itoa(i), RunID: "r" + strconv.Itoa(i)}})
	}
	publishInGroup(t, runs)
	for _, r := range runs {
		if r.err != nil || r.res.Status != Published {
			t.Fatalf("%s: %+v %v", r.o.Key, r.res, r.err)
		}
	}
	if got := keyCount(t, f); got["k1"] != 1 || got["k2"] != 1 || got["k3"] != 1 {
		t.Errorf("keys on main %v", got)
	}
	if got := f.query(t, "SELECT count(*), sum(tip) FROM rides"); got[0] != "6|0.5" {
		t.Errorf("rows and tips %v, want 6|0.5", got)
	}
}

// TestAFullGroupHoldsRunsBackAndDrains: with more runs at once than the group lets wait (two
// batches of two), the runs beyond that wait for room, holding their slots, and every window
// is still published once.
func TestAFullGroupHoldsRunsBackAndDrains(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k-base", RunID: "r-base"})
	var runs []*groupRun
	for i := range 9 {
		o := newFixtureOn(t, f)
		o.batch(t, rideCols, fmt.Sprintf("(%d, 'NYC', 1.0)", 100+i))
		runs = append(runs, &groupRun{f: o, o: PublishOptions{Key: "k" + strconv.Itoa(i), RunID: "r" + strconv.Itoa(i),
			WriteOptions: WriteOptions{SnapshotProps: map[string]string{WindowProp: "w" + strconv.Itoa(i)}}}})
	}
	g := NewGroup(len(runs), 2)
	if cap(g.queued) != 4 {
		t.Fatalf("a group of 2 lets %d batches wait, want 4", cap(g.queued))
	}
	publishThrough(t, g, runs)
	for _, r := range runs {
		if r.err != nil || r.res.Status != Published {
			t.Errorf("%s: %+v %v", r.o.Key, r.res, r.err)
		}
	}
	for k, n := range keyCount(t, f) {
		if n != 1 {
			t.Errorf("key %s is on main %d times", k, n)
		}
	}
	if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != "12" {
		t.Errorf("rows %v, want 3 + 9", got)
	}
}
