package lake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/testpg"
)

// opener opens a new handle on one catalog, as another process would.
type opener func(t *testing.T) *Catalog

func sqliteOpener(t *testing.T) opener {
	dir := t.TempDir()
	return func(t *testing.T) *Catalog {
		return openOrFail(t, &v1.Catalog{Identifier: "lake", WarehousePath: "warehouse"}, dir)
	}
}

func postgresOpener(t *testing.T, pg testpg.Cluster, identifier string) opener {
	dir := t.TempDir()
	return func(t *testing.T) *Catalog {
		return openOrFail(t, &v1.Catalog{Type: "sql", URI: pg.URI, Identifier: identifier, WarehousePath: "warehouse"}, dir)
	}
}

func openOrFail(t *testing.T, c *v1.Catalog, dir string) *Catalog {
	t.Helper()
	cat, err := Open(context.Background(), c, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	return cat
}

func fixtureWith(t *testing.T, cat *Catalog) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &fixture{ctx: ctx, db: db, cat: cat, ref: Ref{Namespace: "lake", Name: "rides"}}
}

// forgetParsed empties the process's parsed metadata, so the next load reads the catalog as a
// new process would.
func forgetParsed(t *testing.T) {
	metadataCache = &recent[table.Metadata]{size: 4}
	t.Cleanup(func() { metadataCache = &recent[table.Metadata]{size: 4} })
}

func TestCommitOnParsedMetadata(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { checkNoReread(t, sqliteOpener(t)) })
}

func TestCommitSwapConflict(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { checkSwapConflict(t, sqliteOpener(t)) })
}

// TestCommitOnParsedMetadataPostgres is both tests above on a PostgreSQL catalog.
func TestCommitOnParsedMetadataPostgres(t *testing.T) {
	pg := testpg.Start(t)
	t.Run("no-reread", func(t *testing.T) { checkNoReread(t, postgresOpener(t, pg, "reread")) })
	t.Run("swap-conflict", func(t *testing.T) { checkSwapConflict(t, postgresOpener(t, pg, "swap")) })
}

// checkNoReread: a publish commits on the metadata the process parsed, in one catalog commit:
// with the current metadata.json moved away after the load, it still publishes, and a new
// process then reads both keys once and every row. iceberg-go's SQL CommitTable read and
// parsed the whole file again before each commit, and failed here.
func checkNoReread(t *testing.T, open opener) {
	f := fixtureWith(t, open(t))
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	loc := localPath(tbl.MetadataLocation())
	if err := os.Rename(loc, loc+".away"); err != nil {
		t.Fatal(err)
	}
	f.batch(t, rideCols, "(4, 'NYC', 5.0)")
	res, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: "k2", RunID: "r2"})
	if rerr := os.Rename(loc+".away", loc); rerr != nil {
		t.Fatal(rerr)
	}
	if err != nil {
		t.Fatalf("publish on the metadata this process parsed read %s again: %v", loc, err)
	}
	if res.Status != Published || res.Tries != 1 {
		t.Fatalf("result %+v, want published on the first try", res)
	}
	after, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if n := metadataVersion(after.MetadataLocation()) - metadataVersion(loc); n != 1 {
		t.Errorf("the publish took %d catalog commits, want 1", n)
	}
	forgetParsed(t)
	g := fixtureWith(t, open(t))
	if got := keyCount(t, g); len(got) != 2 || got["k1"] != 1 || got["k2"] != 1 {
		t.Errorf("keys on main %v, want k1 and k2 once", got)
	}
	if got := g.query(t, "SELECT count(*) FROM rides"); got[0] != "4" {
		t.Errorf("rows %v, want 4", got)
	}
}

