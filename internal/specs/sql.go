package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/schemas"
)

// sqlProblems parses each SQL a spec holds (a pipeline's metadata.transform.sql, a workflow's
// sql task queries) with DuckDB's own parser, so a query DuckDB cannot parse fails validation
// with the key's position instead of failing at run time. Names are not resolved: the tables
// a query reads exist only at run time.
func sqlProblems(fsys fs.FS, path string, r *schemas.Result) []schemas.Problem {
	type query struct {
		field []string
		sql   string
		file  string // the query_file it came from, "" for an inline query
	}
	var qs []query
	switch r.Kind {
	case v1.KindPipeline:
		if md, ok := r.Doc["metadata"].(map[string]any); ok {
			if t, ok := md["transform"].(map[string]any); ok {
				if s, ok := t["sql"].(string); ok && strings.TrimSpace(s) != "" {
					qs = append(qs, query{field: []string{"metadata", "transform", "sql"}, sql: s})
				}
			}
		}
	case v1.KindWorkflow:
		list, _ := r.Doc["tasks"].([]any)
		for i, e := range list {
			t, _ := e.(map[string]any)
			q, _ := t["sql"].(map[string]any)
			if s, ok := q["query"].(string); ok && strings.TrimSpace(s) != "" {
				qs = append(qs, query{field: []string{"tasks", strconv.Itoa(i), "sql", "query"}, sql: s})
			}
			if f, ok := q["query_file"].(string); ok && f != "" {
				full := f
				if !filepath.IsAbs(full) {
					full = filepath.Join(filepath.Dir(path), f)
				}
				if b, err := fs.ReadFile(fsys, full); err == nil {
					qs = append(qs, query{field: []string{"tasks", strconv.Itoa(i), "sql", "query_file"}, sql: string(b), file: f})
				}
			}
		}
	}
	var out []schemas.Problem
	for _, q := range qs {
		msg, ok := parseSQL(q.sql)
		if ok {
			continue
		}
		line, col := r.Position(q.field...)
		where := "the query"
		if q.file != "" {
			where = q.file
		}
		out = append(out, schemas.Problem{File: path, Line: line, Column: col, Field: schemas.FieldPath(q.field),
			Message: fmt.Sprintf("DuckDB cannot parse %s: %s", where, msg)})
	}
	return out
}

var parser struct {
	sync.Mutex
	db  *engine.DB
	err error
}

// parseSQL returns DuckDB's parse error of sql, with the line and column inside it, and false;
// or true when it parses (or no parser could be started: the run will say).
func parseSQL(sql string) (string, bool) {
	parser.Lock()
	defer parser.Unlock()
	if parser.db == nil && parser.err == nil {
		parser.db, parser.err = engine.OpenPrivate(context.Background())
	}
	if parser.err != nil {
		return "", true
	}
	var out string
	if err := parser.db.QueryRow(context.Background(), "SELECT json_serialize_sql("+engine.Lit(sql)+")::VARCHAR", &out); err != nil {
		return "", true
	}
	var e sqlError
	if json.Unmarshal([]byte(out), &e) != nil || !e.Error {
		return "", true
	}
	return e.describe(sql), false
}

// sqlError is what json_serialize_sql says of a statement it cannot parse.
type sqlError struct {
	Error    bool   `json:"error"`
	Message  string `json:"error_message"`
	Position string `json:"position"`
}

// describe is the parser's message with the place in the query it names.
func (e sqlError) describe(sql string) string {
	n, err := strconv.Atoi(e.Position)
	if err != nil || n < 0 || n > len(sql) {
		return e.Message
	}
	line := 1 + strings.Count(sql[:n], "\n")
	col := n - strings.LastIndex(sql[:n], "\n")
	return fmt.Sprintf("%s (line %d, column %d of the SQL)", e.Message, line, col)
}
