// Package maintain keeps Iceberg tables healthy as they age: it expires old snapshots and
// deletes orphan files, as a dry run unless asked to apply.
//
// Expiry first gives main's head the key index if it has none, so every key of an expired
// snapshot is still found (internal/lake's keyindex.go). It never removes a snapshot newer than
// the table's idempotency horizon (keyed or not: readers that know only summaries, such as the
// Python ldp, walk main through them, and a table whose ancestry broke before it had an index
// fails closed on a gap inside the horizon), nor a branch head, nor the last N snapshots.
package maintain

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Options say what maintenance does.
type Options struct {
	// ExpireDays expires snapshots older than this many days; nil expires nothing.
	ExpireDays *int
	// RetainLast keeps at least this many snapshots of main (default 1).
	RetainLast int
	// Orphans lists (and with Apply deletes) files no snapshot or metadata references.
	Orphans bool
	// OrphanAgeHours is how old an unreferenced file must be to count as an orphan (nil is
	// 72), so the files of a write in flight are not taken. Below one hour it needs Force.
	OrphanAgeHours *float64
	// Force allows an orphan age below one hour.
	Force bool
	// KeepMetadataVersions sets write.metadata.previous-versions-max.
	KeepMetadataVersions int
	Apply                bool
	Now                  func() time.Time
}

// Report says what maintenance found and did.
type Report struct {
	Table   string `json:"table"`
	Applied bool   `json:"applied"`
	// Snapshots before; the ids that expire (or would); how many the horizon kept.
	Snapshots int     `json:"snapshots"`
	Expire    []int64 `json:"expire"`
	// ExpireBytes is the size of the data files only the expiring snapshots reference.
	ExpireBytes   int64    `json:"expire_bytes"`
	HorizonDays   int      `json:"horizon_days"`
	KeptByHorizon int      `json:"kept_by_horizon"`
	Orphans       []string `json:"orphans"`
	OrphanBytes   int64    `json:"orphan_bytes"`
	// LiveRuns is how many runs were writing to the warehouse: their files were kept.
	LiveRuns int `json:"live_runs,omitempty"`
	// DeadScratch are the scratch folders dead runs left in the warehouse (removed with Apply).
	DeadScratch  []string `json:"dead_scratch,omitempty"`
	MetadataKeep int      `json:"metadata_versions_kept,omitempty"`
}

