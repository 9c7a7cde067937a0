// Package sources reads the sources that are not files (a repository's GitHub issues, a BigQuery
// query) into a
// newline-delimited JSON file of the run, and says how DuckDB reads it back with each column's
// type fixed: the pipeline stages, checks and writes it as it does a file, so an external source
// is one branch of its extract and nothing after it knows the difference.
package sources

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/sources/bigquery"
	"github.com/ldp-dev/ldp/internal/sources/github"
)

// DefaultTokenEnv is the variable a GITHUB source reads its token from when the spec names none.
const DefaultTokenEnv = "GITHUB_TOKEN"

// EngineBigQuery is the engine of a JSON source that is a BigQuery query (the seed's shape).
const EngineBigQuery = "BIGQUERY"

// Is reports whether src is read by this package: a GITHUB source, or a JSON source with
// engine BIGQUERY (its path is the query file, not the data).
func Is(src v1.Source) bool { return src.Format == v1.FormatGitHub || isBigQuery(src) }

func isBigQuery(src v1.Source) bool {
	return src.Format == v1.FormatJSON && strings.EqualFold(src.Engine, EngineBigQuery)
}

// EngineRoutes are the routes a source with an engine takes, as ldp pipelines lists them: a
// BigQuery query into every target format.
func EngineRoutes() []string {
	var out []string
	for _, t := range v1.TargetFormats {
		out = append(out, fmt.Sprintf("%s (engine %s) -> %s", v1.FormatJSON, EngineBigQuery, t))
	}
	return out
}

// Name is how a run names the source in what it says of its rows.
func Name(src v1.Source) string {
	switch {
	case src.Format == v1.FormatGitHub:
		return "the GitHub issues of " + src.Repository
	case isBigQuery(src):
		return "the BigQuery query of " + src.Path
	}
	return src.Name
}

// Input is what a read needs besides the source.
type Input struct {
	// Window is the run's window; zero for none.
	Window v1.LogicalWindow
	// RunID and Attempt identify the attempt: a BigQuery job id is made of them.
	RunID   string
	Attempt int
	// Dir is the folder the read writes its file in; BaseDir the spec's folder, which the
	// source's paths are relative to; SpecFile names the spec in a config error.
	Dir, BaseDir, SpecFile string
}

// Extract reads src into a file in in.Dir and returns the DuckDB expression that reads it.
func Extract(ctx context.Context, src v1.Source, in Input) (string, error) {
	switch {
	case src.Format == v1.FormatGitHub:
		return extractGitHub(ctx, src, in.Window, in.Dir, in.SpecFile)
	case isBigQuery(src):
		return extractBigQuery(ctx, src, in)
	}
	return "", ldperr.Configf(in.SpecFile, "no reader for a %s source", src.Format)
}

func extractBigQuery(ctx context.Context, src v1.Source, in Input) (string, error) {
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(in.BaseDir, p)
	}
	cfg := bigquery.Config{QueryFile: rel(src.Path), Start: in.Window.Start, End: in.Window.End,
		JobID: bigquery.JobID(in.RunID, in.Attempt), Endpoint: os.Getenv(bigquery.EndpointEnv)}
	if src.Credentials != nil {
		cfg.KeyFile = rel(src.Credentials.Path)
	}
	var cols [][2]string
	path := filepath.Join(in.Dir, "bigquery.ndjson")
	err := writeNDJSON(path, func(emit func(any) error) error {
		return bigquery.Read(ctx, cfg, func(cs []bigquery.Column) error {
			for _, c := range cs {
				cols = append(cols, [2]string{c.Name, c.Type})
			}
			return nil
		}, func(row map[string]any) error { return emit(row) })
	})
	if err != nil {
		var ie *bigquery.InputError
		if errors.As(err, &ie) {
			return "", &ldperr.ConfigError{File: in.SpecFile, Err: err}
		}
		return "", err
	}
	return readJSON(path, cols), nil
}

// writeNDJSON writes the values fill emits to path, one JSON document a line.
func writeNDJSON(path string, fill func(emit func(any) error) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	if err := fill(func(v any) error { return enc.Encode(v) }); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func extractGitHub(ctx context.Context, src v1.Source, w v1.LogicalWindow, dir, specFile string) (string, error) {
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
	err := writeNDJSON(path, func(emit func(any) error) error {
		return github.Read(ctx, cfg, func(is github.Issue) error { return emit(is) })
	})
	if err != nil {
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
