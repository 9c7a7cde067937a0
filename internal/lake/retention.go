package lake

// Bounded history: each publish also expires a slab of the snapshots past the table's
// retention, in the same catalog commit that moves main and attaches the key index that keeps
// their keys. A commit's cost (iceberg-go parses and rewrites the whole metadata.json) then
// stays flat however many windows the table has seen. The files only the expired snapshots
// referenced are deleted after that commit landed, never before: a crash in between leaves
// orphans that ldp maintain --orphans removes. docs/exactly-once.md describes the properties.

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Table properties of the retention. The first two are Iceberg's own (the ones its
// ExpireSnapshots action reads); the ldp.-prefixed ones are ldp's.
const (
	// MaxSnapshotAgeProp: snapshots of main older than this (milliseconds) expire, keeping at
	// least MinSnapshotsProp of them.
	MaxSnapshotAgeProp = "history.expire.max-snapshot-age-ms"
	MinSnapshotsProp   = "history.expire.min-snapshots-to-keep"
	// MaxSnapshotsProp caps main's history by count whatever its age, so that a backfill of
	// years in an afternoon is bounded as well as a year of hourly windows.
	MaxSnapshotsProp = "ldp.history.max-snapshots"
	// ExpireSlabProp is how many snapshots one publish expires at most (more when the publish
	// itself adds more, so that expiry keeps up).
	ExpireSlabProp = "ldp.history.expire.slab"
	// ExpireEnabledProp "false" turns automatic expiry off: the Python ldp reads keys only from
	// snapshot summaries, so a warehouse it shares must keep every keyed snapshot.
	ExpireEnabledProp = "ldp.history.expire.enabled"
)

// Retention defaults: a week of history for time travel, and never more than 500 snapshots
// (about 500 KB of metadata.json and some 1,000 files under metadata/).
const (
	DefaultMaxSnapshotAge = 7 * 24 * time.Hour
	DefaultMinSnapshots   = 1
	DefaultMaxSnapshots   = 500
	DefaultExpireSlab     = 50
)

// boundedProps are the TableProperties that bound a table's metadata files and manifests; a
// table created before ldp set them gets them with its next publish.
var boundedProps = []string{"commit.manifest-merge.enabled", "write.metadata.delete-after-commit.enabled", "write.metadata.previous-versions-max"}

// retention is a table's expiry settings, read from its properties.
type retention struct {
	enabled               bool
	maxAge                time.Duration
	minKeep, maxKeep, cap int
}

func retentionOf(tbl *table.Table) retention {
	p := tbl.Properties()
	num := func(key string, def int64) int64 {
		if n, err := strconv.ParseInt(p[key], 10, 64); err == nil && n > 0 {
			return n
		}
		return def
	}
	r := retention{
		enabled: p[ExpireEnabledProp] != "false",
		maxAge:  time.Duration(num(MaxSnapshotAgeProp, DefaultMaxSnapshotAge.Milliseconds())) * time.Millisecond,
		minKeep: int(num(MinSnapshotsProp, DefaultMinSnapshots)),
		maxKeep: int(num(MaxSnapshotsProp, DefaultMaxSnapshots)),
		cap:     int(num(ExpireSlabProp, DefaultExpireSlab)),
	}
	r.maxKeep = max(r.maxKeep, r.minKeep)
	return r
}

// expiry is one slab expired by a publish: the files to delete once the commit that moved main
// to head has landed.
type expiry struct {
	head    int64
	expired []int64
	files   []string
}

// pendingExpiries are the slabs of publishes in flight in this process, by the snapshot they
// move main to; afterPublish deletes the files of the one that landed.
var pendingExpiries = struct {
	sync.Mutex
	m map[int64]*expiry
}{m: map[int64]*expiry{}}

