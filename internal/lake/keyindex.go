package lake

// The key index: every idempotency key ever published on main, kept in Puffin files that the
// publish commit attaches (an Iceberg set-statistics update in the same catalog commit): a
// delta, the keys since its base, on the snapshot it moves main to, and the base, every key up
// to it, on the table's ldp.init snapshot, so that a commit writes the few keys since the base
// and not every key ever published. A key is looked up in the index of the newest indexed snapshot on
// main plus the summaries of the snapshots after it, so the answer survives the expiry of the
// snapshot that published the key and costs one file read per index, not a walk of history.
// docs/exactly-once.md says why this shape and what it guarantees.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	icebergio "github.com/apache/iceberg-go/io"
)

// KeyIndexBlob is the Puffin blob type of ldp's key index. Engines that do not know it keep
// the file (it is a statistics file of a live snapshot) and ignore it. KeyIndexBlobV1 is the
// last release's, read and never written.
const (
	KeyIndexBlob   = "ldp-key-index-v2"
	KeyIndexBlobV1 = "ldp-key-index-v1"
)

// Properties of the index blob. gap-* are set when the index was built from an ancestry that
// had lost snapshots (expired before the table had an index): keys published before the gap
// are unknown, so the horizon rule still applies to them.
const (
	indexCountProp  = "ldp.count"
	indexSHA256Prop = "ldp.sha256"
	indexGapMsProp  = "ldp.gap-timestamp-ms"
	indexGapIDProp  = "ldp.gap-snapshot-id"
	// A delta (the index of main's head) names its base and the base blob's sha256; a base is
	// attached to the table's ldp.init snapshot, which ldp never expires, and says so.
	indexBaseProp    = "ldp.base"
	indexBaseSumProp = "ldp.base-sha256"
	indexPartProp    = "ldp.part"
)

// KeyIndexTag points at the ldp.init snapshot that carries the key index's base. Every
// engine's snapshot expiry keeps a tagged snapshot, and with it the statistics file attached
// to it, which Iceberg's expiry would otherwise delete with its snapshot.
const KeyIndexTag = "ldp_key_index"

// A delta grows to at most max(minDelta, sqrt(deltaGrowth x keys)) keys before the next
// publish writes a new base: 1,000 up to 50,000 keys, then the square root, so that the bytes
// a commit writes (the delta, and a new base every so many commits) grow as the square root
// of the keys, not linearly. Variables for the tests.
var (
	minDelta    = 1000
	deltaGrowth = 20.0
)

func deltaCap(keys int) int {
	return max(minDelta, int(math.Sqrt(deltaGrowth*float64(keys))))
}

// KeyEntry is one published key as the index holds it.
type KeyEntry struct {
	Key         string
	SnapshotID  int64
	TimestampMs int64
	Window      string
	RunID       string
	// SpecHash is the publish's ldp.spec-hash: a window's replace keys are made from it.
	SpecHash string
}

// keyIndexData is the content of one index file: entries sorted by key, one per key. A delta
// holds the keys published since its base; its entries win over the base's.
type keyIndexData struct {
	entries []KeyEntry
	base    *keyIndexData
	// basePath is the base's file and baseSum its blob's sha256 (a delta only); sum is this
	// file's blob's.
	basePath, baseSum, sum string
	gap                    bool
	gapMs                  int64
	gapID                  int64
	// hashes are the distinct spec hashes of the chain's keys, sorted; total its distinct keys.
	hashes []string
	total  int
}

func findIn(entries []KeyEntry, key string) (KeyEntry, bool) {
	i, ok := slices.BinarySearchFunc(entries, key, func(e KeyEntry, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return KeyEntry{}, false
	}
	return entries[i], true
}

func (d *keyIndexData) find(key string) (KeyEntry, bool) {
	if e, ok := findIn(d.entries, key); ok || d.base == nil {
		return e, ok
	}
	return d.base.find(key)
}

// all is every key of the chain, sorted, the delta's entry where both hold one.
func (d *keyIndexData) all() []KeyEntry {
	if d == nil {
		return nil
	}
	if d.base == nil {
		return d.entries
	}
	return mergeEntries(d.base.entries, d.entries)
}

// seal fills in what the chain holds as a whole once entries and base are set.
func (d *keyIndexData) seal() *keyIndexData {
	d.total, d.hashes = len(d.entries), specHashesOf(d.entries)
	if d.base != nil {
		for _, e := range d.entries {
			if _, ok := findIn(d.base.entries, e.Key); ok {
				d.total--
			}
		}
		d.total += d.base.total
		d.hashes = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(d.base.hashes), d.hashes...))))
	}
	return d
}

