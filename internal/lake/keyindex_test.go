package lake

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// stripIndex detaches every key index from the table, leaving it as a table written by an
// ldp without one (whose publishes carry keys only in summaries).
func stripIndex(t *testing.T, f *fixture) {
	t.Helper()
	tbl := mustLoad(t, f)
	var updates []table.Update
	for id := range indexStats(tbl) {
		updates = append(updates, table.NewRemoveStatisticsUpdate(id))
	}
	if len(updates) == 0 {
		t.Fatal("the table has no key index to strip")
	}
	if err := f.cat.commit(f.ctx, f.ref, nil, updates); err != nil {
		t.Fatal(err)
	}
}

// expireAllButHead expires every snapshot of main except its head, as another engine's
// expiry would (iceberg-go's, which deletes the expired snapshots' files): only the ldp.init
// snapshot the key index tag holds stays.
func expireAllButHead(t *testing.T, f *fixture) {
	t.Helper()
	tx := mustLoad(t, f).NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(f.ctx); err != nil {
		t.Fatal(err)
	}
	tbl := mustLoad(t, f)
	want := 1
	if init := initSnapshot(tbl); init != nil && init.SnapshotID != tbl.CurrentSnapshot().SnapshotID {
		want = 2
	}
	if n := len(tbl.Metadata().Snapshots()); n != want {
		t.Fatalf("%d snapshots after expiry, want %d (main's head and the tagged ldp.init)", n, want)
	}
}

func indexedKeys(t *testing.T, f *fixture) []string {
	t.Helper()
	tbl := mustLoad(t, f)
	if _, ok := indexStats(tbl)[tbl.CurrentSnapshot().SnapshotID]; !ok {
		t.Fatalf("main's head %d carries no key index", tbl.CurrentSnapshot().SnapshotID)
	}
	keys, err := KeysOnMain(f.ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestExpiredKeysStayDone: every publish attaches the index to the snapshot it moves main to,
// so keys whose snapshots were expired are still found: their windows are skipped, the rows
// land once, and a new key still publishes.
func TestExpiredKeysStayDone(t *testing.T) {
	for _, mode := range v1.WriteModes {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			f.batch(t, rideCols, rideVals)
			wo := rideWrite(mode)
			first := map[string]int64{}
			for _, k := range []string{"k1", "k2", "k3"} {
				first[k] = f.publish(t, PublishOptions{Key: k, RunID: "run-" + k, WriteOptions: wo}).SnapshotID
			}
			rows := f.query(t, "SELECT count(*) FROM rides")[0]
			expireAllButHead(t, f)
			indexFiles = &recent[*keyIndexData]{size: 4} // another process: nothing parsed yet
			keyIndexes = &recent[*mainKeys]{size: 4}
			for _, k := range []string{"k1", "k2"} {
				r := f.publish(t, PublishOptions{Key: k, RunID: "again-" + k, WriteOptions: wo})
				if r.Status != SkippedDuplicate || r.SnapshotID != first[k] {
					t.Errorf("re-run of expired %s: %s at %d, want skipped at %d", k, r.Status, r.SnapshotID, first[k])
				}
			}
			if got := f.query(t, "SELECT count(*) FROM rides")[0]; got != rows {
				t.Errorf("rows %s after the re-runs, want %s", got, rows)
			}
			if r := f.publish(t, PublishOptions{Key: "k4", RunID: "run-k4", WriteOptions: wo}); r.Status != Published {
				t.Errorf("a new key: %s", r.Status)
			}
			if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3 k4" {
				t.Errorf("index holds %v", got)
			}
			// A reindex carries the keys of the expired snapshots forward: they are nowhere else.
			if res, err := f.cat.Reindex(f.ctx, f.ref); err != nil || res.Keys != 4 || res.Gap {
				t.Errorf("reindex after expiry: %+v, %v", res, err)
			}
			if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3 k4" {
				t.Errorf("index after the reindex holds %v", got)
			}
			s, err := FindKey(mustLoad(t, f), "k1", time.Now().Add(365*24*time.Hour))
			if err != nil || s == nil || s.Summary.Properties[RunIDProp] != "run-k1" {
				t.Errorf("a year on, k1: %v, %v", s, err)
			}
		})
	}
}

