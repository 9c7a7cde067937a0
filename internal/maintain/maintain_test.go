package maintain

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
)

func setup(t *testing.T) (*lake.Catalog, lake.Ref) {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := lake.Open(ctx, &v1.Catalog{Identifier: "lake"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	ref := lake.Ref{Namespace: "lake", Name: "t"}
	if err := db.Exec(ctx, "CREATE TEMP TABLE b AS SELECT 1 AS id"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, err := cat.Publish(ctx, db, "b", ref, lake.PublishOptions{Key: k, RunID: k}); err != nil {
			t.Fatal(err)
		}
	}
	return cat, ref
}

func days(n int) *int { return &n }

func TestExpiryKeepsTheHorizon(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	rep, err := Run(ctx, cat, ref, Options{ExpireDays: days(0), Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	// Main's head and ldp.init (the key index tag holds it: the index's base hangs on it) are
	// never candidates; every other snapshot is inside the horizon.
	if len(rep.Expire) != 0 || rep.KeptByHorizon != rep.Snapshots-2 {
		t.Errorf("report %+v: nothing inside the horizon may expire", rep)
	}
	tbl, _ := cat.Load(ctx, ref)
	for _, k := range []string{"k1", "k2", "k3"} {
		if s, err := lake.FindKey(tbl, k, time.Now()); err != nil || s == nil {
			t.Errorf("key %s after maintenance: %v, %v", k, s, err)
		}
	}
}

func TestExpiryPastTheHorizon(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	dry, err := Run(ctx, cat, ref, Options{ExpireDays: days(7), Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Applied || len(dry.Expire) != dry.Snapshots-2 || dry.ExpireBytes != 0 {
		t.Fatalf("dry run %+v, want every snapshot but the head and ldp.init", dry)
	}
	tbl, _ := cat.Load(ctx, ref)
	if n := len(tbl.Metadata().Snapshots()); n != dry.Snapshots {
		t.Fatalf("a dry run changed the table: %d snapshots", n)
	}
	if _, err := Run(ctx, cat, ref, Options{ExpireDays: days(7), Now: later, Apply: true}); err != nil {
		t.Fatal(err)
	}
	// Thirty days on, the expired keys are still found in the head's key index: their windows
	// stay done, and a re-run is skipped.
	checkExpiredKeysFound(t, cat, ref, later())
}

// TestExpiryIndexesATableWithoutIndex: a table whose head has no key index (written by an ldp
// without it) gets one before its snapshots expire, so their keys are kept.
func TestExpiryIndexesATableWithoutIndex(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	tbl, _ := cat.Load(ctx, ref)
	// A commit that moves main with no index: a writer that does not keep one.
	tx := tbl.NewTransaction()
	if err := tx.AddFiles(ctx, nil, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, cat, ref, Options{ExpireDays: days(7), Now: later, Apply: true}); err != nil {
		t.Fatal(err)
	}
	checkExpiredKeysFound(t, cat, ref, later())
}

func TestOrphansListedThenDeleted(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	tbl, _ := cat.Load(ctx, ref)
	dir := strings.TrimPrefix(tbl.Location(), "file://") + "/data/stray"
	os.MkdirAll(dir, 0o755)
	stray := filepath.Join(dir, "left-behind.parquet")
	os.WriteFile(stray, []byte("not referenced"), 0o644)
	old := time.Now().Add(-100 * time.Hour)
	os.Chtimes(stray, old, old)
	rep, err := Run(ctx, cat, ref, Options{Orphans: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Orphans) != 1 || !strings.HasSuffix(rep.Orphans[0], "left-behind.parquet") || rep.OrphanBytes != 14 {
		t.Fatalf("orphans %v (%d bytes)", rep.Orphans, rep.OrphanBytes)
	}
	if _, err := os.Stat(stray); err != nil {
		t.Fatal("a dry run deleted the orphan")
	}
	if _, err := Run(ctx, cat, ref, Options{Orphans: true, Apply: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the orphan is still there: %v", err)
	}
	// The live files are untouched: the table still reads.
	db, _ := engine.Open(ctx)
	defer db.Close()
	tbl, _ = cat.Load(ctx, ref)
	if err := lake.RegisterView(ctx, db, "t", tbl, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Count(ctx, "t"); err != nil || n != 3 {
		t.Errorf("rows after orphan cleanup: %d, %v", n, err)
	}
}

// TestStagedFilesAreNotOrphans: while a staging branch exists, its data files are referenced.
func TestStagedFilesAreNotOrphans(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	db, _ := engine.Open(ctx)
	defer db.Close()
	db.Exec(ctx, "CREATE TEMP TABLE b AS SELECT 9 AS id")
	var during *Report
	_, err := cat.Publish(ctx, db, "b", ref, lake.PublishOptions{Key: "staged", RunID: "s", Hook: func(p string) {
		if p != "staged" {
			return
		}
		time.Sleep(1100 * time.Millisecond) // every file is now older than the orphan age below
		var err error
		if during, err = Run(ctx, cat, ref, Options{Orphans: true, OrphanAgeHours: hours(1.0 / 3600), Force: true}); err != nil {
			t.Error(err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if during == nil {
		t.Fatal("maintenance did not run while the branch existed")
	}
	for _, f := range during.Orphans {
		if strings.HasSuffix(f, ".parquet") {
			t.Errorf("a data file of the staged branch was listed as an orphan: %s", f)
		}
	}
}

// TestExpiryCountsTheBytesItFrees: after an overwrite, the replaced files are reachable only
// from old snapshots; expiring them frees their bytes, and the dry run says how many.
func TestExpiryCountsTheBytesItFrees(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	db, _ := engine.Open(ctx)
	defer db.Close()
	db.Exec(ctx, "CREATE TEMP TABLE b AS SELECT 2 AS id")
	if _, err := cat.Write(ctx, db, "b", ref, lake.WriteOptions{Mode: v1.WriteOverwrite}); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	dry, err := Run(ctx, cat, ref, Options{ExpireDays: days(7), Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if dry.ExpireBytes <= 0 {
		t.Errorf("expiry would free %d bytes, want the size of the three replaced files", dry.ExpireBytes)
	}
}

func hours(h float64) *float64 { return &h }

// TestOnlyMissingFiles: an expiry whose deletes found files already gone (a writer that lost
// a race removed its staged files) succeeded; any other failed delete is an error.
func TestOnlyMissingFiles(t *testing.T) {
	gone := &fs.PathError{Op: "remove", Path: "/w/data/a.parquet", Err: syscall.ENOENT}
	denied := &fs.PathError{Op: "remove", Path: "/w/data/b.parquet", Err: syscall.EACCES}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{gone, true},
		{errors.Join(nil, gone, gone), true},
		{errors.Join(gone, denied), false},
		{denied, false},
		{errors.New("requirement failed: branch main has changed"), false},
	} {
		if got := onlyMissingFiles(c.err); got != c.want {
			t.Errorf("onlyMissingFiles(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// checkExpiredKeysFound fails unless main is down to its head and the setup's keys k1-k3 are
// still found at now, in the head's key index.
func checkExpiredKeysFound(t *testing.T, cat *lake.Catalog, ref lake.Ref, now time.Time) {
	t.Helper()
	tbl, err := cat.Load(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 2 {
		t.Errorf("%d snapshots after expiry, want 2 (main's head and the tagged ldp.init)", n)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		if s, err := lake.FindKey(tbl, k, now); err != nil || s == nil {
			t.Errorf("key %s after expiry: %v, %v", k, s, err)
		}
	}
}
