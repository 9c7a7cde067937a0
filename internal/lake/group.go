package lake

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// DefaultGroupSize is how many windows a backfill publishes in one catalog commit. Every
// commit rewrites the table's whole metadata.json, so one commit per window makes a
// long backfill slower with each window (measured: 10 per commit is 54 windows/s against 8).
const DefaultGroupSize = 10

// Group publishes the keyed appends of several runs of one process together. Each run's
// batch is still its own snapshot carrying its own key, but the batches waiting on one table
// are built on main's head and added to main in one commit that asserts main did not move:
// the exactly-once rules of a single publish hold for each of them.
//
// A run calls Enter before it starts work and Leave when it ends. A run whose publish waits in
// the group gives its slot to the next run, so the next batch's reading and checking overlaps
// with the wait. The waiting batches are published when every run in the group is waiting or
// when Size of them wait.
type Group struct {
	// Size is the most batches one commit publishes.
	Size int

	slots chan struct{}
	// queued bounds the batches written and not yet published (waiting or in a commit):
	// when commits are slower than reading, as they become when history grows, runs would
	// otherwise keep starting, each holding a DuckDB database and its files until its commit
	// (a backfill of 6,000 hourly windows grew past 20 GB).
	queued  chan struct{}
	mu      sync.Mutex
	running int
	waiting []*groupItem
	flushMu sync.Mutex
}

// NewGroup makes a group in which at most parallel runs work at once and at most size
// batches go in one commit.
func NewGroup(parallel, size int) *Group {
	size = max(size, 1)
	return &Group{Size: size, slots: make(chan struct{}, max(parallel, 1)), queued: make(chan struct{}, 2*size)}
}

// Enter waits for a slot for a run.
func (g *Group) Enter() {
	g.slots <- struct{}{}
	g.mu.Lock()
	g.running++
	g.mu.Unlock()
}

// Leave ends a run: its slot goes to the next, and the batches waiting go out if the run was
// the last one not waiting.
func (g *Group) Leave() {
	<-g.slots
	g.mu.Lock()
	g.running--
	batch := g.takeLocked()
	g.mu.Unlock()
	g.flush(batch)
}

// takeLocked returns the waiting batches when it is time to publish them.
func (g *Group) takeLocked() []*groupItem {
	// running counts the runs still working, not those waiting.
	if len(g.waiting) == 0 || (g.running > 0 && len(g.waiting) < g.Size) {
		return nil
	}
	batch := g.waiting
	g.waiting = nil
	return batch
}

// groupItem is one run's batch, written and waiting for its commit.
type groupItem struct {
	cat      *Catalog
	ref      Ref
	db       *engine.DB
	relation string
	opts     PublishOptions
	w        *writer
	res      *PublishResult
	err      error
	done     chan struct{}
}

// wait queues item, gives the run's slot away until the item is published, and returns how it
// went.
func (g *Group) wait(item *groupItem) (*PublishResult, error) {
	item.done = make(chan struct{})
	// Still holding its slot, so no new run starts while the queue is full; the batches
	// ahead are in commits or will be (a full queue holds at least a batch of Size), so
	// room comes.
	g.queued <- struct{}{}
	<-g.slots
	g.mu.Lock()
	g.running--
	g.waiting = append(g.waiting, item)
	batch := g.takeLocked()
	g.mu.Unlock()
	g.flush(batch)
	<-item.done
	<-g.queued // before taking a slot again: the runs holding the slots may wait for room
	g.slots <- struct{}{}
	g.mu.Lock()
	g.running++
	g.mu.Unlock()
	return item.res, item.err
}

// flush publishes batch, one commit per table. Flushes run one at a time: while one commits,
// the next batch gathers.
func (g *Group) flush(batch []*groupItem) {
	if len(batch) == 0 {
		return
	}
	g.flushMu.Lock()
	defer g.flushMu.Unlock()
	byTable := map[string][]*groupItem{}
	var tables []string
	for _, it := range batch {
		k := it.cat.Warehouse + "\x00" + it.cat.Identifier + "\x00" + it.ref.String()
		if byTable[k] == nil {
			tables = append(tables, k)
		}
		byTable[k] = append(byTable[k], it)
	}
	sort.Strings(tables)
	for _, k := range tables {
		items := byTable[k]
		// Snapshots go onto main in window order, whatever order the runs finished in.
		sort.SliceStable(items, func(i, j int) bool {
			a, b := items[i].opts.SnapshotProps[WindowProp], items[j].opts.SnapshotProps[WindowProp]
			if a != b {
				return a < b
			}
			return items[i].opts.Key < items[j].opts.Key
		})
		publishItems(context.Background(), items)
		for _, it := range items {
			close(it.done)
		}
	}
}

// groupable reports whether a publish can join a group: a first attempt of an append that
// DuckDB writes, with no column the table lacks. Overwrites and upserts read the table they
// replace, so each needs main as the batch before it left it; a retry may need to fence older
// attempts; a new column changes the schema the files are written in.
func groupable(o PublishOptions, mode v1.WriteMode, tbl *table.Table, bs *iceberg.Schema) bool {
	if o.Group == nil || mode != v1.WriteAppend || o.Attempt != 1 || o.ReplaceWhere != nil || needsArrowWriter(tbl.Schema(), tbl.Spec()) {
		return false
	}
	return len(schemaChanges(tbl.Schema(), bs)) == 0
}

