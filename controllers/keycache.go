package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ldp-dev/ldp/internal/lake"
)

// The folder's key cache: the keys on main that observing a table found, kept in the spec
// folder's state (.ldp/keys/, beside its ledger) under the metadata location they were read
// from. A metadata file never changes once written (each commit writes a new one, and the key
// index it names is never rewritten either), so while the catalog still points the table at
// that location its keys are those. A tick whose tables did not move then reads one catalog
// row per table instead of parsing each table's metadata and key index: that was 0.46 s of
// CPU for 1,000 tables, most of what a no-op tick added to validating the folder.
//
// The cache is only ever a shortcut: an entry that is missing, unreadable, of another location,
// or of a metadata file no longer there or not the size and time it was is passed over and the
// table loaded as before (so a metadata file deleted or damaged under the catalog still fails
// the observation); a cache that cannot be written (a read-only folder) costs the next
// observer a load, nothing more.

// cachedKeys is one table's entry.
type cachedKeys struct {
	Table            string `json:"table"`
	MetadataLocation string `json:"metadata_location"`
	// MetadataSize and MetadataModNs are the metadata file's, when its keys were read.
	MetadataSize  int64    `json:"metadata_size"`
	MetadataModNs int64    `json:"metadata_mod_ns"`
	Keys          []string `json:"keys"`
	SpecHashes    []string `json:"spec_hashes,omitempty"`
}

// keyCachePath is the entry of table ref of cat in the state folder of the ledger at ledger.
func keyCachePath(ledger string, cat *lake.Catalog, ref lake.Ref) string {
	sum := sha256.Sum256([]byte(cat.Warehouse + "\x00" + cat.Identifier + "\x00" + ref.String()))
	return filepath.Join(filepath.Dir(ledger), "keys", hex.EncodeToString(sum[:12])+".json")
}

// cachedKeysOnMain is keysOnMain answered from the key cache of the folder whose ledger is
// ledger, when the table is where the cache saw it; otherwise the table is loaded and the
// cache told what it holds. Only local metadata files are cached: each is checked (one stat)
// to be there as it was.
func cachedKeysOnMain(ctx context.Context, cat *lake.Catalog, ref lake.Ref, ledger string) (map[string]bool, []string, error) {
	if cat == nil || ledger == "" {
		return keysOnMain(ctx, cat, ref)
	}
	loc, err := cat.MetadataLocation(ctx, ref)
	var fi fs.FileInfo
	if err == nil && loc != "" {
		fi = lake.LocalFile(loc)
	}
	if fi == nil {
		return keysOnMain(ctx, cat, ref)
	}
	path := keyCachePath(ledger, cat, ref)
	if b, err := os.ReadFile(path); err == nil {
		var c cachedKeys
		if json.Unmarshal(b, &c) == nil && c.MetadataLocation == loc && c.MetadataSize == fi.Size() && c.MetadataModNs == fi.ModTime().UnixNano() {
			keys := make(map[string]bool, len(c.Keys))
			for _, k := range c.Keys {
				keys[k] = true
			}
			return keys, c.SpecHashes, nil
		}
	}
	keys, hashes, err := keysOnMain(ctx, cat, ref)
	if err != nil {
		return keys, hashes, err
	}
	// The load read the table where the catalog pointed then. A catalog only moves a table to a
	// new file, never back, so the same location after the load is the one the load read.
	if again, err := cat.MetadataLocation(ctx, ref); err == nil && again == loc {
		writeCachedKeys(path, cachedKeys{Table: ref.String(), MetadataLocation: loc, MetadataSize: fi.Size(), MetadataModNs: fi.ModTime().UnixNano(),
			Keys: slices.Sorted(maps.Keys(keys)), SpecHashes: hashes})
	}
	return keys, hashes, nil
}

// writeCachedKeys replaces an entry whole (a reader sees the old one or the new one), on a
// best-effort basis: see above.
func writeCachedKeys(path string, c cachedKeys) {
	b, err := json.Marshal(c)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".keys-*")
	if err != nil {
		return
	}
	err = f.Chmod(0o644) // as the ledger beside it: whoever may read the folder may read this
	if err == nil {
		_, err = f.Write(b)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
