package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3:// for table and data files
	"golang.org/x/sync/errgroup"

	"github.com/ldp-dev/ldp/internal/ldperr"
)

// A warehouse is a local folder or an object-store prefix (s3://bucket/path). DuckDB reads and
// writes local files only (its S3 support is an extension ldp never downloads), while
// iceberg-go's IO reaches s3:// locations. So an s3:// warehouse has a local mirror folder: a
// data file is written there by DuckDB and then uploaded whole (one object PUT, so a reader
// sees all of it or nothing), and a data file a read needs is downloaded there once (a data
// file never changes after it is written, so a copy is never stale).

// IsRemote reports whether a location or warehouse path is in an object store.
func IsRemote(p string) bool {
	scheme, _, ok := strings.Cut(p, "://")
	return ok && (scheme == "s3" || scheme == "s3a" || scheme == "s3n")
}

// CacheDir is the local folder that mirrors object-store files: LDP_CACHE_DIR, else the
// user's cache folder. Deleting it loses nothing: what is there is downloaded again.
func CacheDir() string {
	if d := os.Getenv("LDP_CACHE_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ldp")
	}
	return filepath.Join(os.TempDir(), "ldp-cache")
}

func objectsRoot() string { return filepath.Join(CacheDir(), "objects") }

// mirrorPath is where the file at loc is (or would be) on this machine.
func mirrorPath(loc string) string {
	if !IsRemote(loc) {
		return localPath(loc)
	}
	scheme, rest, _ := strings.Cut(loc, "://")
	return filepath.Join(objectsRoot(), scheme, filepath.FromSlash(rest))
}

// locationOf is the location a local file stands for: the object it mirrors, or itself.
func locationOf(path string) string {
	if rel, err := filepath.Rel(objectsRoot(), path); err == nil && !strings.HasPrefix(rel, "..") {
		if scheme, rest, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
			return scheme + "://" + rest
		}
	}
	return fileLocation(path)
}

// fileLocation is the file:// location of the local path p, escaped exactly once: iceberg-go
// reads every location as a URL, so a bare '#' ends the path, '%41' reads as 'A' and a
// space comes back as "%20" (a folder "my specs #2" lost its tables to "my specs " and
// "my%20specs"). localPath is the way back; no other code builds or takes apart a file://.
func fileLocation(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// localPath is the path on this machine of a file:// location, unescaped exactly once; a
// path that is no location is itself. A location that does not parse as a URL was written
// bare, before fileLocation, and is its path as written.
func localPath(loc string) string {
	if !strings.HasPrefix(loc, "file:") {
		return loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		return strings.TrimPrefix(loc, "file://")
	}
	return filepath.FromSlash(u.Path)
}

// mirrorKeep is how long a mirrored file stays after it was written or downloaded; pruneEvery
// is how often a process looks.
const (
	mirrorKeep = 7 * 24 * time.Hour
	pruneEvery = 24 * time.Hour
)

// pruneMirror deletes the files of the mirror at dir older than mirrorKeep, at most once a day
// (a marker file says when it last looked), so that a long-lived worker's cache does not grow
// without bound. A pruned file is downloaded again if a read needs it.
func pruneMirror(dir string) {
	marker := filepath.Join(dir, ".ldp", "pruned")
	if info, err := os.Stat(marker); err == nil && time.Since(info.ModTime()) < pruneEvery {
		return
	}
	os.MkdirAll(filepath.Dir(marker), 0o755)
	os.WriteFile(marker, nil, 0o644)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".ldp" {
			return filepath.SkipDir // the runs' scratch folders clean themselves
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > mirrorKeep {
			os.Remove(p)
		}
		return nil
	})
}

