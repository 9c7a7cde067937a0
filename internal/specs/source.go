package specs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/sources"
	"github.com/ldp-dev/ldp/internal/sources/bigquery"
	"github.com/ldp-dev/ldp/schemas"
)

// sourceProblems checks the files a pipeline's source names that must be in the repository
// when it is validated: a BigQuery source's query file (engine BIGQUERY) (source.path), read as a run reads it.
// Its key file (source.credentials.path) is not checked: a secret is mounted where the run
// happens, not kept beside the spec that CI validates.
func sourceProblems(fsys fs.FS, path string, r *schemas.Result) []schemas.Problem {
	if r.Kind != v1.KindPipeline {
		return nil
	}
	md, _ := r.Doc["metadata"].(map[string]any)
	src, _ := md["source"].(map[string]any)
	engine, _ := src["engine"].(string)
	query, _ := src["path"].(string)
	if !strings.EqualFold(engine, sources.EngineBigQuery) || query == "" {
		return nil
	}
	full := query
	if !filepath.IsAbs(full) {
		full = filepath.Join(filepath.Dir(path), query)
	}
	_, err := bigquery.ReadQueryFS(fsys, full)
	var ie *bigquery.InputError
	if err == nil {
		return nil
	}
	msg := err.Error()
	if errors.As(err, &ie) {
		msg = ie.Msg
	}
	line, col := r.Position("metadata", "source", "path")
	return []schemas.Problem{{File: path, Line: line, Column: col, Field: "metadata.source.path", Message: msg}}
}
