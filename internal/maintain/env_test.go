package maintain

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
)

// TestEnvFilesStayLive: expiry and orphan removal keep an environment's snapshots and files
// while its branch exists, and take them once it is deleted.
func TestEnvFilesStayLive(t *testing.T) {
	cat, ref := setup(t)
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, "CREATE TEMP TABLE d AS SELECT 100 + range AS id FROM range(5)"); err != nil {
		t.Fatal(err)
	}
	var envFiles []string
	for _, k := range []string{"dev-1", "dev-2"} {
		res, err := cat.Publish(ctx, db, "d", ref, lake.PublishOptions{Key: k, RunID: k, Env: "dev"})
		if err != nil {
			t.Fatal(err)
		}
		tbl, _ := cat.Load(ctx, ref)
		all, err := lake.DataFiles(ctx, tbl, res.SnapshotID)
		if err != nil {
			t.Fatal(err)
		}
		main, err := lake.DataFiles(ctx, tbl, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range all {
			if !slices.Contains(main, f) && !slices.Contains(envFiles, f) {
				envFiles = append(envFiles, f)
			}
		}
	}
	if len(envFiles) != 2 {
		t.Fatalf("dev's own files %v, want 2", envFiles)
	}
	if err := db.Exec(ctx, "CREATE OR REPLACE TEMP TABLE b AS SELECT 2 AS id"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k4", "k5", "k6"} {
		if _, err := cat.Publish(ctx, db, "b", ref, lake.PublishOptions{Key: k, RunID: k}); err != nil {
			t.Fatal(err)
		}
	}
	later := func() time.Time { return time.Now().Add(30 * 24 * time.Hour) }
	age := 0.0
	clean := func() *Report {
		rep, err := Run(ctx, cat, ref, Options{ExpireDays: days(7), Now: later, Orphans: true, OrphanAgeHours: &age, Force: true, Apply: true})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := clean()
	if len(rep.Expire) == 0 {
		t.Fatalf("nothing expired: the test proves nothing (%+v)", rep)
	}
	tbl, _ := cat.Load(ctx, ref)
	view, ok, err := lake.OnEnv(tbl, "dev")
	if err != nil || !ok {
		t.Fatalf("dev after maintenance: %v %v", ok, err)
	}
	if err := lake.RegisterView(ctx, db, "dev", view, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Count(ctx, "dev"); err != nil || n != 13 {
		t.Errorf("dev's rows after maintenance: %d, %v (want 3 from main at the fork and 10 of its own)", n, err)
	}
	for _, k := range []string{"dev-1", "dev-2", "k1"} {
		if s, err := lake.FindEnvKey(ctx, tbl, "dev", k, later()); err != nil || s == nil {
			t.Errorf("key %s not found in dev after maintenance: %v", k, err)
		}
	}
	for _, f := range envFiles {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("dev's data file removed: %v", err)
		}
	}
	if ok, err := cat.DeleteEnv(ctx, ref, "dev"); !ok || err != nil {
		t.Fatalf("delete dev: %v %v", ok, err)
	}
	clean()
	for _, f := range envFiles {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("dev's data file still there after the environment was deleted: %v", err)
		}
	}
}