// publishGrouped writes the batch's files now and waits for the group to publish them.
func (c *Catalog) publishGrouped(ctx context.Context, db *engine.DB, relation string, ref Ref, b *batch, o PublishOptions, res *PublishResult) (*PublishResult, error) {
	props := snapshotProps(o)
	w := &writer{db: db, relation: relation, mode: v1.WriteAppend, props: props, tmp: b.tmp, prewritten: o.Prewritten, prewrittenParts: o.PrewrittenPartitions, loc: o.Location}
	files, err := w.writeBatch(ctx, b.table)
	if err != nil {
		w.removeFiles()
		return nil, err
	}
	w.added = files
	item := &groupItem{cat: c, ref: ref, db: db, relation: relation, opts: o, w: w, res: res}
	return o.Group.wait(item)
}

// publishItems publishes the batches of one table in one commit, through the steps of
// Publish: find each key on main, build every batch not there on main's head (one snapshot
// each, in order, uncommitted), and add them and move main to the last in one commit asserting
// main is still that head. If building fails, each batch is published on its own, so one bad
// batch does not hold back the others.
func publishItems(ctx context.Context, items []*groupItem) {
	first := items[0]
	c, ref, o := first.cat, first.ref, first.opts
	fail := func(its []*groupItem, err error) {
		for _, it := range its {
			it.res, it.err = nil, err
			it.w.removeFiles()
		}
	}
	pending := items
	for try := 1; ; try++ {
		tbl, err := c.Load(ctx, ref)
		if err != nil {
			fail(pending, err)
			return
		}
		var left []*groupItem
		for _, it := range pending {
			s, err := FindKey(tbl, it.opts.Key, it.opts.Now())
			switch {
			case err != nil:
				fail([]*groupItem{it}, err)
			case s == nil && Fenced(tbl, it.opts.RunID, it.opts.Attempt):
				fail([]*groupItem{it}, fenceError(ref, it.opts.RunID, it.opts.Attempt))
			case s != nil:
				it.res = skipped(it.res, s)
				it.w.removeFiles()
			default:
				it.res.Tries = try
				left = append(left, it)
			}
		}
		pending = left
		if len(pending) == 0 {
			return
		}
		if tbl.CurrentSnapshot() == nil {
			if err := c.ensureBase(ctx, tbl); err != nil {
				fail(pending, err)
				return
			}
			continue
		}
		base := tbl.CurrentSnapshot()
		snaps, adds, err := c.stageItems(ctx, tbl, pending)
		switch {
		case err != nil:
			for _, it := range pending {
				it.res, it.err = publishAlone(ctx, it)
			}
			return
		default:
			head := snaps[len(snaps)-1].SnapshotID
			o.Hook("staged")
			var fences []table.Requirement
			var ferr error
			for _, it := range pending {
				var f []table.Requirement
				if f, ferr = notFenced(tbl, it.opts.RunID, it.opts.Attempt); ferr != nil {
					break
				}
				fences = append(fences, f...)
			}
			if ferr != nil {
				// Only first attempts are grouped, and those need no tag of their own.
				fail(pending, ferr)
				return
			}
			index, err := c.nextIndex(ctx, tbl, snaps)
			if err != nil {
				fail(pending, err)
				return
			}
			o.Hook("indexed")
			err = c.publishBuilt(ctx, tbl, base.SnapshotID, adds, head, index, fences...)
			if err == nil {
				o.Hook("published")
				before := totalRecords(base)
				for i, it := range pending {
					it.res.Status, it.res.SnapshotID = Published, snaps[i].SnapshotID
					it.res.RowsBefore, it.res.RowsAfter = before, totalRecords(snaps[i])
					before = it.res.RowsAfter
				}
				c.cleanMetadata(ctx, ref)
				return
			}
			if !isConflict(err) {
				// The outcome is unknown: the catalog may have taken the commit. Look first.
				t2, lerr := c.Load(ctx, ref)
				for _, it := range pending {
					if lerr == nil {
						if s := publishedBy(t2, it.opts); s != nil {
							it.res.Status, it.res.SnapshotID, it.res.RowsAfter = Published, s.SnapshotID, totalRecords(s)
							continue
						}
					}
					// The files may be referenced: never delete them now.
					it.res, it.err = nil, fmt.Errorf("publish to %s: outcome unknown: %w", ref, err)
				}
				return
			}
		}
		if try >= o.MaxTries {
			fail(pending, &ConflictError{Ref: ref, Err: fmt.Errorf("main kept moving: gave up after %d tries", try)})
			return
		}
		o.backoff(try)
	}
}

// stageItems builds each item as its own snapshot on main, in item order, and returns the
// snapshots and the updates that add them: nothing is committed until the publish.
func (c *Catalog) stageItems(ctx context.Context, tbl *table.Table, items []*groupItem) ([]*table.Snapshot, []table.Update, error) {
	tx := tbl.NewTransaction()
	for _, it := range items {
		if err := it.w.addFiles(ctx, tx, it.w.added); err != nil {
			return nil, nil, err
		}
	}
	snaps, adds, err := builtSnapshots(tbl, tx)
	if err == nil && len(snaps) != len(items) {
		err = fmt.Errorf("stage on %s: %d snapshots for %d batches", refOf(tbl), len(snaps), len(items))
	}
	return snaps, adds, err
}

// publishAlone publishes one item of a group by itself, with the full protocol.
func publishAlone(ctx context.Context, it *groupItem) (*PublishResult, error) {
	it.w.removeFiles()
	o := it.opts
	o.Group = nil
	return it.cat.Publish(ctx, it.db, it.relation, it.ref, o)
}
