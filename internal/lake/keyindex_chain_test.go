package lake

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
)

// forgetIndexes drops what this process parsed, as another process would start.
func forgetIndexes() {
	indexFiles = &recent[*keyIndexData]{size: 4}
	keyIndexes = &recent[*mainKeys]{size: 4}
}

// headIndex is the blob metadata of the index attached to main's head.
func headIndex(t *testing.T, f *fixture) (table.StatisticsFile, table.BlobMetadata) {
	t.Helper()
	tbl := mustLoad(t, f)
	sf, ok := indexStats(tbl)[tbl.CurrentSnapshot().SnapshotID]
	if !ok {
		t.Fatalf("main's head %d carries no key index", tbl.CurrentSnapshot().SnapshotID)
	}
	b, _ := indexBlob(sf)
	return sf, b
}

// encodeKeyIndexV1 is the last release's writer: length-prefixed records, sorted by key.
func encodeKeyIndexV1(entries []KeyEntry) []byte {
	var buf []byte
	str := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	for _, e := range entries {
		str(e.Key)
		buf = binary.AppendVarint(buf, e.SnapshotID)
		buf = binary.AppendVarint(buf, e.TimestampMs)
		str(e.Window)
		str(e.RunID)
		str(e.SpecHash)
	}
	return buf
}

// TestV1IndexIsReadAndWrittenAsV2: a table whose head carries the last release's index (v1,
// one file, no base) is read, a key only that index holds is still done, and the next
// publish writes a v2 delta and base holding every key.
func TestV1IndexIsReadAndWrittenAsV2(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	first := f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
	tbl := mustLoad(t, f)
	head := tbl.CurrentSnapshot()
	// k0 was published and its snapshot expired long ago: only the index knows it.
	entries := []KeyEntry{
		{Key: "k0", SnapshotID: 42, TimestampMs: 1_000, Window: "2026-01-01T00:00:00Z/2026-01-02T00:00:00Z", RunID: "r0", SpecHash: "h0"},
		{Key: "k1", SnapshotID: first.SnapshotID, TimestampMs: 2_000, RunID: "r1"},
		{Key: "k2", SnapshotID: head.SnapshotID, TimestampMs: head.TimestampMs, RunID: "r2"},
	}
	data := encodeKeyIndexV1(entries)
	sum := sha256.Sum256(data)
	props := map[string]string{indexCountProp: "3", indexSHA256Prop: hex.EncodeToString(sum[:])}
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddBlob(puffin.BlobMetadataInput{Type: KeyIndexBlobV1, SnapshotID: head.SnapshotID, SequenceNumber: head.SequenceNumber, Fields: []int32{}, Properties: props}, data); err != nil {
		t.Fatal(err)
	}
	before := int64(buf.Len())
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	loc := tbl.MetadataLocation()
	v1Path := loc[:strings.LastIndex(loc, "/")+1] + "ldp-keys-v1-from-the-last-release.puffin"
	if err := os.WriteFile(localPath(v1Path), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var updates []table.Update
	for sf := range tbl.Metadata().Statistics() {
		updates = append(updates, table.NewRemoveStatisticsUpdate(sf.SnapshotID))
	}
	updates = append(updates, table.NewSetStatisticsUpdate(table.StatisticsFile{
		SnapshotID: head.SnapshotID, StatisticsPath: v1Path, FileSizeInBytes: int64(buf.Len()), FileFooterSizeInBytes: int64(buf.Len()) - before,
		BlobMetadata: []table.BlobMetadata{{Type: KeyIndexBlobV1, SnapshotID: head.SnapshotID, SequenceNumber: head.SequenceNumber, Fields: []int32{}, Properties: props}},
	}))
	if err := f.cat.commit(f.ctx, f.ref, nil, updates); err != nil {
		t.Fatal(err)
	}
	forgetIndexes()
	if _, b := headIndex(t, f); string(b.Type) != KeyIndexBlobV1 {
		t.Fatalf("head's index is %s, want the v1 one", b.Type)
	}
	if r := f.publish(t, PublishOptions{Key: "k0", RunID: "again"}); r.Status != SkippedDuplicate || r.SnapshotID != 42 {
		t.Errorf("k0, known only to the v1 index: %s at %d, want skipped at 42", r.Status, r.SnapshotID)
	}
	if got := SpecHashes(mustLoad(t, f)); strings.Join(got, " ") != "h0" {
		t.Errorf("spec hashes from the v1 index %v, want [h0]", got)
	}
	if r := f.publish(t, PublishOptions{Key: "k3", RunID: "r3"}); r.Status != Published {
		t.Fatalf("k3: %s", r.Status)
	}
	sf, b := headIndex(t, f)
	if string(b.Type) != KeyIndexBlob || b.Properties[indexBaseProp] == "" {
		t.Fatalf("head's index after a publish: %s %v, want a %s delta naming its base", b.Type, b.Properties, KeyIndexBlob)
	}
	for _, p := range IndexFiles(mustLoad(t, f)) {
		if p == v1Path {
			t.Errorf("the v1 index %s is still reached from the metadata", p)
		}
	}
	forgetIndexes()
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k0 k1 k2 k3" {
		t.Errorf("the v2 index holds %v (head's %s)", got, sf.StatisticsPath)
	}
	e, err := FindKeyEntry(mustLoad(t, f), "k0", time.Now())
	if err != nil || e == nil || e.SnapshotID != 42 || e.Window != entries[0].Window || e.RunID != "r0" || e.SpecHash != "h0" {
		t.Errorf("k0 in the v2 index: %+v, %v, want %+v", e, err, entries[0])
	}
}