// mergeEntries is old and fresh (both sorted by key) in one sorted list, fresh's entry where
// both hold a key.
func mergeEntries(old, fresh []KeyEntry) []KeyEntry {
	out := make([]KeyEntry, 0, len(old)+len(fresh))
	i, j := 0, 0
	for i < len(old) && j < len(fresh) {
		switch c := strings.Compare(old[i].Key, fresh[j].Key); {
		case c < 0:
			out = append(out, old[i])
			i++
		case c > 0:
			out = append(out, fresh[j])
			j++
		default:
			out = append(out, fresh[j])
			i, j = i+1, j+1
		}
	}
	out = append(out, old[i:]...)
	return append(out, fresh[j:]...)
}

// KeyIndexError is an index file that cannot be read or does not check out. ldp fails closed
// on it: a broken index never reads as "not done".
type KeyIndexError struct {
	Ref  Ref
	Path string
	Err  error
}

func (e *KeyIndexError) Error() string {
	return fmt.Sprintf("the key index %s of %s cannot be used (%v): ldp cannot tell which windows are already published, so nothing was written; rebuild it from the table's snapshots with: ldp catalog reindex SPEC", e.Path, e.Ref, e.Err)
}

func (e *KeyIndexError) Unwrap() error { return e.Err }

// Retriable is false: the same file fails again until it is rebuilt.
func (e *KeyIndexError) Retriable() bool { return false }

// indexFiles holds the parsed index files of this process by path: a file never changes once
// written, and a publish puts the index it wrote here so the next lookup does not read it.
var indexFiles = &recent[*keyIndexData]{size: 4}

// indexStats maps the snapshots that carry an ldp key index (main's head, normally) to its
// statistics file. A base, attached to the ldp.init snapshot to keep it alive, is not one:
// it is read through the delta that names it.
func indexStats(tbl *table.Table) map[int64]table.StatisticsFile {
	out := map[int64]table.StatisticsFile{}
	for sf := range tbl.Metadata().Statistics() {
		if b, ok := indexBlob(sf); ok && b.Properties[indexPartProp] != "base" {
			out[sf.SnapshotID] = sf
		}
	}
	return out
}

func indexBlob(sf table.StatisticsFile) (table.BlobMetadata, bool) {
	for _, b := range sf.BlobMetadata {
		if string(b.Type) == KeyIndexBlob || string(b.Type) == KeyIndexBlobV1 {
			return b, true
		}
	}
	return table.BlobMetadata{}, false
}