// TestBrokenIndexFailsClosed: an index file that is missing or does not check out stops the
// publish with the file and the command that rebuilds it; nothing is written. The rebuild
// reads the summaries and the table works again, the key still found.
func TestBrokenIndexFailsClosed(t *testing.T) {
	for _, fault := range []string{"missing", "corrupt"} {
		t.Run(fault, func(t *testing.T) {
			f := newFixture(t)
			f.batch(t, rideCols, rideVals)
			f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
			tbl := mustLoad(t, f)
			sf := indexStats(tbl)[tbl.CurrentSnapshot().SnapshotID]
			path := localPath(sf.StatisticsPath)
			indexFiles = &recent[*keyIndexData]{size: 4} // another process: nothing parsed yet
			keyIndexes = &recent[*mainKeys]{size: 4}
			if fault == "missing" {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			} else {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				b[5] ^= 0xff // inside the blob: the footer still parses, the checksum does not
				if err := os.WriteFile(path, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k2", RunID: "r2"})
			var bad *KeyIndexError
			if !errors.As(err, &bad) || !strings.Contains(err.Error(), sf.StatisticsPath) || !strings.Contains(err.Error(), "ldp catalog reindex SPEC") {
				t.Fatalf("publish over a %s index: err = %v", fault, err)
			}
			if _, err := FindKey(mustLoad(t, f), "k1", time.Now()); !errors.As(err, &bad) {
				t.Errorf("a search over a %s index: err = %v, want a KeyIndexError", fault, err)
			}
			if got := f.query(t, "SELECT count(*) FROM rides")[0]; got != "3" {
				t.Errorf("rows %s, want 3", got)
			}
			res, err := f.cat.Reindex(f.ctx, f.ref)
			if err != nil || res.Keys != 1 || !res.Rebuilt || res.Gap {
				t.Fatalf("reindex: %+v, %v", res, err)
			}
			if r := f.publish(t, PublishOptions{Key: "k1", RunID: "r3"}); r.Status != SkippedDuplicate {
				t.Errorf("k1 after the rebuild: %s", r.Status)
			}
			if r := f.publish(t, PublishOptions{Key: "k2", RunID: "r2"}); r.Status != Published {
				t.Errorf("k2 after the rebuild: %s", r.Status)
			}
		})
	}
}

// TestTableWithoutIndexIsIndexed: a table written by an ldp without the index gets one built
// from its ancestry at its next publish (or by Reindex), with no data file rewritten.
func TestTableWithoutIndexIsIndexed(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
	stripIndex(t, f)
	files := dataFiles(t, f)
	f.publish(t, PublishOptions{Key: "k3", RunID: "r3"})
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3" {
		t.Errorf("index holds %v", got)
	}
	after := dataFiles(t, f)
	for p := range files {
		if !after[p] {
			t.Errorf("data file %s was rewritten", p)
		}
	}
	if len(after) != len(files)+1 {
		t.Errorf("%d data files, want %d", len(after), len(files)+1)
	}
	// The same table, reindexed without a publish.
	stripIndex(t, f)
	if res, err := f.cat.Reindex(f.ctx, f.ref); err != nil || res.Keys != 3 || res.Rebuilt {
		t.Fatalf("reindex: %+v, %v", res, err)
	}
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3" {
		t.Errorf("reindexed: index holds %v", got)
	}
}

func dataFiles(t *testing.T, f *fixture) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.Walk(localPath(mustLoad(t, f).Location()), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			out[p] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConcurrentPublishersKeepEveryKey: eight writers publish at once, each on its own catalog
// handle; the index on main's head holds every key and main each key once.
func TestConcurrentPublishersKeepEveryKey(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k-base", RunID: "base"})
	var writers []*fixture
	for i := 0; i < 8; i++ {
		w := newFixtureOn(t, f)
		w.batch(t, rideCols, rideVals)
		writers = append(writers, w)
	}
	start := make(chan struct{})
	errs := make(chan error, len(writers))
	for i, w := range writers {
		go func() {
			<-start
			_, err := w.cat.Publish(w.ctx, w.db, "batch", w.ref, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i), Sleep: func(d time.Duration) { time.Sleep(d) }})
			errs <- err
		}()
	}
	close(start)
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("a writer failed: %v", err)
		}
	}
	want := "k-base k0 k1 k2 k3 k4 k5 k6 k7"
	if got := indexedKeys(t, f); strings.Join(got, " ") != want {
		t.Errorf("index holds %v, want %s", got, want)
	}
	for k, n := range keyCount(t, f) {
		if n != 1 {
			t.Errorf("key %s %d times on main", k, n)
		}
	}
	if n := len(indexStats(mustLoad(t, f))); n != 1 {
		t.Errorf("%d key indexes in the metadata, want 1 (older ones are detached)", n)
	}
}