// expireUpdates are the updates that the commit moving main to staged's last snapshot (on top
// of tbl's main) adds to expire a slab of history: remove-snapshots for the oldest snapshots
// past the retention, and the bounding properties a table created before ldp set them lacks.
// It reads only the manifest lists of the slab and of the snapshot after it; if anything
// cannot be read it expires nothing this time (history grows by one commit, nothing is lost).
func expireUpdates(ctx context.Context, tbl *table.Table, staged []*table.Snapshot, now time.Time) []table.Update {
	var updates []table.Update
	props := iceberg.Properties{}
	for _, k := range boundedProps {
		if _, ok := tbl.Properties()[k]; !ok {
			props[k] = TableProperties[k]
		}
	}
	if len(props) > 0 {
		updates = append(updates, table.NewSetPropertiesUpdate(props))
	}
	r := retentionOf(tbl)
	if !r.enabled || len(staged) == 0 {
		return updates
	}
	e, err := planExpiry(ctx, tbl, staged, r, now)
	if err != nil || e == nil {
		return updates
	}
	pendingExpiries.Lock()
	if len(pendingExpiries.m) > 64 {
		clear(pendingExpiries.m) // publishes that did not land: their snapshots are still there
	}
	pendingExpiries.m[e.head] = e
	pendingExpiries.Unlock()
	return append(updates, table.NewRemoveSnapshotsUpdate(e.expired, false))
}

// planExpiry picks the slab and the files only it references.
//
// Main is linear (every publish is a child of main's head), and a snapshot's manifests are its
// parent's, merged or rewritten, plus its own: a manifest that the oldest kept snapshot of main
// does not list is listed by none after it. So a slab of main's oldest snapshots frees its
// manifest lists, the manifests it lists that the snapshot after it does not, and the data files
// that the slab's snapshots and the one after it removed (their DELETED entries: the snapshots
// where those files were live are all gone now). Anything a ref's head (a staging branch of a
// writer in flight, a tag) lists is kept. Snapshots that no ref reaches (the staging attempts
// that lost a race) go too, with their manifest lists and own manifests; their data files may
// be re-staged by a retry, so those are left to orphan removal.
func planExpiry(ctx context.Context, tbl *table.Table, staged []*table.Snapshot, r retention, now time.Time) (*expiry, error) {
	meta := tbl.Metadata()
	keep := map[int64]bool{}
	for name, ref := range meta.Refs() {
		if name != table.MainBranch {
			keep[ref.SnapshotID] = true
		}
	}
	// An environment's branch needs its snapshots back to where it meets main (env.go).
	for id := range EnvLive(tbl) {
		keep[id] = true
	}
	byID := map[int64]*table.Snapshot{}
	snaps := meta.Snapshots()
	for i := range snaps {
		byID[snaps[i].SnapshotID] = &snaps[i]
		if snaps[i].Summary != nil && snaps[i].Summary.Properties[InitProp] == "true" {
			keep[snaps[i].SnapshotID] = true // the fence's tags point at it
		}
	}
	reached := map[int64]bool{}
	for _, ref := range meta.Refs() {
		for s := byID[ref.SnapshotID]; s != nil && !reached[s.SnapshotID]; {
			reached[s.SnapshotID] = true
			if s.ParentSnapshotID == nil {
				break
			}
			s = byID[*s.ParentSnapshotID]
		}
	}
	chain := Ancestry(tbl)
	// After the commit main is staged (newest last) on top of chain: chain[i] is then the
	// (i+1+len(staged))-th newest. The old head stays (it is the staged snapshots' parent).
	cutoff := now.Add(-r.maxAge).UnixMilli()
	limit := max(r.cap, 2*len(staged))
	var tail []*table.Snapshot // oldest first
	for i := len(chain) - 1; i >= 1 && len(tail) < limit; i-- {
		s, rank := chain[i], i+1+len(staged)
		if keep[s.SnapshotID] {
			continue
		}
		if rank > r.maxKeep || (rank > r.minKeep && s.TimestampMs < cutoff) {
			tail = append(tail, s)
			continue
		}
		break
	}
	var loose []*table.Snapshot
	for i := range snaps {
		if s := &snaps[i]; !reached[s.SnapshotID] && !keep[s.SnapshotID] && len(tail)+len(loose) < limit {
			loose = append(loose, s)
		}
	}
	if len(tail)+len(loose) == 0 {
		return nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	e := &expiry{head: staged[len(staged)-1].SnapshotID}
	// Each manifest list is read once: the slab's are walked twice (the data files their
	// snapshots removed, then the manifests they free) and the snapshot after it twice (what
	// stays, and what it removed), and a list is an Avro file to open, parse and decode.
	read := map[int64][]iceberg.ManifestFile{}
	lists := func(s *table.Snapshot) ([]iceberg.ManifestFile, error) {
		if s.ManifestList == "" {
			return nil, nil
		}
		if ms, ok := read[s.SnapshotID]; ok {
			return ms, nil
		}
		ms, err := s.Manifests(fsys)
		if err == nil {
			read[s.SnapshotID] = ms
		}
		return ms, err
	}
	live, liveData, seen := map[string]bool{}, map[string]bool{}, map[string]bool{}
	drop := func(p string) {
		if p != "" && !live[p] && !liveData[p] && !seen[p] {
			seen[p] = true
			e.files = append(e.files, p)
		}
	}
	if len(tail) > 0 {
		// after is the oldest snapshot main keeps: what it lists stays, and so does what the
		// head of a ref that does not descend from it lists (one that does lists nothing the
		// slab freed: main is linear).
		var after *table.Snapshot
		for i, s := range chain {
			if s.SnapshotID == tail[len(tail)-1].SnapshotID {
				after = chain[i-1]
			}
		}
		heads := []*table.Snapshot{after}
		for id := range keep {
			descends := false
			for s := byID[id]; s != nil; {
				if s.SnapshotID == after.SnapshotID {
					descends = true
					break
				}
				if s.ParentSnapshotID == nil {
					break
				}
				s = byID[*s.ParentSnapshotID]
			}
			if !descends && byID[id] != nil {
				heads = append(heads, byID[id])
			}
		}
		for i, h := range heads {
			ms, err := lists(h)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				live[m.FilePath()] = true
				if i == 0 {
					continue
				}
				for ent, err := range m.Entries(fsys, true) {
					if err != nil {
						return nil, err
					}
					liveData[ent.DataFile().FilePath()] = true
				}
			}
		}
		for _, s := range append(append([]*table.Snapshot{}, tail...), after) {
			ms, err := lists(s)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if m.SnapshotID() != s.SnapshotID || m.DeletedDataFiles() == 0 {
					continue
				}
				for ent, err := range m.Entries(fsys, false) {
					if err != nil {
						return nil, err
					}
					if ent.Status() == iceberg.EntryStatusDELETED && ent.SnapshotID() == s.SnapshotID {
						drop(ent.DataFile().FilePath())
					}
				}
			}
		}
		for _, s := range tail {
			ms, err := lists(s)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				drop(m.FilePath())
			}
			drop(s.ManifestList)
			e.expired = append(e.expired, s.SnapshotID)
		}
	}
	for _, s := range loose {
		if ms, err := lists(s); err == nil {
			for _, m := range ms {
				if m.SnapshotID() == s.SnapshotID {
					drop(m.FilePath())
				}
			}
		}
		drop(s.ManifestList)
		e.expired = append(e.expired, s.SnapshotID)
	}
	return e, nil
}

