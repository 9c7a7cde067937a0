package lake

// The key index: every idempotency key ever published on main, kept in a Puffin file that the
// publish commit attaches to the snapshot it moves main to (an Iceberg set-statistics update in
// the same catalog commit). A key is looked up in the index of the newest indexed snapshot on
// main plus the summaries of the snapshots after it, so the answer survives the expiry of the
// snapshot that published the key and costs one file read per index, not a walk of history.
// docs/exactly-once.md says why this shape and what it guarantees.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
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
// the file (it is a statistics file of a live snapshot) and ignore it.
const KeyIndexBlob = "ldp-key-index-v1"

// Properties of the index blob. gap-* are set when the index was built from an ancestry that
// had lost snapshots (expired before the table had an index): keys published before the gap
// are unknown, so the horizon rule still applies to them.
const (
	indexCountProp  = "ldp.count"
	indexSHA256Prop = "ldp.sha256"
	indexGapMsProp  = "ldp.gap-timestamp-ms"
	indexGapIDProp  = "ldp.gap-snapshot-id"
)

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

// keyIndexData is the content of one index file: entries sorted by key, one per key.
type keyIndexData struct {
	entries []KeyEntry
	gap     bool
	gapMs   int64
	gapID   int64
}

func (d *keyIndexData) find(key string) (KeyEntry, bool) {
	i, ok := slices.BinarySearchFunc(d.entries, key, func(e KeyEntry, k string) int { return strings.Compare(e.Key, k) })
	if !ok {
		return KeyEntry{}, false
	}
	return d.entries[i], true
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

// indexStats maps the snapshots that carry an ldp key index to its statistics file.
func indexStats(tbl *table.Table) map[int64]table.StatisticsFile {
	out := map[int64]table.StatisticsFile{}
	for sf := range tbl.Metadata().Statistics() {
		if isKeyIndex(sf) {
			out[sf.SnapshotID] = sf
		}
	}
	return out
}

func isKeyIndex(sf table.StatisticsFile) bool {
	for _, b := range sf.BlobMetadata {
		if string(b.Type) == KeyIndexBlob {
			return true
		}
	}
	return false
}

// readKeyIndex reads and checks the index file sf; any fault is a *KeyIndexError.
func readKeyIndex(ctx context.Context, tbl *table.Table, sf table.StatisticsFile) (*keyIndexData, error) {
	if d, ok := indexFiles.get(sf.StatisticsPath); ok {
		return d, nil
	}
	fail := func(err error) error { return &KeyIndexError{Ref: refOf(tbl), Path: sf.StatisticsPath, Err: err} }
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fail(err)
	}
	f, err := fsys.Open(sf.StatisticsPath)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	r, err := puffin.NewReader(f)
	if err != nil {
		return nil, fail(err)
	}
	for _, b := range r.Blobs() {
		if string(b.Type) != KeyIndexBlob {
			continue
		}
		data, err := r.ReadBlobByMetadata(b)
		if err != nil {
			return nil, fail(err)
		}
		d, err := decodeKeyIndex(data, b.Properties)
		if err != nil {
			return nil, fail(err)
		}
		indexFiles.put(sf.StatisticsPath, d)
		return d, nil
	}
	return nil, fail(fmt.Errorf("the file holds no %s blob", KeyIndexBlob))
}