// TestIndexChainAcrossBases: most publishes write a delta of the keys since the base; once
// the delta outgrows its cap a publish writes a new base (attached to ldp.init) and an empty
// delta. With history expiring as it publishes, every key is found by a fresh process through
// whichever of delta and base holds it, and re-runs are skipped.
func TestIndexChainAcrossBases(t *testing.T) {
	oldMin, oldGrowth := minDelta, deltaGrowth
	minDelta, deltaGrowth = 3, 0
	t.Cleanup(func() { minDelta, deltaGrowth = oldMin, oldGrowth })
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	bases := map[string]bool{}
	var keys []string
	for i := 1; i <= 10; i++ {
		if i == 2 {
			if err := f.cat.SetTableProperties(f.ctx, f.ref, map[string]string{MaxSnapshotsProp: "2", ExpireSlabProp: "4"}); err != nil {
				t.Fatal(err)
			}
		}
		k := fmt.Sprintf("k%02d", i)
		keys = append(keys, k)
		f.publish(t, PublishOptions{Key: k, RunID: "r-" + k, WriteOptions: WriteOptions{SnapshotProps: map[string]string{WindowProp: fmt.Sprintf("2026-08-%02dT00:00:00Z/2026-08-%02dT00:00:00Z", i, i+1)}}})
		_, b := headIndex(t, f)
		n, _ := strconv.Atoi(b.Properties[indexCountProp])
		if b.Properties[indexBaseProp] == "" || n > minDelta {
			t.Fatalf("after %s the head's index holds %d keys and names base %q, want a delta of at most %d", k, n, b.Properties[indexBaseProp], minDelta)
		}
		bases[b.Properties[indexBaseProp]] = true
		if got := attachedBase(mustLoad(t, f), initSnapshot(mustLoad(t, f)).SnapshotID); got != b.Properties[indexBaseProp] {
			t.Fatalf("ldp.init carries base %q, the delta names %q", got, b.Properties[indexBaseProp])
		}
		forgetIndexes()
		if got := indexedKeys(t, f); strings.Join(got, " ") != strings.Join(keys, " ") {
			t.Fatalf("after %s a fresh process finds %v", k, got)
		}
	}
	if len(bases) < 3 {
		t.Errorf("%d bases over 10 publishes with a delta cap of %d, want new bases as deltas fill", len(bases), minDelta)
	}
	if n := len(mustLoad(t, f).Metadata().Snapshots()); n > 5 {
		t.Fatalf("%d snapshots kept: publishing did not expire history", n)
	}
	rows := f.query(t, "SELECT count(*) FROM rides")[0]
	for _, k := range keys {
		forgetIndexes()
		if r := f.publish(t, PublishOptions{Key: k, RunID: "again-" + k}); r.Status != SkippedDuplicate {
			t.Errorf("re-run of %s: %s", k, r.Status)
		}
	}
	e, err := FindKeyEntry(mustLoad(t, f), "k01", time.Now())
	if err != nil || e == nil || e.RunID != "r-k01" || e.Window != "2026-08-01T00:00:00Z/2026-08-02T00:00:00Z" {
		t.Errorf("k01 from the base: %+v, %v", e, err)
	}
	if got := f.query(t, "SELECT count(*) FROM rides")[0]; got != rows {
		t.Errorf("rows %s after the re-runs, want %s", got, rows)
	}
}

