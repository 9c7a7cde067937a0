package lake

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// filesUnder lists the names under the table's metadata folder that match pattern, and the
// data files under its data folder.
func filesUnder(t *testing.T, f *fixture, pattern string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(localPath(mustLoad(t, f).Location()), "metadata", pattern))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

// referenced is every manifest list, manifest and live data file the snapshots in tbl's
// metadata reference.
func referenced(t *testing.T, f *fixture, tbl *table.Table) (lists, manifests, data map[string]bool) {
	t.Helper()
	fsys, err := tbl.FS(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	lists, manifests, data = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.ManifestList == "" {
			continue
		}
		lists[localPath(s.ManifestList)] = true
		ms, err := s.Manifests(fsys)
		if err != nil {
			t.Fatalf("snapshot %d: %v", s.SnapshotID, err)
		}
		for _, m := range ms {
			manifests[localPath(m.FilePath())] = true
			for e, err := range m.Entries(fsys, true) {
				if err != nil {
					t.Fatalf("manifest %s: %v", m.FilePath(), err)
				}
				data[localPath(e.DataFile().FilePath())] = true
			}
		}
	}
	return lists, manifests, data
}

func sameSet(t *testing.T, what string, onDisk []string, want map[string]bool) {
	t.Helper()
	have := map[string]bool{}
	for _, p := range onDisk {
		have[p] = true
	}
	for p := range want {
		if !have[p] {
			t.Errorf("%s %s is referenced but gone", what, filepath.Base(p))
		}
	}
	for p := range have {
		if !want[p] {
			t.Errorf("%s %s is left behind though no snapshot references it", what, filepath.Base(p))
		}
	}
}

// TestPublishExpiresPastRetention: with a retention of four snapshots set by table property,
// each publish expires a slab of at most two: main never holds much more than four, every key
// stays done (the index has them), the rows are those of the publishes once, and the files only
// expired snapshots referenced (manifest lists, manifests, the data files an overwrite or an
// upsert replaced) are deleted while every file a kept snapshot needs is there.
func TestPublishExpiresPastRetention(t *testing.T) {
	for _, mode := range v1.WriteModes {
		t.Run(string(mode), func(t *testing.T) {
			f := newFixture(t)
			f.batch(t, rideCols, rideVals)
			wo := rideWrite(mode)
			first := f.publish(t, PublishOptions{Key: "k0", RunID: "r0", WriteOptions: wo}).SnapshotID
			if err := f.cat.SetTableProperties(f.ctx, f.ref, map[string]string{MaxSnapshotsProp: "4", ExpireSlabProp: "2"}); err != nil {
				t.Fatal(err)
			}
			const n = 12
			most := 0
			for i := 1; i < n; i++ {
				f.publish(t, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i), WriteOptions: wo})
				most = max(most, len(Ancestry(mustLoad(t, f))))
			}
			tbl := mustLoad(t, f)
			if most > 6 || len(Ancestry(tbl)) > 5 {
				t.Errorf("main held up to %d snapshots and ends with %d, want about 4", most, len(Ancestry(tbl)))
			}
			if tbl.SnapshotByID(first) != nil {
				t.Errorf("the first publish's snapshot %d was never expired", first)
			}
			if got := indexedKeys(t, f); len(got) != n {
				t.Errorf("index holds %v, want all %d keys", got, n)
			}
			r := f.publish(t, PublishOptions{Key: "k0", RunID: "again", WriteOptions: wo})
			if r.Status != SkippedDuplicate || r.SnapshotID != first {
				t.Errorf("re-run of the expired k0: %s at %d, want skipped at %d", r.Status, r.SnapshotID, first)
			}
			want := "3"
			if mode == v1.WriteAppend {
				want = fmt.Sprint(3 * n)
			}
			if got := f.query(t, "SELECT count(*) FROM rides"); got[0] != want {
				t.Errorf("rows %v, want %s", got, want)
			}
			lists, manifests, data := referenced(t, f, tbl)
			sameSet(t, "manifest list", filesUnder(t, f, "snap-*.avro"), lists)
			var ms []string
			for _, p := range filesUnder(t, f, "*.avro") {
				if !strings.HasPrefix(filepath.Base(p), "snap-") {
					ms = append(ms, p)
				}
			}
			sameSet(t, "manifest", ms, manifests)
			var onDisk []string
			for p := range dataFiles(t, f) {
				onDisk = append(onDisk, p)
			}
			sameSet(t, "data file", onDisk, data)
		})
	}
}

// TestExpiryOffKeepsEverySnapshot: ldp.history.expire.enabled=false (a warehouse shared with
// the Python ldp, which reads keys only from summaries) keeps every snapshot whatever the
// retention says.
func TestExpiryOffKeepsEverySnapshot(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	if err := f.cat.SetTableProperties(f.ctx, f.ref, map[string]string{MaxSnapshotsProp: "2", ExpireSlabProp: "2", ExpireEnabledProp: "false"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 6; i++ {
		f.publish(t, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i)})
	}
	if got := keyCount(t, f); len(got) != 6 {
		t.Errorf("keys in main's summaries %v, want all 6", got)
	}
}

// TestOldTablesGetBoundedMetadata: a table created without the properties that bound its
// metadata files and merge its manifests (by an older ldp, or another engine) gets them with
// its next publish; properties already set are left as they are.
func TestOldTablesGetBoundedMetadata(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	if err := f.cat.commit(f.ctx, f.ref, nil, []table.Update{table.NewRemovePropertiesUpdate(boundedProps[:2])}); err != nil {
		t.Fatal(err)
	}
	if err := f.cat.SetTableProperties(f.ctx, f.ref, map[string]string{"write.metadata.previous-versions-max": "3"}); err != nil {
		t.Fatal(err)
	}
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	p := mustLoad(t, f).Properties()
	if p["commit.manifest-merge.enabled"] != "true" || p["write.metadata.delete-after-commit.enabled"] != "true" || p["write.metadata.previous-versions-max"] != "3" {
		t.Errorf("properties after a publish: %v", p)
	}
}

// TestAppendsMergeManifests: iceberg-go's append merges manifests when
// commit.manifest-merge.enabled is set (ldp's tables have it): 150 appends leave main's head
// listing fewer manifests than appends (the merge starts at 100, min-count-to-merge).
func TestAppendsMergeManifests(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	for i := 0; i < 150; i++ {
		f.publish(t, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i)})
	}
	tbl := mustLoad(t, f)
	fsys, _ := tbl.FS(f.ctx)
	ms, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) > 100 {
		t.Errorf("main's head lists %d manifests after 150 appends, want them merged (at most 100)", len(ms))
	}
	if n := len(filesUnder(t, f, "*.avro")); n > 2*DefaultMaxSnapshots {
		t.Errorf("%d avro files under metadata/", n)
	}
	if _, err := os.Stat(localPath(tbl.MetadataLocation())); err != nil {
		t.Fatal(err)
	}
}
