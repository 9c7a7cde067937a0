package lake

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMirrorPathsRoundTrip(t *testing.T) {
	t.Setenv("LDP_CACHE_DIR", "/cache")
	for _, tc := range []struct{ loc, path string }{
		{"s3://lake/wh/shop.db/orders/data/x/part-0.parquet", "/cache/objects/s3/lake/wh/shop.db/orders/data/x/part-0.parquet"},
		{"s3a://lake/a=1/b.parquet", "/cache/objects/s3a/lake/a=1/b.parquet"},
		{"file:///srv/wh/shop.db/orders/data/p.parquet", "/srv/wh/shop.db/orders/data/p.parquet"},
		// A local path is escaped once on the way to a location and unescaped once back.
		{"file:///srv/my%20specs%20%232%20%2541%20jos%C3%A9/wh/p.parquet", "/srv/my specs #2 %41 josé/wh/p.parquet"},
		// An object's key is the store's business: it stays as written.
		{"s3://lake/my specs #2 %41/p.parquet", "/cache/objects/s3/lake/my specs #2 %41/p.parquet"},
	} {
		if got := mirrorPath(tc.loc); got != tc.path {
			t.Errorf("mirrorPath(%q) = %q, want %q", tc.loc, got, tc.path)
		}
		if got := locationOf(tc.path); got != tc.loc {
			t.Errorf("locationOf(%q) = %q, want %q", tc.path, got, tc.loc)
		}
	}
	for wh, want := range map[string]string{
		"/srv/my specs #2":      "file:///srv/my%20specs%20%232",
		"s3://lake/my specs #2": "s3://lake/my specs #2",
	} {
		if got := warehouseLocation(wh); got != want {
			t.Errorf("warehouseLocation(%q) = %q, want %q", wh, got, want)
		}
	}
	for p, want := range map[string]bool{"s3://b/k": true, "s3a://b/k": true, "file:///x": false, "/x": false, "https://h/x": false} {
		if IsRemote(p) != want {
			t.Errorf("IsRemote(%q) = %v", p, !want)
		}
	}
}

func TestPruneMirrorKeepsRecentFiles(t *testing.T) {
	dir := t.TempDir()
	old, recent, scratch := filepath.Join(dir, "t", "data", "old.parquet"), filepath.Join(dir, "t", "data", "new.parquet"), filepath.Join(dir, ".ldp", "tmp", "run-1", "x.parquet")
	for _, p := range []string{old, recent, scratch} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	long := time.Now().Add(-mirrorKeep - time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(scratch, long, long)
	pruneMirror(dir)
	for p, want := range map[string]bool{old: false, recent: true, scratch: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", p, err == nil, want)
		}
	}
	// Within a day of the last look, nothing is walked again.
	os.WriteFile(old, []byte("x"), 0o644)
	os.Chtimes(old, long, long)
	pruneMirror(dir)
	if _, err := os.Stat(old); err != nil {
		t.Errorf("pruned twice in a day: %v", err)
	}
}
