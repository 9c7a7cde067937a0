// Package sources reads the sources that are not files (a repository's GitHub issues) into a
// newline-delimited JSON file of the run, and says how DuckDB reads it back with each column's
// type fixed: the pipeline stages, checks and writes it as it does a file, so an external source
// is one branch of its extract and nothing after it knows the difference.
package sources

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/sources/github"
)

// DefaultTokenEnv is the variable a GITHUB source reads its token from when the spec names none.
const DefaultTokenEnv = "GITHUB_TOKEN"

// Is reports whether f is a source read by this package.
func Is(f v1.Format) bool { return f == v1.FormatGitHub }

// Name is how a run names the source in what it says of its rows.
func Name(src v1.Source) string {
	if src.Format == v1.FormatGitHub {
		return "the GitHub issues of " + src.Repository
	}
	return src.Name
}

// Extract reads src (for window w, zero for none) into a file in dir and returns the DuckDB
// expression that reads it. specFile names the spec in a config error.
func Extract(ctx context.Context, src v1.Source, w v1.LogicalWindow, dir, specFile string) (string, error) {
	if src.Format != v1.FormatGitHub {
		return "", ldperr.Configf(specFile, "no reader for a %s source", src.Format)
	}
	tokenVar := src.TokenEnv
	if tokenVar == "" {
		tokenVar = DefaultTokenEnv
	}
	cfg := github.Config{Repository: src.Repository, State: src.State, BaseURL: src.BaseURL,
		Token: os.Getenv(tokenVar), TokenVar: tokenVar, Since: w.Start, Until: w.End}
	if _, _, err := github.ParseRepository(cfg.Repository); err != nil {
		return "", &ldperr.ConfigError{File: specFile, Msg: "source.repository", Err: err}
	}
	path := filepath.Join(dir, "github-issues.ndjson")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	if err := github.Read(ctx, cfg, func(is github.Issue) error { return enc.Encode(is) }); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return readJSON(path, github.Columns), nil
}

// readJSON reads a newline-delimited JSON file with the given columns and types, sniffing
// nothing: an empty window has its columns and their types too.
func readJSON(path string, cols [][2]string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = engine.Lit(c[0]) + ": " + engine.Lit(c[1])
	}
	return fmt.Sprintf("read_json(%s, format = 'newline_delimited', columns = {%s})", engine.Lit(path), strings.Join(parts, ", "))
}