// TestSupersededIndexFilesAreRemoved: each publish supersedes its parent's index; the
// superseded files (and a stray one a killed publish left) go with the old metadata files once
// they are a minute older than the current metadata, and the current one stays.
func TestSupersededIndexFilesAreRemoved(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
	dir := filepath.Dir(localPath(mustLoad(t, f).MetadataLocation()))
	stray := filepath.Join(dir, "ldp-keys-1-stray.puffin")
	if err := os.WriteFile(stray, []byte("left by a killed publish"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * time.Minute)
	files, _ := filepath.Glob(filepath.Join(dir, "ldp-keys-*.puffin"))
	if len(files) != 4 {
		t.Fatalf("index files %v, want two publishes' deltas, their base and the stray one", files)
	}
	for _, p := range files {
		os.Chtimes(p, old, old)
	}
	f.publish(t, PublishOptions{Key: "k3", RunID: "r3"})
	tbl := mustLoad(t, f)
	files, _ = filepath.Glob(filepath.Join(dir, "ldp-keys-*.puffin"))
	var cur []string
	for _, p := range IndexFiles(tbl) {
		cur = append(cur, localPath(p))
	}
	sort.Strings(cur)
	if len(cur) != 2 || strings.Join(files, " ") != strings.Join(cur, " ") {
		t.Errorf("index files %v, want only the current delta and its base %v", files, cur)
	}
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3" {
		t.Errorf("index holds %v", got)
	}
}

// TestSpecHashesSurviveExpiry: the spec hashes a window's replace keys are made from come from
// the index too, so a window a replace loaded first is still found after its snapshot expired.
func TestSpecHashesSurviveExpiry(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1", WriteOptions: WriteOptions{SnapshotProps: map[string]string{SpecHashProp: "h1"}}})
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2", WriteOptions: WriteOptions{SnapshotProps: map[string]string{SpecHashProp: "h2"}}})
	f.publish(t, PublishOptions{Key: "k3", RunID: "r3"})
	expireAllButHead(t, f)
	if got := SpecHashes(mustLoad(t, f)); strings.Join(got, " ") != "h1 h2" {
		t.Errorf("spec hashes after expiry %v, want [h1 h2]", got)
	}
}

// rideWrite is how the ride fixture is written in mode: an upsert joins on ride_id.
func rideWrite(mode v1.WriteMode) WriteOptions {
	wo := WriteOptions{Mode: mode}
	if mode == v1.WriteUpsert {
		wo.JoinCols = []string{"ride_id"}
	}
	return wo
}

// TestRecentSupersededFilesAreBounded: a fast backfill supersedes hundreds of metadata files
// within the minute they are kept for readers; beyond the newest keepRecent they are removed
// at once, the newest kept, so files under metadata/ stay bounded however fast windows commit.
func TestRecentSupersededFilesAreBounded(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	dir := filepath.Dir(localPath(mustLoad(t, f).MetadataLocation()))
	now := time.Now()
	for i := range keepRecent + 50 {
		p := filepath.Join(dir, fmt.Sprintf("%05d-superseded.metadata.json", i))
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Duration(i-keepRecent-50) * 100 * time.Millisecond) // i = newest last
		os.Chtimes(p, at, at)
	}
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
	left, _ := filepath.Glob(filepath.Join(dir, "*-superseded.metadata.json"))
	if len(left) > keepRecent {
		t.Errorf("%d superseded metadata files younger than a minute kept, want at most %d", len(left), keepRecent)
	}
	newest := filepath.Join(dir, fmt.Sprintf("%05d-superseded.metadata.json", keepRecent+49))
	if _, err := os.Stat(newest); err != nil {
		t.Errorf("the newest superseded file was removed: %v", err)
	}
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2" {
		t.Errorf("index holds %v", got)
	}
}
