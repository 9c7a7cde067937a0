package controllers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsnotify/fsnotify"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// A warehouse in the spec folder costs no inotify watch: with 127 data folders it spent 127
// (and more per partition), and ldp watch could not start under a limit of 100.
func TestWatchSpecFoldersOnly(t *testing.T) {
	dir := t.TempDir()
	mk := func(parts ...string) string {
		p := filepath.Join(append([]string{dir}, parts...)...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	touch := func(parts ...string) {
		if err := os.WriteFile(filepath.Join(append([]string{dir}, parts...)...), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A warehouse ldp has written: its catalog database and scratch area say so.
	mk("warehouse")
	touch("warehouse", "shop_catalog.db")
	mk("warehouse", ".ldp", "tmp")
	// A warehouse a spec names, not written yet as a warehouse (another catalog type keeps no
	// database in it): the spec says so.
	mk("lake")
	for i := range 127 {
		mk("warehouse", "shop.db", "orders", "data", "ordered_at_day="+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if i < 10 {
			mk("lake", "shop.db", "events", "data", string(rune('a'+i)))
		}
	}
	mk(".git", "objects")
	mk(".ldp", "locks") // a spec folder's ledger and locks
	mk("more", ".ldp")
	mk("more", "nested")

	w := &Watcher{Dir: dir}
	w.noteWarehouses([]Scheduled{{WF: &Object{Pipelines: map[string]*v1.Pipeline{"events": {
		BaseDir:  dir,
		Metadata: v1.PipelineMetadata{Target: v1.Target{Catalog: &v1.Catalog{Identifier: "shop", WarehousePath: "lake"}}},
	}}}}})
	var watched []string
	w.add = func(p string) error {
		rel, _ := filepath.Rel(dir, p)
		watched = append(watched, rel)
		return nil
	}
	if err := w.addTree(dir); err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "more", "more/nested"}; !slices.Equal(watched, want) {
		t.Errorf("watched %d folders %v, want %v", len(watched), watched, want)
	}
}

// A warehouse made while ldp watch runs is first an empty folder, and is watched as one;
// the first folder made in it, once the warehouse holds its catalog, removes those watches.
func TestWatchDropsAWarehouseMadeLater(t *testing.T) {
	dir := t.TempDir()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Close()
	w := &Watcher{Dir: dir, add: fw.Add}
	if err := w.addTree(dir); err != nil {
		t.Fatal(err)
	}
	wh := filepath.Join(dir, "warehouse")
	specs := filepath.Join(dir, "specs")
	for _, d := range []string{wh, specs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		w.added(fw, d)
	}
	if err := os.WriteFile(filepath.Join(wh, "shop_catalog.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ns := filepath.Join(wh, "shop.db")
	if err := os.Mkdir(ns, 0o755); err != nil {
		t.Fatal(err)
	}
	w.added(fw, ns)
	got := fw.WatchList()
	slices.Sort(got)
	if want := []string{dir, specs}; !slices.Equal(got, want) {
		t.Errorf("watching %v, want %v", got, want)
	}
}
