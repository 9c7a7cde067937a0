package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// oldCommit is the commit issue 28's backfill goal is measured against: the bench runs its
// ldp beside the current one, on the same inputs, and reports the ratio of their rates.
const oldCommit = "d0dceec"

// oldBinary is where -fetch-old leaves the ldp of oldCommit: a cache outside the checkout
// ($XDG_CACHE_HOME/ldp-bench, else ~/.cache/ldp-bench), reused by every later bench.
func oldBinary() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache folder for the ldp of %s: %w (set XDG_CACHE_HOME)", oldCommit, err)
	}
	return filepath.Join(dir, "ldp-bench", "ldp-"+oldCommit), nil
}

// fetchOld builds the ldp of oldCommit from this repository's own history into the cache,
// unless it is there already. It is the bench's one step that may use the network (the Go
// module proxy, for modules the old go.mod needs and the module cache lacks); the
// measurements themselves only run binaries that exist.
func fetchOld() (string, error) {
	bin, err := oldBinary()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		logf("ldp of %s: %s (cached)", oldCommit, bin)
		return bin, nil
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("-fetch-old runs in a checkout of ldp (git rev-parse: %w)", err)
	}
	src := bin + ".src"
	if err := os.RemoveAll(src); err != nil {
		return "", err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	// git archive, not a worktree: the export is a plain folder, and the repository's list of
	// worktrees is left as it was.
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", strings.TrimSpace(string(top)), oldCommit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("exporting %s from the repository's history: %w\n%s", oldCommit, err, out)
	}
	logf("building the ldp of %s into %s", oldCommit, bin)
	// The flags make build uses, so the two binaries differ only by their source.
	build := exec.Command("go", "build", "-ldflags", "-s -w -X main.version="+oldCommit, "-o", bin+".tmp", "./cmd/ldp")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %w\n%s", oldCommit, err, out)
	}
	return bin, os.Rename(bin+".tmp", bin)
}

// needOld is the cached ldp of oldCommit, or an error saying how to get it.
func needOld(path string) (string, error) {
	if path == "" {
		var err error
		if path, err = oldBinary(); err != nil {
			return "", err
		}
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no ldp of %s at %s: run `ldp-bench -fetch-old` first (make bench does), or pass -old PATH", oldCommit, path)
	} else if err != nil {
		return "", err
	}
	return path, nil
}
