// Package maintain keeps Iceberg tables healthy as they age: it expires old snapshots and
// deletes orphan files, as a dry run unless asked to apply.
//
// Expiry never removes a snapshot newer than the table's idempotency horizon (keyed or not: the
// exactly-once search walks main through them, and a gap inside the horizon would make it fail
// closed), nor a branch head, nor the last N snapshots. So every key inside the horizon is still
// found after maintenance.
package maintain

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/ldp-dev/ldp/internal/lake"
)

// Options say what maintenance does.
type Options struct {
	// ExpireDays expires snapshots older than this many days; nil expires nothing.
	ExpireDays *int
	// RetainLast keeps at least this many snapshots of main (default 1).
	RetainLast int
	// Orphans lists (and with Apply deletes) files no snapshot or metadata references.
	Orphans bool
	// OrphanAgeHours is how old an unreferenced file must be to count as an orphan (default 72),
	// so the files of a write in flight are never taken.
	OrphanAgeHours float64
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
	MetadataKeep  int      `json:"metadata_versions_kept,omitempty"`
}

// Run maintains the table ref of cat.
func Run(ctx context.Context, cat *lake.Catalog, ref lake.Ref, o Options) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RetainLast < 1 {
		o.RetainLast = 1
	}
	if o.OrphanAgeHours <= 0 {
		o.OrphanAgeHours = 72
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
			tx := tbl.NewTransaction()
			olderThan := time.Since(cutoff)
			if olderThan <= 0 { // a clock ahead of this machine's (tests): everything is older
				olderThan = time.Nanosecond
			}
			if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(o.RetainLast)); err != nil {
				return nil, fmt.Errorf("expire snapshots of %s: %w", ref, err)
			}
			if _, err := tx.Commit(ctx); err != nil {
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
		age := time.Duration(o.OrphanAgeHours * float64(time.Hour))
		plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(age))
		if err != nil {
			return nil, fmt.Errorf("find orphan files of %s: %w", ref, err)
		}
		rep.Orphans = append(rep.Orphans, plan.Files()...)
		sort.Strings(rep.Orphans)
		rep.OrphanBytes = plan.TotalSizeBytes()
		if o.Apply && len(rep.Orphans) > 0 {
			if _, err := tbl.ExecuteOrphanCleanup(ctx, plan); err != nil {
				return nil, fmt.Errorf("delete orphan files of %s: %w", ref, err)
			}
		}
	}
	return rep, nil
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
	n := 0
	for s := tbl.CurrentSnapshot(); s != nil && n < retain; n++ {
		keep[s.SnapshotID] = true
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
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