// checkSwapConflict: two handles commit on the same base; the other's commit lands between
// this one's write of its metadata file and its swap of the catalog's pointer. Exactly one
// wins: the other gets the retriable conflict (table.ErrCommitFailed, as from iceberg-go),
// leaves no metadata file behind, and succeeds on retry with both changes kept. A requirement
// that does not hold writes nothing, and a handle that parsed nothing yet commits too.
func checkSwapConflict(t *testing.T, open opener) {
	a, b := fixtureWith(t, open(t)), fixtureWith(t, open(t))
	a.batch(t, rideCols, rideVals)
	a.publish(t, PublishOptions{Key: "k0", RunID: "r0"})
	if _, err := b.cat.Load(b.ctx, b.ref); err != nil {
		t.Fatal(err)
	}
	set := func(k string) []table.Update {
		return []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{k: "1"})}
	}
	interfered := false
	beforeSwap = func(ref Ref) {
		if interfered {
			return
		}
		interfered = true
		if err := b.cat.commit(b.ctx, ref, nil, set("test.b")); err != nil {
			t.Errorf("the other handle's commit: %v", err)
		}
	}
	t.Cleanup(func() { beforeSwap = nil })
	err := a.cat.commit(a.ctx, a.ref, nil, set("test.a"))
	if !interfered {
		t.Fatal("the commit never reached the swap")
	}
	if err == nil || !errors.Is(err, table.ErrCommitFailed) || !isConflict(err) {
		t.Fatalf("commit on a base another handle moved: %v, want a retriable conflict (table.ErrCommitFailed)", err)
	}
	if err := a.cat.commit(a.ctx, a.ref, nil, set("test.a")); err != nil {
		t.Fatalf("retry after the conflict: %v", err)
	}
	// A requirement is checked against the metadata the swap asserts: main is not where
	// this one says, so nothing is written.
	wrong := int64(42)
	err = a.cat.commit(a.ctx, a.ref, []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, &wrong)}, set("test.c"))
	if err == nil || !isConflict(err) || !strings.Contains(err.Error(), "requirement failed") {
		t.Fatalf("commit whose requirement does not hold: %v, want a requirement failure", err)
	}
	// A process that parsed nothing yet (another process's commit) loads once and commits.
	forgetParsed(t)
	if err := open(t).commit(a.ctx, a.ref, nil, set("test.d")); err != nil {
		t.Fatalf("commit on metadata not parsed yet: %v", err)
	}
	forgetParsed(t)
	tbl, err := open(t).Load(a.ctx, a.ref)
	if err != nil {
		t.Fatal(err)
	}
	if p := tbl.Properties(); p["test.a"] != "1" || p["test.b"] != "1" || p["test.d"] != "1" || p["test.c"] != "" {
		t.Errorf("properties %v, want test.a, test.b and test.d, not test.c", p)
	}
	known := map[string]bool{localPath(tbl.MetadataLocation()): true}
	for e := range tbl.Metadata().PreviousFiles() {
		known[localPath(e.MetadataFile)] = true
	}
	ents, err := os.ReadDir(filepath.Dir(localPath(tbl.MetadataLocation())))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p := filepath.Join(filepath.Dir(localPath(tbl.MetadataLocation())), e.Name())
		if strings.HasSuffix(e.Name(), ".metadata.json") && !known[p] {
			t.Errorf("metadata file %s of the lost commit left behind", e.Name())
		}
	}
}

// TestMetadataFileEncoding: the metadata.json a commit writes is what json.Encoder writes for
// that metadata, byte for byte, as retained snapshots are re-used from the encoding cache
// (docs/upstream/iceberg-go-snapshot-json.md) and expired ones leave it: compact JSON, HTML
// characters escaped, the snapshots last and each as iceberg-go's Snapshot.MarshalJSON writes
// it, and a new process parses back every snapshot with its summary.
func TestMetadataFileEncoding(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	f.publish(t, PublishOptions{Key: "k0", RunID: "r<&>0"})
	if err := f.cat.commit(f.ctx, f.ref, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{MaxSnapshotsProp: "3", ExpireSlabProp: "1"})}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		f.publish(t, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r<&>%d", i), WriteOptions: WriteOptions{SnapshotProps: map[string]string{WindowProp: fmt.Sprintf("w\u2028%d", i)}}})
		tbl, err := f.cat.Load(f.ctx, f.ref)
		if err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(localPath(tbl.MetadataLocation()))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(tbl.Metadata()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(file, want.Bytes()) {
			t.Fatalf("publish %d: metadata.json differs from json.Encoder's encoding of its metadata:\n%s\nwant\n%s", i, file, want.Bytes())
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, file); err != nil || !bytes.Equal(compact.Bytes(), bytes.TrimSuffix(file, []byte("\n"))) {
			t.Fatalf("publish %d: metadata.json is not compact JSON (%v)", i, err)
		}
		snaps := tbl.Metadata().Snapshots()
		list, err := json.Marshal(snaps)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(file, append(append([]byte(`,"snapshots":`), list...), "}\n"...)) {
			t.Fatalf("publish %d: metadata.json does not end with its %d snapshots as Snapshot.MarshalJSON writes them", i, len(snaps))
		}
		if bytes.Contains(file, []byte("<&>")) || !bytes.Contains(file, []byte(`r\u003c\u0026\u003e`)) || !bytes.Contains(file, []byte(`w\u2028`)) {
			t.Fatalf("publish %d: metadata.json does not escape as encoding/json does", i)
		}
		parsed, err := table.ParseMetadataBytes(file)
		if err != nil {
			t.Fatal(err)
		}
		got := parsed.Snapshots()
		if len(got) != len(snaps) {
			t.Fatalf("publish %d: %d snapshots parsed back, want %d", i, len(got), len(snaps))
		}
		for j := range got {
			if !got[j].Equals(snaps[j]) || got[j].Summary.Properties[RunIDProp] != snaps[j].Summary.Properties[RunIDProp] {
				t.Fatalf("publish %d: snapshot %d parsed back as %+v, want %+v", i, j, got[j], snaps[j])
			}
		}
	}
	tbl, err := f.cat.Load(f.ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n > 5 {
		t.Errorf("%d snapshots after seven publishes with a retention of 3: expiry never ran, so the cache's removal path was not tested", n)
	}
}
