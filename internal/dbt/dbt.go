// Package dbt runs an external dbt project as a step of ldp: it registers the Iceberg tables
// the project reads as views in the DuckDB file dbt uses, runs dbt with the window as
// variables, reads how it ended from dbt's artifacts (target/run_results.json and
// target/manifest.json, dbt-core artifact schemas run-results v4-v6 and manifest v10-v12),
// and names the models to publish to Iceberg (those whose meta says ldp_publish).
package dbt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Config is ldp_dbt.json.
type Config struct {
	// DuckDB is the database file the project's profile points dbt-duckdb at, relative to the
	// project (default target/ldp.duckdb).
	DuckDB string `json:"duckdb"`
	// Catalog holds the tables the project reads and the ones it publishes; its warehouse path
	// is relative to the project.
	Catalog v1.Catalog `json:"catalog"`
	// Sources are the views registered in the DuckDB file: schema -> view -> namespace.table.
	Sources map[string]map[string]string `json:"sources"`
	// Namespace is where published models go (default: the catalog's).
	Namespace string `json:"namespace,omitempty"`
}

// Load reads the project's ldp_dbt.json.
func Load(project string) (*Config, error) {
	path := filepath.Join(project, v1.DbtConfigFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ldperr.Configf(path, "a dbt project run by ldp needs %s (the DuckDB file, the catalog and the sources): %v", v1.DbtConfigFile, err)
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, ldperr.Configf(path, "%v", err)
	}
	if c.Catalog.Identifier == "" {
		return nil, ldperr.Configf(path, "catalog.identifier is required: the catalog of the tables the project reads and publishes")
	}
	if c.DuckDB == "" {
		c.DuckDB = filepath.Join("target", "ldp.duckdb")
	}
	return &c, nil
}

// Task is what to run: the project and dbt's options.
type Task struct {
	Project string
	Command string // build or test
	Select  []string
	Exclude []string
	Vars    map[string]any
	Bin     string
}