// S3Properties are iceberg-go's IO settings for an object-store warehouse: the catalog's
// properties, with the standard AWS environment variables filling in what they leave out.
// Keys come only from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), never from a
// spec.
func S3Properties(props map[string]string) iceberg.Properties {
	out := iceberg.Properties{}
	maps.Copy(out, props)
	fill := func(key string, envs ...string) {
		if out[key] != "" {
			return
		}
		for _, e := range envs {
			if v := os.Getenv(e); v != "" {
				out[key] = v
				return
			}
		}
	}
	// iceberg-go addresses buckets by path only when it is given the endpoint itself.
	fill(icebergio.S3EndpointURL, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	fill(icebergio.S3Region, "AWS_REGION", "AWS_DEFAULT_REGION")
	if out[icebergio.S3Region] == "" {
		out[icebergio.S3Region] = "us-east-1"
	}
	return out
}

// storageHint says what to do about an object-store error whose cause is a setting: missing
// or refused keys, an endpoint that does not answer, a bucket that is not there.
func storageHint(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var hint string
	switch {
	case strings.Contains(msg, "get credentials") || strings.Contains(msg, "no EC2 IMDS role"):
		hint = "no S3 keys: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	case strings.Contains(msg, "SignatureDoesNotMatch") || strings.Contains(msg, "InvalidAccessKeyId"):
		hint = "the object store refused the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	case strings.Contains(msg, "NoSuchBucket"):
		hint = "the bucket does not exist: create it, or fix the s3:// path"
	case strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host"):
		hint = "the S3 endpoint does not answer: check s3.endpoint in the catalog's properties or AWS_ENDPOINT_URL_S3"
	default:
		return err
	}
	return fmt.Errorf("%w (%s)", err, hint)
}

// transfers bounds the concurrent uploads and downloads of one call.
const transfers = 8

// each runs f on every item, transfers at a time, and returns the first error.
func each(items []string, f func(i int, s string) error) error {
	var g errgroup.Group
	g.SetLimit(transfers)
	for i, s := range items {
		g.Go(func() error { return f(i, s) })
	}
	return g.Wait()
}

// fetch returns local paths of the files at locs, downloading through fsys those of an object
// store that are not mirrored yet.
func fetch(fsys icebergio.IO, locs []string) ([]string, error) {
	out := make([]string, len(locs))
	err := each(locs, func(i int, loc string) error {
		out[i] = mirrorPath(loc)
		if !IsRemote(loc) {
			return nil
		}
		if _, err := os.Stat(out[i]); err == nil {
			now := time.Now()
			os.Chtimes(out[i], now, now) // in use: pruneMirror keeps it
			return nil
		}
		return download(fsys, loc, out[i])
	})
	return out, err
}

// download copies the object at loc to path, through a temporary file renamed into place, so
// a reader never sees a partial copy.
func download(fsys icebergio.IO, loc, path string) error {
	src, err := fsys.Open(loc)
	if err != nil {
		return storageHint(fmt.Errorf("download %s: %w", loc, err))
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return fmt.Errorf("download %s: %w", loc, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// publishFiles makes the local files at paths data files of a table whose IO is fsys, and
// returns their locations: a file in an object store's mirror is uploaded to the object it
// stands for; a file in a local warehouse is already in place.
func publishFiles(fsys icebergio.IO, paths []string) ([]string, error) {
	out := make([]string, len(paths))
	err := each(paths, func(i int, p string) error {
		out[i] = locationOf(p)
		if !IsRemote(out[i]) {
			return nil
		}
		return upload(fsys, p, out[i])
	})
	return out, err
}

// upload puts the local file at path as the object at loc, through fsys.
func upload(fsys icebergio.IO, path, loc string) error {
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("upload %s: the table's storage cannot be written", loc)
	}
	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	put := func() error {
		dst, err := wfs.Create(loc)
		if err != nil {
			return err
		}
		if _, err := dst.ReadFrom(src); err != nil {
			dst.Close()
			return err
		}
		return dst.Close()
	}
	if err := put(); err != nil {
		return storageHint(fmt.Errorf("upload %s: %w", loc, err))
	}
	return nil
}

// removeFiles deletes the local files at paths and, for those that mirror an object, the
// object too (best effort: an unreferenced file is garbage, never data).
func removeFiles(fsys icebergio.IO, paths []string) {
	for _, p := range paths {
		os.Remove(p)
		if loc := locationOf(p); IsRemote(loc) && fsys != nil {
			fsys.Remove(loc)
		}
	}
}

// objectFS is the IO for a file source or target at loc in an object store, with props (a
// catalog's properties; the environment fills in the rest).
func objectFS(ctx context.Context, loc string, props map[string]string) (icebergio.IO, error) {
	if u, err := url.Parse(loc); err != nil || u.User != nil {
		return nil, ldperr.Configf("", "%s: keys never go in a path: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment", loc)
	}
	fsys, err := icebergio.LoadFS(ctx, S3Properties(props), loc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	return fsys, nil
}

// Download copies the object at loc to the local file path, for DuckDB to read. An object that
// is not there is an error that satisfies errors.Is(err, fs.ErrNotExist).
func Download(ctx context.Context, loc, path string, props map[string]string) error {
	fsys, err := objectFS(ctx, loc, props)
	if err != nil {
		return err
	}
	return download(fsys, loc, path)
}

// Upload puts the local file at path as the object at loc: one PUT, so a reader sees the old
// object or the new one, never part of it.
func Upload(ctx context.Context, path, loc string, props map[string]string) error {
	fsys, err := objectFS(ctx, loc, props)
	if err != nil {
		return err
	}
	return upload(fsys, path, loc)
}

// ObjectExists reports whether there is an object at loc.
func ObjectExists(ctx context.Context, loc string, props map[string]string) (bool, error) {
	fsys, err := objectFS(ctx, loc, props)
	if err != nil {
		return false, err
	}
	if st, ok := fsys.(icebergio.StatIO); ok {
		_, err = st.Stat(loc) // a HEAD request, where Open would start the download
	} else {
		var f icebergio.File
		if f, err = fsys.Open(loc); err == nil {
			f.Close()
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