// encodeKeyIndex lays the entries out as length-prefixed records, sorted by key.
func encodeKeyIndex(entries []KeyEntry) []byte {
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

func decodeKeyIndex(data []byte, props map[string]string) (*keyIndexData, error) {
	sum := sha256.Sum256(data)
	if want := props[indexSHA256Prop]; want != hex.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("checksum mismatch: the blob's sha256 is %s, its footer says %q", hex.EncodeToString(sum[:]), want)
	}
	count, err := strconv.Atoi(props[indexCountProp])
	if err != nil {
		return nil, fmt.Errorf("bad %s %q", indexCountProp, props[indexCountProp])
	}
	d := &keyIndexData{entries: make([]KeyEntry, 0, count)}
	if v, ok := props[indexGapMsProp]; ok {
		d.gap = true
		d.gapMs, _ = strconv.ParseInt(v, 10, 64)
		d.gapID, _ = strconv.ParseInt(props[indexGapIDProp], 10, 64)
	}
	rd := bytes.NewReader(data)
	str := func() (string, error) {
		n, err := binary.ReadUvarint(rd)
		if err != nil || n > uint64(rd.Len()) {
			return "", errors.New("truncated record")
		}
		b := make([]byte, n)
		io.ReadFull(rd, b)
		return string(b), nil
	}
	for rd.Len() > 0 {
		var e KeyEntry
		var err error
		if e.Key, err = str(); err != nil {
			return nil, err
		}
		if e.SnapshotID, err = binary.ReadVarint(rd); err != nil {
			return nil, errors.New("truncated record")
		}
		if e.TimestampMs, err = binary.ReadVarint(rd); err != nil {
			return nil, errors.New("truncated record")
		}
		if e.Window, err = str(); err != nil {
			return nil, err
		}
		if e.RunID, err = str(); err != nil {
			return nil, err
		}
		if e.SpecHash, err = str(); err != nil {
			return nil, err
		}
		if n := len(d.entries); n > 0 && d.entries[n-1].Key >= e.Key {
			return nil, fmt.Errorf("keys out of order at %q", e.Key)
		}
		d.entries = append(d.entries, e)
	}
	if len(d.entries) != count {
		return nil, fmt.Errorf("%d keys, the footer says %d", len(d.entries), count)
	}
	return d, nil
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
		for _, e := range a.index.entries {
			hashes[e.SpecHash] = true
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
// file is written before the commit and never changed: if the commit does not land, it is an
// orphan that maintenance removes. The same commit expires a slab of history (retention.go):
// the index it attaches is what keeps the expired snapshots' keys.
func (c *Catalog) nextIndex(ctx context.Context, tbl *table.Table, staged []*table.Snapshot) ([]table.Update, error) {
	a, err := keyIndex(ctx, tbl)
	if err != nil {
		return nil, err
	}
	d := merged(a, staged)
	head := staged[len(staged)-1]
	sf, err := writeKeyIndex(ctx, tbl, head, d)
	if err != nil {
		return nil, err
	}
	updates := []table.Update{table.NewSetStatisticsUpdate(sf)}
	for id := range indexStats(tbl) {
		updates = append(updates, table.NewRemoveStatisticsUpdate(id))
	}
	return append(updates, expireUpdates(ctx, tbl, staged, time.Now())...), nil
}

// merged is a's index with the keys after it and those of staged (oldest first) laid over it:
// the newest snapshot holding a key is the one recorded.
func merged(a *mainKeys, staged []*table.Snapshot) *keyIndexData {
	byKey := map[string]KeyEntry{}
	d := &keyIndexData{}
	if a.index != nil {
		for _, e := range a.index.entries {
			byKey[e.Key] = e
		}
		d.gap, d.gapMs, d.gapID = a.index.gap, a.index.gapMs, a.index.gapID
	} else if a.broken {
		d.gap, d.gapMs, d.gapID = true, a.lastMs, a.missing
	}
	for k, e := range a.keys {
		byKey[k] = e
	}
	for _, s := range staged {
		if e := entryOf(s); e.Key != "" {
			byKey[e.Key] = e
		}
	}
	d.entries = make([]KeyEntry, 0, len(byKey))
	for _, e := range byKey {
		d.entries = append(d.entries, e)
	}
	slices.SortFunc(d.entries, func(x, y KeyEntry) int { return strings.Compare(x.Key, y.Key) })
	return d
}

// isIndexFile reports whether a file name is one writeKeyIndex chose.
func isIndexFile(name string) bool {
	return strings.HasPrefix(name, "ldp-keys-") && strings.HasSuffix(name, ".puffin")
}

// writeKeyIndex writes d as a Puffin file beside tbl's metadata and returns its statistics
// entry for snapshot head.
func writeKeyIndex(ctx context.Context, tbl *table.Table, head *table.Snapshot, d *keyIndexData) (table.StatisticsFile, error) {
	data := encodeKeyIndex(d.entries)
	sum := sha256.Sum256(data)
	props := map[string]string{indexCountProp: strconv.Itoa(len(d.entries)), indexSHA256Prop: hex.EncodeToString(sum[:])}
	if d.gap {
		props[indexGapMsProp], props[indexGapIDProp] = strconv.FormatInt(d.gapMs, 10), strconv.FormatInt(d.gapID, 10)
	}
	var buf bytes.Buffer
	w, err := puffin.NewWriter(&buf)
	if err != nil {
		return table.StatisticsFile{}, err
	}
	w.SetCreatedBy("ldp")
	if _, err := w.AddBlob(puffin.BlobMetadataInput{Type: KeyIndexBlob, SnapshotID: head.SnapshotID, SequenceNumber: head.SequenceNumber, Fields: []int32{}, Properties: props}, data); err != nil {
		return table.StatisticsFile{}, err
	}
	before := int64(buf.Len())
	if err := w.Finish(); err != nil {
		return table.StatisticsFile{}, err
	}
	loc := tbl.MetadataLocation()
	path := loc[:strings.LastIndex(loc, "/")+1] + fmt.Sprintf("ldp-keys-%d-%s.puffin", head.SnapshotID, uuid.NewString())
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
	indexFiles.put(path, d)
	return table.StatisticsFile{
		SnapshotID: head.SnapshotID, StatisticsPath: path, FileSizeInBytes: int64(buf.Len()), FileFooterSizeInBytes: int64(buf.Len()) - before,
		BlobMetadata: []table.BlobMetadata{{Type: KeyIndexBlob, SnapshotID: head.SnapshotID, SequenceNumber: head.SequenceNumber, Fields: []int32{}, Properties: props}},
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

// Reindex attaches to main's head an index of every key of main, in a commit that leaves main
// where it is, and reads or rewrites no data. A readable index on main is carried forward with
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
		d := merged(a, nil)
		res.Keys, res.Gap, res.GapMs = len(d.entries), d.gap, d.gapMs
		sf, err := writeKeyIndex(ctx, tbl, head, d)
		if err != nil {
			return nil, err
		}
		updates := []table.Update{}
		for id := range indexStats(tbl) {
			if id != head.SnapshotID {
				updates = append(updates, table.NewRemoveStatisticsUpdate(id))
			}
		}
		updates = append(updates, table.NewSetStatisticsUpdate(sf))
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
	sf, err := writeKeyIndex(ctx, tbl, head, merged(a, nil))
	if err != nil {
		return err
	}
	updates := []table.Update{}
	for id := range indexStats(tbl) {
		updates = append(updates, table.NewRemoveStatisticsUpdate(id))
	}
	updates = append(updates, table.NewSetStatisticsUpdate(sf))
	return c.commit(ctx, ref, []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &head.SnapshotID)}, updates)
}