// Fingerprint is the sha256 of what decides a build: the project's files (not what dbt or ldp
// write: target/, logs/, dbt_packages/, the DuckDB file), the command, the selection and the
// variables (the window's among them).
func Fingerprint(t Task, cfg *Config) (string, error) {
	h := sha256.New()
	skip := map[string]bool{"target": true, "logs": true, "dbt_packages": true}
	db := filepath.Clean(cfg.DuckDB)
	var files []string
	err := filepath.WalkDir(t.Project, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.Project, p)
		if d.IsDir() && (skip[rel] || strings.HasPrefix(d.Name(), ".")) && p != t.Project {
			return filepath.SkipDir
		}
		if !d.IsDir() && rel != db && !strings.HasPrefix(rel, db+".") {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(t.Project, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s %d\n", f, len(b))
		h.Write(b)
	}
	opts, _ := json.Marshal(map[string]any{"command": t.Command, "select": t.Select, "exclude": t.Exclude, "vars": t.Vars})
	h.Write(opts)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// RegisterSources makes each source of cfg a view in the project's DuckDB file over the data
// files of its table's current snapshot: in environment env ("" is main), the head of env's
// branch where env has written the table, main's elsewhere (lake.OnEnv). A table that does
// not exist yet is an error naming it.
func RegisterSources(ctx context.Context, project string, cfg *Config, env string) error {
	path := filepath.Join(project, cfg.DuckDB)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	db, err := engine.OpenFile(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	cat, err := lake.OpenExisting(ctx, &cfg.Catalog, project)
	if err != nil {
		return err
	}
	defer cat.Close()
	schemas := sortedKeys(cfg.Sources)
	for _, schema := range schemas {
		if err := db.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+engine.Ident(schema)); err != nil {
			return err
		}
		for _, view := range sortedKeys(cfg.Sources[schema]) {
			ref := cfg.Sources[schema][view]
			ns, name, ok := strings.Cut(ref, ".")
			if !ok {
				return ldperr.Configf(filepath.Join(project, v1.DbtConfigFile), "source %s.%s: %q is not namespace.table", schema, view, ref)
			}
			if cat == nil {
				return fmt.Errorf("source %s.%s: catalog %s does not exist yet: load %s first", schema, view, cfg.Catalog.Identifier, ref)
			}
			tbl, err := cat.Load(ctx, lake.Ref{Namespace: ns, Name: name})
			if err != nil {
				return fmt.Errorf("source %s.%s: %w", schema, view, err)
			}
			if tbl, _, err = lake.OnEnv(tbl, env); err != nil {
				return fmt.Errorf("source %s.%s: %w", schema, view, err)
			}
			q, err := lake.ViewSQL(ctx, db, tbl, 0)
			if err != nil {
				return err
			}
			if err := db.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE VIEW %s.%s AS %s", engine.Ident(schema), engine.Ident(view), q)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Exec runs dbt for t in the project folder, its output to out (ldp's standard error, so
// standard output stays ldp's result). A dbt that ran and reported failures is not an error
// here: the artifacts say how it ended.
func Exec(ctx context.Context, t Task, out io.Writer) error {
	bin := t.Bin
	if bin == "" {
		bin = "dbt"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return ldperr.Configf("", "dbt_bin %q is not on the PATH: install dbt-duckdb, or name the program in dbt_bin", bin)
	}
	vars, err := json.Marshal(t.Vars)
	if err != nil {
		return err
	}
	args := []string{t.Command, "--project-dir", ".", "--profiles-dir", ".", "--vars", string(vars)}
	if len(t.Select) > 0 {
		args = append(args, append([]string{"--select"}, t.Select...)...)
	}
	if len(t.Exclude) > 0 {
		args = append(args, append([]string{"--exclude"}, t.Exclude...)...)
	}
	os.Remove(filepath.Join(t.Project, "target", "run_results.json"))
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = t.Project
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // dbt exits non-zero when a model or a test fails: run_results.json says which
	}
	return err
}

// Outcomes of a dbt run.
const (
	Succeeded      = "succeeded"
	BlockedQuality = "blocked_quality"
	Failed         = "failed"
)

// Node is a model, seed, snapshot or test of the run, as the artifacts describe it.
type Node struct {
	UniqueID     string `json:"unique_id"`
	ResourceType string `json:"resource_type"`
	Name         string `json:"name"`
	Schema       string `json:"schema"`
	Alias        string `json:"alias"`
	Status       string `json:"status"`
	Message      string `json:"message,omitempty"`
	Materialized string `json:"materialized,omitempty"`
	UniqueKey    []string
	Publish      bool
	// Quality is meta.ldp_quality: the checks a published model passes first.
	Quality *v1.Quality
}

// Result is how a dbt run ended.
type Result struct {
	Outcome string
	Nodes   []Node
	// Reason says why it did not succeed.
	Reason string
}

// ReadResult reads target/run_results.json and target/manifest.json. Test failures alone
// are blocked_quality; a model (or seed, snapshot) that errored, or no results at all, failed.
func ReadResult(project string) (*Result, error) {
	var rr struct {
		Results []struct {
			UniqueID string `json:"unique_id"`
			Status   string `json:"status"`
			Message  string `json:"message"`
		} `json:"results"`
	}
	if err := readJSON(filepath.Join(project, "target", "run_results.json"), &rr); err != nil {
		return &Result{Outcome: Failed, Reason: fmt.Sprintf("dbt left no run results: %v", err)}, nil
	}
	var mf struct {
		Nodes map[string]struct {
			ResourceType string         `json:"resource_type"`
			Name         string         `json:"name"`
			Schema       string         `json:"schema"`
			Alias        string         `json:"alias"`
			Meta         map[string]any `json:"meta"`
			Config       struct {
				Materialized string         `json:"materialized"`
				UniqueKey    any            `json:"unique_key"`
				Meta         map[string]any `json:"meta"`
			} `json:"config"`
		} `json:"nodes"`
	}
	if err := readJSON(filepath.Join(project, "target", "manifest.json"), &mf); err != nil {
		return nil, fmt.Errorf("read dbt's manifest: %w", err)
	}
	res := &Result{Outcome: Succeeded}
	var failedTests, failedNodes []string
	for _, r := range rr.Results {
		m := mf.Nodes[r.UniqueID]
		n := Node{UniqueID: r.UniqueID, ResourceType: m.ResourceType, Name: m.Name, Schema: m.Schema, Alias: m.Alias,
			Status: r.Status, Message: r.Message, Materialized: m.Config.Materialized}
		if n.Alias == "" {
			n.Alias = n.Name
		}
		meta := m.Config.Meta
		if len(meta) == 0 {
			meta = m.Meta
		}
		n.Publish, _ = meta["ldp_publish"].(bool)
		if q, ok := meta["ldp_quality"]; ok {
			b, _ := json.Marshal(q)
			var qq v1.Quality
			if err := json.Unmarshal(b, &qq); err != nil {
				return nil, fmt.Errorf("model %s: meta.ldp_quality: %w", n.Name, err)
			}
			n.Quality = &qq
		}
		switch k := m.Config.UniqueKey.(type) {
		case string:
			n.UniqueKey = []string{k}
		case []any:
			for _, x := range k {
				if s, ok := x.(string); ok {
					n.UniqueKey = append(n.UniqueKey, s)
				}
			}
		}
		switch {
		case n.ResourceType == "test" && r.Status == "fail":
			failedTests = append(failedTests, n.Name)
		case r.Status == "error" || r.Status == "fail" || r.Status == "runtime error":
			failedNodes = append(failedNodes, n.Name+": "+firstLine(r.Message))
		}
		res.Nodes = append(res.Nodes, n)
	}
	switch {
	case len(failedNodes) > 0:
		res.Outcome, res.Reason = Failed, "dbt failed: "+strings.Join(failedNodes, "; ")
	case len(failedTests) > 0:
		res.Outcome, res.Reason = BlockedQuality, "dbt tests failed: "+strings.Join(failedTests, ", ")
	}
	return res, nil
}

// Gate is a dbt run held back by its data tests (or a published model's checks): exit 3, not
// retried.
type Gate struct{ Reason string }

func (g *Gate) Error() string  { return g.Reason }
func (g *Gate) DataGate() bool { return true }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