// IndexFiles are the key index files tbl's metadata reaches: every attached index and the
// base each delta names (normally attached too, to ldp.init; not if another engine expired
// that snapshot). Cleaning and orphan removal keep them all.
func IndexFiles(tbl *table.Table) []string {
	var out []string
	for sf := range tbl.Metadata().Statistics() {
		if b, ok := indexBlob(sf); ok {
			out = append(out, sf.StatisticsPath)
			if p := b.Properties[indexBaseProp]; p != "" {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// readKeyIndex reads and checks the index file sf, and the base it names; any fault is a
// *KeyIndexError naming the file that failed.
func readKeyIndex(ctx context.Context, tbl *table.Table, sf table.StatisticsFile) (*keyIndexData, error) {
	return readIndexFile(ctx, tbl, sf.StatisticsPath, "")
}

// readIndexFile reads the index file path; of is the delta whose base it is ("" for the head's
// own index), and a base names no base of its own.
func readIndexFile(ctx context.Context, tbl *table.Table, path, of string) (*keyIndexData, error) {
	if d, ok := indexFiles.get(path); ok {
		return d, nil
	}
	fail := func(err error) error {
		if of != "" {
			err = fmt.Errorf("it is the base of the key index %s: %w", of, err)
		}
		return &KeyIndexError{Ref: refOf(tbl), Path: path, Err: err}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fail(err)
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	r, err := puffin.NewReader(f)
	if err != nil {
		return nil, fail(err)
	}
	for _, b := range r.Blobs() {
		if string(b.Type) != KeyIndexBlob && string(b.Type) != KeyIndexBlobV1 {
			continue
		}
		data, err := r.ReadBlobByMetadata(b)
		if err != nil {
			return nil, fail(err)
		}
		d := &keyIndexData{sum: b.Properties[indexSHA256Prop], basePath: b.Properties[indexBaseProp], baseSum: b.Properties[indexBaseSumProp]}
		if string(b.Type) == KeyIndexBlobV1 {
			d.entries, err = decodeKeyIndexV1(data, b.Properties)
		} else {
			d.entries, err = decodeKeyIndexV2(data, b.Properties)
		}
		if err != nil {
			return nil, fail(err)
		}
		if v, ok := b.Properties[indexGapMsProp]; ok {
			d.gap = true
			d.gapMs, _ = strconv.ParseInt(v, 10, 64)
			d.gapID, _ = strconv.ParseInt(b.Properties[indexGapIDProp], 10, 64)
		}
		if d.basePath != "" {
			if of != "" {
				return nil, fail(errors.New("a base names a base of its own"))
			}
			if d.base, err = readIndexFile(ctx, tbl, d.basePath, path); err != nil {
				return nil, err
			}
			if d.base.sum != d.baseSum {
				return nil, &KeyIndexError{Ref: refOf(tbl), Path: d.basePath, Err: fmt.Errorf("it is not the base the key index %s was built on (its sha256 is %s, the index names %s)", path, d.base.sum, d.baseSum)}
			}
		}
		d.seal()
		indexFiles.put(path, d)
		return d, nil
	}
	return nil, fail(fmt.Errorf("the file holds no %s blob", KeyIndexBlob))
}

// entryOf is the index entry of a keyed snapshot ("" key when it holds none).
func entryOf(s *table.Snapshot) KeyEntry {
	if s.Summary == nil {
		return KeyEntry{}
	}
	p := s.Summary.Properties
	return KeyEntry{Key: p[KeyProp], SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs, Window: p[WindowProp], RunID: p[RunIDProp], SpecHash: p[SpecHashProp]}
}

// mainKeys is what main holds on one metadata file: the newest index on main's ancestry and
// the keys of the snapshots after it (all of main's keys when no snapshot has an index), and
// where the walk stopped when it reached no index and a parent is missing (expired).
type mainKeys struct {
	index   *keyIndexData
	indexed int64 // the snapshot that carries index
	keys    map[string]KeyEntry
	broken  bool
	lastMs  int64
	missing int64
	// specHashes are the distinct spec hashes of all of main's keys, sorted.
	specHashes []string
}

// keyIndexes holds the lookups of the last few metadata files: a backfill asks for each
// window's key on the same main.
var keyIndexes = &recent[*mainKeys]{size: 4}

// keyIndex is main's keys on tbl. An index that cannot be read is a *KeyIndexError and is not
// kept, so the next lookup tries again.
func keyIndex(ctx context.Context, tbl *table.Table) (*mainKeys, error) {
	loc := tbl.MetadataLocation()
	if a, ok := keyIndexes.get(loc); ok {
		return a, nil
	}
	a, err := walkKeys(ctx, tbl, true)
	if err != nil {
		return nil, err
	}
	hashes := map[string]bool{}
	for _, e := range a.keys {
		hashes[e.SpecHash] = true
	}
	if a.index != nil {
		for _, h := range a.index.hashes {
			hashes[h] = true
		}
	}
	delete(hashes, "")
	a.specHashes = slices.Sorted(maps.Keys(hashes))
	keyIndexes.put(loc, a)
	return a, nil
}

// SpecHashes are the distinct spec hashes of every keyed publish on main, expired ones
// included: a window's replace keys are made from them (v1.WindowKeys). An index that cannot
// be read gives none; the key search over it fails closed on its own.
func SpecHashes(tbl *table.Table) []string {
	a, err := keyIndex(context.Background(), tbl)
	if err != nil {
		return nil
	}
	return a.specHashes
}

// walkKeys walks main from its head to the newest indexed snapshot (when useIndex) or as far
// as it exists. Only the walk's first step is cheap on an indexed head; a map of the
// snapshots is built when it goes further.
func walkKeys(ctx context.Context, tbl *table.Table, useIndex bool) (*mainKeys, error) {
	a := &mainKeys{keys: map[string]KeyEntry{}}
	stats := map[int64]table.StatisticsFile{}
	if useIndex {
		stats = indexStats(tbl)
	}
	var byID map[int64]*table.Snapshot
	s := tbl.CurrentSnapshot()
	for s != nil {
		if sf, ok := stats[s.SnapshotID]; ok {
			d, err := readKeyIndex(ctx, tbl, sf)
			if err != nil {
				return nil, err
			}
			a.index, a.indexed = d, s.SnapshotID
			return a, nil
		}
		if e := entryOf(s); e.Key != "" {
			if _, seen := a.keys[e.Key]; !seen {
				a.keys[e.Key] = e
			}
		}
		if s.ParentSnapshotID == nil {
			return a, nil
		}
		if byID == nil {
			snaps := tbl.Metadata().Snapshots()
			byID = make(map[int64]*table.Snapshot, len(snaps))
			for i := range snaps {
				byID[snaps[i].SnapshotID] = &snaps[i]
			}
		}
		p := byID[*s.ParentSnapshotID]
		if p == nil {
			a.broken, a.lastMs, a.missing = true, s.TimestampMs, *s.ParentSnapshotID
			return a, nil
		}
		s = p
	}
	return a, nil
}

// lookup finds key on main: in the keys after the index, then in the index. Absent and
// proven is (zero, false, nil); absent but unprovable (a gap inside the horizon) is an
// *UnprovableError.
func (a *mainKeys) lookup(tbl *table.Table, key string, now time.Time) (KeyEntry, bool, error) {
	if e, ok := a.keys[key]; ok {
		return e, true, nil
	}
	broken, lastMs, missing := a.broken, a.lastMs, a.missing
	if a.index != nil {
		if e, ok := a.index.find(key); ok {
			return e, true, nil
		}
		broken, lastMs, missing = a.index.gap, a.index.gapMs, a.index.gapID
	}
	if !broken || lastMs < now.Add(-time.Duration(horizonDays(tbl))*24*time.Hour).UnixMilli() {
		return KeyEntry{}, false, nil // expired beyond the horizon: absence is proven as far as promised
	}
	return KeyEntry{}, false, &UnprovableError{Ref: refOf(tbl), Key: key, Missing: missing}
}

func horizonDays(tbl *table.Table) int {
	if n, err := strconv.Atoi(tbl.Properties()[HorizonProperty]); err == nil && n > 0 {
		return n
	}
	return DefaultHorizonDays
}

// FindKeyEntry finds key among every key published on tbl's main, expired snapshots included.
func FindKeyEntry(tbl *table.Table, key string, now time.Time) (*KeyEntry, error) {
	a, err := keyIndex(context.Background(), tbl)
	if err != nil {
		return nil, err
	}
	e, ok, err := a.lookup(tbl, key, now)
	if err != nil || !ok {
		return nil, err
	}
	return &e, nil
}

// KeysOnMain is every key published on tbl's main, expired snapshots included, by key.
func KeysOnMain(ctx context.Context, tbl *table.Table) (map[string]KeyEntry, error) {
	a, err := keyIndex(ctx, tbl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]KeyEntry, len(a.keys))
	if a.index != nil {
		if a.index.base != nil {
			for _, e := range a.index.base.entries {
				out[e.Key] = e
			}
		}
		for _, e := range a.index.entries {
			out[e.Key] = e
		}
	}
	for k, e := range a.keys {
		out[k] = e
	}
	return out, nil
}

// standIn is the snapshot FindKey returns for a key whose snapshot was expired: what the index
// recorded of it, so a caller reads its id, run and window as from the real one.
func standIn(tbl *table.Table, e KeyEntry) *table.Snapshot {
	if s := tbl.SnapshotByID(e.SnapshotID); s != nil {
		return s
	}
	props := map[string]string{KeyProp: e.Key, RunIDProp: e.RunID, SpecHashProp: e.SpecHash}
	if e.Window != "" {
		props[WindowProp] = e.Window
	}
	if head := tbl.CurrentSnapshot(); head != nil && head.Summary != nil {
		// Nothing was written since the key as far as a skip is concerned: report the table's rows.
		props["total-records"] = head.Summary.Properties["total-records"]
	}
	return &table.Snapshot{SnapshotID: e.SnapshotID, TimestampMs: e.TimestampMs, Summary: &table.Summary{Properties: props}}
}

// nextIndex writes the index of head, a snapshot staged on top of tbl's main (with staged,
// the snapshots from main's head exclusive to head inclusive), and returns the updates that
// attach it to head and detach ldp's older indexes, for the commit that moves main to head. The
// files are written before the commit and never changed: if the commit does not land, they are
// orphans that maintenance removes. The same commit expires a slab of history (retention.go):
// the index it attaches is what keeps the expired snapshots' keys.
func (c *Catalog) nextIndex(ctx context.Context, tbl *table.Table, staged []*table.Snapshot) ([]table.Update, error) {
	a, err := keyIndex(ctx, tbl)
	if err != nil {
		return nil, err
	}
	updates, _, err := indexUpdates(ctx, tbl, a, staged, staged[len(staged)-1], false)
	if err != nil {
		return nil, err
	}
	return append(updates, expireUpdates(ctx, tbl, staged, time.Now())...), nil
}

// indexUpdates writes the index of head (the last of staged, or main's head when staged is
// empty): a's index with the keys after it and those of staged laid over it, the newest
// snapshot holding a key being the one recorded. Most commits write a delta, the keys since
// the base, and name the base; when the delta outgrows deltaCap (or rebase, or the delta's
// base is not the one attached to ldp.init) the commit writes a new base of every key,
// attached to the table's ldp.init snapshot, and an empty delta. A table without ldp.init gets
// the whole index at head, as one file. The updates detach ldp's older indexes.
func indexUpdates(ctx context.Context, tbl *table.Table, a *mainKeys, staged []*table.Snapshot, head *table.Snapshot, rebase bool) ([]table.Update, *keyIndexData, error) {
	byKey := maps.Clone(a.keys)
	for _, s := range staged {
		if e := entryOf(s); e.Key != "" {
			byKey[e.Key] = e
		}
	}
	fresh := slices.SortedFunc(maps.Values(byKey), func(x, y KeyEntry) int { return strings.Compare(x.Key, y.Key) })
	gap := keyIndexData{gap: a.broken, gapMs: a.lastMs, gapID: a.missing}
	if a.index != nil {
		gap = keyIndexData{gap: a.index.gap, gapMs: a.index.gapMs, gapID: a.index.gapID}
	}
	var updates []table.Update
	for id := range indexStats(tbl) {
		if id != head.SnapshotID {
			updates = append(updates, table.NewRemoveStatisticsUpdate(id))
		}
	}
	init := initSnapshot(tbl)
	d := &keyIndexData{gap: gap.gap, gapMs: gap.gapMs, gapID: gap.gapID}
	if init != nil && !rebase && a.index != nil && a.index.base != nil && attachedBase(tbl, init.SnapshotID) == a.index.basePath {
		if delta := mergeEntries(a.index.entries, fresh); len(delta) <= deltaCap(a.index.base.total) {
			d.entries, d.base, d.basePath, d.baseSum = delta, a.index.base, a.index.basePath, a.index.base.sum
		}
	}
	if d.base == nil {
		all := mergeEntries(a.index.all(), fresh)
		if init == nil || init.SnapshotID == head.SnapshotID {
			d.entries = all
		} else {
			b := &keyIndexData{entries: all, gap: gap.gap, gapMs: gap.gapMs, gapID: gap.gapID}
			bsf, err := writeKeyIndex(ctx, tbl, init, b, true)
			if err != nil {
				return nil, nil, err
			}
			updates = append(updates, table.NewSetStatisticsUpdate(bsf))
			if s := tbl.Metadata().SnapshotByName(KeyIndexTag); s == nil || s.SnapshotID != init.SnapshotID {
				updates = append(updates, table.NewSetSnapshotRefUpdate(KeyIndexTag, init.SnapshotID, table.TagRef, 0, 0, 0))
			}
			d.entries, d.base, d.basePath, d.baseSum = []KeyEntry{}, b, bsf.StatisticsPath, b.sum
		}
	}
	sf, err := writeKeyIndex(ctx, tbl, head, d, false)
	if err != nil {
		return nil, nil, err
	}
	return append(updates, table.NewSetStatisticsUpdate(sf)), d, nil
}

// initSnapshot is the table's empty ldp.init snapshot, nil when it has none (created by
// another engine, or expired by one).
func initSnapshot(tbl *table.Table) *table.Snapshot {
	// The tag the base is attached under names it: one lookup, where the scan below copies
	// every retained snapshot with its summary (500 of them at the default retention) at
	// every publish.
	if s := tbl.Metadata().SnapshotByName(KeyIndexTag); s != nil && s.Summary != nil && s.Summary.Properties[InitProp] == "true" {
		return s
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Properties[InitProp] == "true" {
			return tbl.SnapshotByID(s.SnapshotID)
		}
	}
	return nil
}

// attachedBase is the base attached to snapshot id, "" when none.
func attachedBase(tbl *table.Table, id int64) string {
	for sf := range tbl.Metadata().Statistics() {
		if b, ok := indexBlob(sf); ok && sf.SnapshotID == id && b.Properties[indexPartProp] == "base" {
			return sf.StatisticsPath
		}
	}
	return ""
}

// isIndexFile reports whether a file name is one writeKeyIndex chose.
func isIndexFile(name string) bool {
	return strings.HasPrefix(name, "ldp-keys-") && strings.HasSuffix(name, ".puffin")
}

// writeKeyIndex writes d as a v2 Puffin file beside tbl's metadata and returns its statistics
// entry for snapshot snap. A delta names its base (d.basePath); a base (isBase) is written
// for ldp.init and marked as one.
func writeKeyIndex(ctx context.Context, tbl *table.Table, snap *table.Snapshot, d *keyIndexData, isBase bool) (table.StatisticsFile, error) {
	data := encodeKeyIndexV2(d.entries)
	sum := sha256.Sum256(data)
	d.sum = hex.EncodeToString(sum[:])
	props := map[string]string{indexCountProp: strconv.Itoa(len(d.entries)), indexSHA256Prop: d.sum}
	if d.gap {
		props[indexGapMsProp], props[indexGapIDProp] = strconv.FormatInt(d.gapMs, 10), strconv.FormatInt(d.gapID, 10)
	}
	name := fmt.Sprintf("ldp-keys-%d-%s.puffin", snap.SnapshotID, uuid.NewString())
	if d.basePath != "" {
		props[indexBaseProp], props[indexBaseSumProp] = d.basePath, d.baseSum
	} else if isBase {
		props[indexPartProp] = "base"
		name = "ldp-keys-base-" + name[len("ldp-keys-"):]
	}
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		return table.StatisticsFile{}, err
	}
	w.SetCreatedBy("ldp")
	if _, err := w.AddBlob(puffin.BlobMetadataInput{Type: KeyIndexBlob, SnapshotID: snap.SnapshotID, SequenceNumber: snap.SequenceNumber, Fields: []int32{}, Properties: props}, data); err != nil {
		return table.StatisticsFile{}, err
	}
	before := int64(buf.Len())
	if err := w.Finish(); err != nil {
		return table.StatisticsFile{}, err
	}
	loc := tbl.MetadataLocation()
	path := loc[:strings.LastIndex(loc, "/")+1] + name
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return table.StatisticsFile{}, err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return table.StatisticsFile{}, fmt.Errorf("write the key index of %s: the table's storage cannot write files", refOf(tbl))
	}
	if err := wfs.WriteFile(path, buf.Bytes()); err != nil {
		return table.StatisticsFile{}, fmt.Errorf("write the key index %s: %w", path, err)
	}
	indexFiles.put(path, d.seal())
	return table.StatisticsFile{
		SnapshotID: snap.SnapshotID, StatisticsPath: path, FileSizeInBytes: int64(buf.Len()), FileFooterSizeInBytes: int64(buf.Len()) - before,
		BlobMetadata: []table.BlobMetadata{{Type: KeyIndexBlob, SnapshotID: snap.SnapshotID, SequenceNumber: snap.SequenceNumber, Fields: []int32{}, Properties: props}},
	}, nil
}

// ReindexResult says what Reindex built.
type ReindexResult struct {
	Keys int
	// Rebuilt is set when the index main had could not be read and was rebuilt from the
	// summaries alone.
	Rebuilt bool
	// Gap is set when main's history lost snapshots no index covers (expired before the table
	// had one, or behind a broken index): keys published before GapMs are not in the index,
	// and for them the idempotency horizon holds as before.
	Gap   bool
	GapMs int64
}

// Reindex attaches to main's head an index of every key of main (a new base and an empty
// delta), in a commit that leaves main where it is, and reads or rewrites no data. A readable index on main is carried forward with
// the summaries after it (its keys may be all that is left of expired snapshots); one that
// cannot be read is rebuilt from the summaries of main's ancestry.
func (c *Catalog) Reindex(ctx context.Context, ref Ref) (*ReindexResult, error) {
	for try := 0; try < 20; try++ {
		tbl, err := c.Load(ctx, ref)
		if err != nil {
			return nil, err
		}
		head := tbl.CurrentSnapshot()
		if head == nil {
			return &ReindexResult{}, nil
		}
		res := &ReindexResult{}
		a, err := walkKeys(ctx, tbl, true)
		var bad *KeyIndexError
		if errors.As(err, &bad) {
			res.Rebuilt = true
			a, err = walkKeys(ctx, tbl, false)
		}
		if err != nil {
			return nil, err
		}
		updates, d, err := indexUpdates(ctx, tbl, a, nil, head, true)
		if err != nil {
			return nil, err
		}
		res.Keys, res.Gap, res.GapMs = d.total, d.gap, d.gapMs
		err = c.commit(ctx, ref, []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &head.SnapshotID)}, updates)
		if err == nil {
			return res, nil
		}
		if !isConflict(err) {
			return nil, fmt.Errorf("attach the key index to %s: %w", ref, err)
		}
	}
	return nil, &ConflictError{Ref: ref, Err: errors.New("main kept moving while the key index was rebuilt")}
}

// EnsureIndex gives main's head an index when it has none (a table written before the index,
// or by a writer that does not keep one), so that expiring the snapshots behind it keeps their
// keys. A readable index on an older snapshot of main is carried forward, not rebuilt.
func (c *Catalog) EnsureIndex(ctx context.Context, ref Ref) error {
	tbl, err := c.Load(ctx, ref)
	if err != nil {
		return err
	}
	head := tbl.CurrentSnapshot()
	if head == nil {
		return nil
	}
	if _, ok := indexStats(tbl)[head.SnapshotID]; ok {
		_, err := keyIndex(ctx, tbl) // an unreadable index must stop expiry, not be expired past
		return err
	}
	a, err := keyIndex(ctx, tbl)
	if err != nil {
		return err
	}
	updates, _, err := indexUpdates(ctx, tbl, a, nil, head, false)
	if err != nil {
		return err
	}
	return c.commit(ctx, ref, []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &head.SnapshotID)}, updates)
}