// Run maintains the table ref of cat.
func Run(ctx context.Context, cat *lake.Catalog, ref lake.Ref, o Options) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetainLast < 1 {
		o.RetainLast = 1
	}
	age := 72.0
	if o.OrphanAgeHours != nil {
		age = *o.OrphanAgeHours
	}
	if o.Orphans {
		switch {
		case age < 0:
			return nil, ldperr.Configf("", "orphan age %g hours: it must be 0 or more", age)
		case age < 1 && !o.Force:
			return nil, ldperr.Configf("", "orphan age %g hours is below one hour: a write in flight on another machine may not have committed its files yet, and deleting them breaks the table. Use 1 or more, or add --force (force: true in a maintain task) if no write can be in flight", age)
		}
	}
	tbl, err := cat.Load(ctx, ref)
	if err != nil {
		return nil, err
	}
	rep := &Report{Table: ref.String(), Applied: o.Apply, Expire: []int64{}, Orphans: []string{}, Snapshots: len(tbl.Metadata().Snapshots())}
	rep.HorizonDays = horizonDays(tbl)
	if o.ExpireDays != nil {
		days := *o.ExpireDays
		if days < rep.HorizonDays {
			days = rep.HorizonDays
		}
		cutoff := o.Now().Add(-time.Duration(days) * 24 * time.Hour)
		rep.Expire, rep.KeptByHorizon = candidates(tbl, cutoff, o.RetainLast, o.Now().Add(-time.Duration(*o.ExpireDays)*24*time.Hour))
		if len(rep.Expire) > 0 {
			if rep.ExpireBytes, err = freedBytes(ctx, tbl, rep.Expire); err != nil {
				return nil, err
			}
		}
		if o.Apply && len(rep.Expire) > 0 {
			// The head's key index keeps the keys of the snapshots that expire: build it first
			// on a table that has none, and stop if it cannot be read.
			if err := cat.EnsureIndex(ctx, ref); err != nil {
				return nil, fmt.Errorf("expire snapshots of %s: %w", ref, err)
			}
			if tbl, err = cat.Load(ctx, ref); err != nil {
				return nil, err
			}
			tx := tbl.NewTransaction()
			olderThan := time.Since(cutoff)
			if olderThan <= 0 { // a clock ahead of this machine's (tests): everything is older
				olderThan = time.Nanosecond
			}
			if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(o.RetainLast)); err != nil {
				return nil, fmt.Errorf("expire snapshots of %s: %w", ref, err)
			}
			if _, err := tx.Commit(ctx); err != nil && !onlyMissingFiles(err) {
				return nil, fmt.Errorf("expire snapshots of %s: %w", ref, err)
			}
			if tbl, err = cat.Load(ctx, ref); err != nil {
				return nil, err
			}
		}
	}
	if o.KeepMetadataVersions > 0 {
		rep.MetadataKeep = o.KeepMetadataVersions
		if o.Apply {
			tx := tbl.NewTransaction()
			if err := tx.SetProperties(map[string]string{"write.metadata.previous-versions-max": strconv.Itoa(o.KeepMetadataVersions)}); err != nil {
				return nil, err
			}
			if tbl, err = tx.Commit(ctx); err != nil {
				return nil, err
			}
		}
	}
	if o.Orphans {
		if err := orphans(ctx, cat, ref, time.Duration(age*float64(time.Hour)), o, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// orphans finds (and with o.Apply deletes) the files under the table's location that no
// snapshot or metadata version references and that are older than age. A file is never an
// orphan while a write may still commit it:
//   - nothing newer than the start of the oldest live run writing to the warehouse is taken
//     (a run's scratch folder there records its process), whatever age says;
//   - the table is read again after the scan, and a file only counts if it is unreferenced
//     in both reads (a publish that committed meanwhile, or a staging branch, references it).
//
// The scratch folders of dead runs (killed by SIGKILL, say) are listed too and removed.
func orphans(ctx context.Context, cat *lake.Catalog, ref lake.Ref, age time.Duration, o Options, rep *Report) error {
	local := cat.Warehouse != "" && !lake.IsRemote(cat.Warehouse)
	if local {
		if oldest := lake.OldestLiveRun(cat.Warehouse); !oldest.IsZero() {
			rep.LiveRuns = len(lake.LiveRuns(cat.Warehouse))
			if d := o.Now().Sub(oldest) + time.Minute; d > age {
				age = d
			}
		}
	}
	first, err := cat.Load(ctx, ref)
	if err != nil {
		return err
	}
	plan, err := first.PlanOrphanFiles(ctx, table.WithFilesOlderThan(age))
	if err != nil {
		return fmt.Errorf("find orphan files of %s: %w", ref, err)
	}
	again, err := cat.Load(ctx, ref)
	if err != nil {
		return err
	}
	still := map[string]bool{}
	if again.MetadataLocation() == first.MetadataLocation() {
		for _, f := range plan.Files() {
			still[f] = true
		}
	} else {
		recheck, err := again.PlanOrphanFiles(ctx, table.WithFilesOlderThan(age))
		if err != nil {
			return fmt.Errorf("find orphan files of %s: %w", ref, err)
		}
		for _, f := range recheck.Files() {
			still[f] = true
		}
	}
	// A key index's base is attached to the table's ldp.init snapshot; if another engine
	// expired that snapshot, only the delta that names it reaches it, and it must stay.
	chain := map[string]bool{}
	for _, p := range append(lake.IndexFiles(first), lake.IndexFiles(again)...) {
		chain[strings.TrimPrefix(p, "file://")] = true
	}
	for _, f := range plan.OrphanFiles() {
		if still[f.Path] && !chain[strings.TrimPrefix(f.Path, "file://")] {
			rep.Orphans = append(rep.Orphans, f.Path)
			rep.OrphanBytes += f.SizeBytes
		}
	}
	sort.Strings(rep.Orphans)
	if local {
		for _, r := range lake.ScratchRuns(cat.Warehouse) {
			if !r.Live {
				rep.DeadScratch = append(rep.DeadScratch, r.Dir)
			}
		}
	}
	if !o.Apply {
		return nil
	}
	if len(rep.Orphans) > 0 {
		fsys, err := again.FS(ctx)
		if err != nil {
			return err
		}
		for _, f := range rep.Orphans {
			if err := fsys.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("delete orphan file %s of %s: %w", f, ref, err)
			}
		}
	}
	if local {
		lake.ClearDeadRuns(cat.Warehouse)
	}
	return nil
}

func horizonDays(tbl *table.Table) int {
	if v, err := strconv.Atoi(tbl.Properties()[lake.HorizonProperty]); err == nil && v > 0 {
		return v
	}
	return lake.DefaultHorizonDays
}

// candidates lists the snapshots older than cutoff that are neither a ref's head nor among the
// last retain of main's ancestry, and counts those only the horizon keeps (older than asked).
func candidates(tbl *table.Table, cutoff time.Time, retain int, asked time.Time) ([]int64, int) {
	keep := map[int64]bool{}
	for _, ref := range tbl.Metadata().Refs() {
		keep[ref.SnapshotID] = true
	}
	// An environment's branch needs its snapshots back to where it meets main.
	for id := range lake.EnvLive(tbl) {
		keep[id] = true
	}
	chain := lake.Ancestry(tbl)
	for _, s := range chain[:max(0, min(retain, len(chain)))] {
		keep[s.SnapshotID] = true
	}
	var out []int64
	horizonKept := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if keep[s.SnapshotID] {
			continue
		}
		t := time.UnixMilli(s.TimestampMs)
		switch {
		case t.Before(cutoff):
			out = append(out, s.SnapshotID)
		case t.Before(asked):
			horizonKept++
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, horizonKept
}

// freedBytes sums the data files that only the expiring snapshots reference: what expiry frees.
func freedBytes(ctx context.Context, tbl *table.Table, expire []int64) (int64, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	gone := map[int64]bool{}
	for _, id := range expire {
		gone[id] = true
	}
	sizes := map[string]int64{}
	kept := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		manifests, err := s.Manifests(fs)
		if err != nil {
			return 0, fmt.Errorf("read the manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			entries, err := m.FetchEntries(fs, true)
			if err != nil {
				return 0, err
			}
			for _, e := range entries {
				p := e.DataFile().FilePath()
				sizes[p] = e.DataFile().FileSizeBytes()
				if !gone[s.SnapshotID] {
					kept[p] = true
				}
			}
		}
	}
	var total int64
	for p, n := range sizes {
		if !kept[p] {
			total += n
		}
	}
	return total, nil
}

// onlyMissingFiles reports whether every error joined in err is a file that was not there to
// delete. iceberg-go deletes an expired snapshot's files after the catalog accepted the
// expiry and joins each failed delete into the commit's error; a staged snapshot whose writer
// lost a race and removed its own files leaves such names behind, and a file already gone is
// what the expiry wanted.
func onlyMissingFiles(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !onlyMissingFiles(e) {
				return false
			}
		}
		return len(joined.Unwrap()) > 0
	}
	return errors.Is(err, fs.ErrNotExist)
}