// afterPublish deletes the files of the slab that the publish to tbl's main head expired, now
// that the commit landed; the slabs of publishes that did not land are forgotten (their
// snapshots are still there and a later publish expires them again). A file that cannot be
// deleted is an orphan for maintenance.
func afterPublish(ctx context.Context, tbl *table.Table) {
	pendingExpiries.Lock()
	if len(pendingExpiries.m) == 0 {
		pendingExpiries.Unlock()
		return
	}
	var landed []*expiry
	for _, s := range Ancestry(tbl) {
		if e, ok := pendingExpiries.m[s.SnapshotID]; ok {
			landed = append(landed, e)
			delete(pendingExpiries.m, s.SnapshotID)
		}
	}
	pendingExpiries.Unlock()
	if len(landed) == 0 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
next:
	for _, e := range landed {
		for _, id := range e.expired {
			if tbl.SnapshotByID(id) != nil {
				continue next // not expired after all: every file may still be needed
			}
		}
		for _, p := range e.files {
			fsys.Remove(p)
		}
	}
}

// SetTableProperties sets properties on ref's table in one commit (the retention properties
// above, for one).
func (c *Catalog) SetTableProperties(ctx context.Context, ref Ref, props map[string]string) error {
	return c.commit(ctx, ref, nil, []table.Update{table.NewSetPropertiesUpdate(props)})
}