// TestBrokenIndexChainFailsClosed: a delta or its base missing or corrupt stops the publish
// with the file at fault and the command that rebuilds the index; nothing is written. The
// rebuild reads the summaries and the keys are found again.
func TestBrokenIndexChainFailsClosed(t *testing.T) {
	for _, fault := range []string{"missing delta", "corrupt delta", "missing base", "corrupt base"} {
		t.Run(strings.ReplaceAll(fault, " ", "_"), func(t *testing.T) {
			f := newFixture(t)
			f.batch(t, rideCols, rideVals)
			f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
			f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
			sf, b := headIndex(t, f)
			if b.Properties[indexCountProp] != "1" || b.Properties[indexBaseProp] == "" {
				t.Fatalf("head's index %v, want a delta of one key on a base", b.Properties)
			}
			path := sf.StatisticsPath
			if strings.HasSuffix(fault, "base") {
				path = b.Properties[indexBaseProp]
			}
			forgetIndexes()
			if strings.HasPrefix(fault, "missing") {
				if err := os.Remove(localPath(path)); err != nil {
					t.Fatal(err)
				}
			} else {
				raw, err := os.ReadFile(localPath(path))
				if err != nil {
					t.Fatal(err)
				}
				raw[5] ^= 0xff // inside the blob: the footer still parses, the checksum does not
				if err := os.WriteFile(localPath(path), raw, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rows := f.query(t, "SELECT count(*) FROM rides")[0]
			_, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k3", RunID: "r3"})
			var bad *KeyIndexError
			if !errors.As(err, &bad) || bad.Path != path || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "ldp catalog reindex SPEC") {
				t.Fatalf("publish over a %s: err = %v, want a KeyIndexError naming %s and the command", fault, err, path)
			}
			if _, err := FindKey(mustLoad(t, f), "k1", time.Now()); !errors.As(err, &bad) {
				t.Errorf("a search over a %s: err = %v, want a KeyIndexError", fault, err)
			}
			if got := f.query(t, "SELECT count(*) FROM rides")[0]; got != rows {
				t.Errorf("rows %s, want %s", got, rows)
			}
			res, err := f.cat.Reindex(f.ctx, f.ref)
			if err != nil || res.Keys != 2 || !res.Rebuilt {
				t.Fatalf("reindex: %+v, %v", res, err)
			}
			forgetIndexes()
			for _, k := range []string{"k1", "k2"} {
				if r := f.publish(t, PublishOptions{Key: k, RunID: "again"}); r.Status != SkippedDuplicate {
					t.Errorf("%s after the rebuild: %s", k, r.Status)
				}
			}
			if r := f.publish(t, PublishOptions{Key: "k3", RunID: "r3"}); r.Status != Published {
				t.Errorf("k3 after the rebuild: %s", r.Status)
			}
		})
	}
}

// TestCleaningKeepsTheBaseADeltaNames: a writer that removes the key index tag and expires
// ldp.init without deleting its files drops the base's attachment, not the file; cleaning
// keeps the file while the head's delta names it, and the next publish writes the whole index
// at the head.
func TestCleaningKeepsTheBaseADeltaNames(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	f.publish(t, PublishOptions{Key: "k2", RunID: "r2"})
	_, b := headIndex(t, f)
	base := b.Properties[indexBaseProp]
	tbl := mustLoad(t, f)
	if s := tbl.Metadata().SnapshotByName(KeyIndexTag); s == nil || s.SnapshotID != initSnapshot(tbl).SnapshotID {
		t.Fatalf("no tag %s on ldp.init", KeyIndexTag)
	}
	if err := f.cat.commit(f.ctx, f.ref, nil, []table.Update{table.NewRemoveSnapshotRefUpdate(KeyIndexTag), table.NewRemoveSnapshotsUpdate([]int64{initSnapshot(tbl).SnapshotID}, false)}); err != nil {
		t.Fatal(err)
	}
	if initSnapshot(mustLoad(t, f)) != nil {
		t.Fatal("ldp.init survived the expiry")
	}
	found := false
	for _, p := range IndexFiles(mustLoad(t, f)) {
		found = found || p == base
	}
	if !found {
		t.Fatalf("IndexFiles does not reach the base %s the head's delta names", base)
	}
	old := time.Now().Add(-10 * time.Minute)
	os.Chtimes(localPath(base), old, old)
	f.cat.cleanMetadata(f.ctx, f.ref)
	if _, err := os.Stat(localPath(base)); err != nil {
		t.Fatalf("the base a live delta names was cleaned: %v", err)
	}
	forgetIndexes()
	if r := f.publish(t, PublishOptions{Key: "k1", RunID: "again"}); r.Status != SkippedDuplicate {
		t.Errorf("k1 through the unattached base: %s", r.Status)
	}
	f.publish(t, PublishOptions{Key: "k3", RunID: "r3"})
	if _, b := headIndex(t, f); b.Properties[indexBaseProp] != "" {
		t.Errorf("without ldp.init the head's index names base %q, want the whole index in one file", b.Properties[indexBaseProp])
	}
	forgetIndexes()
	if got := indexedKeys(t, f); strings.Join(got, " ") != "k1 k2 k3" {
		t.Errorf("index holds %v", got)
	}
}
