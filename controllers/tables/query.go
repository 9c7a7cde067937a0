package tables

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/formats"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/specs"
)

// Query runs DuckDB SQL with the tables of the spec at path registered under their names: a
// Pipeline's target (an Iceberg table as of snapshot, or its current one) and an export's
// Iceberg source; a Workflow's every Iceberg table. It returns the columns and the rows, each
// value nil for NULL or a value whose String is DuckDB's rendering and whose MarshalJSON is
// its JSON (nested values as objects and arrays).
func Query(ctx context.Context, path, sql string, snapshot int64) ([]string, [][]any, error) {
	return EnvQuery(ctx, path, sql, snapshot, "")
}

// EnvQuery is Query with every Iceberg table read from environment env's branch where env has
// written it, and from main where it has not (env "" is main everywhere).
func EnvQuery(ctx context.Context, path, sql string, snapshot int64, env string) ([]string, [][]any, error) {
	if env != "" {
		if err := lake.CheckEnvName(env); err != nil {
			return nil, nil, err
		}
		if snapshot != 0 {
			return nil, nil, fmt.Errorf("--snapshot names one snapshot of the table, whatever its branch: leave out --env %s", env)
		}
	}
	// DuckDB starts (several ms) on another goroutine while the spec is checked and the
	// tables' files are planned, which need no database.
	started := startDB(ctx)
	defer started.close()
	obj, err := specs.Load(path)
	if err != nil {
		return nil, nil, err
	}
	var regs []register
	switch o := obj.(type) {
	case *v1.Workflow:
		if regs, err = planWorkflow(ctx, path, snapshot, env); err != nil {
			return nil, nil, err
		}
	case *v1.Pipeline:
		reg, err := planTarget(ctx, o, snapshot, env)
		if err != nil {
			return nil, nil, err
		}
		regs = append(regs, reg)
		if o.Metadata.Source.Format == v1.FormatIceberg {
			reg, err := planIceberg(ctx, o.Metadata.Source.Name, o.Metadata.Source.Catalog, lake.RefOfSource(o.Metadata.Source), o.BaseDir, o.Metadata.Source.SnapshotID, env)
			if err != nil {
				return nil, nil, err
			}
			regs = append(regs, reg)
		}
	default:
		return nil, nil, fmt.Errorf("%s is neither a Pipeline nor a Workflow", path)
	}
	db, err := started.wait()
	if err != nil {
		return nil, nil, err
	}
	for _, reg := range regs {
		if err := reg(ctx, db); err != nil {
			return nil, nil, err
		}
	}
	cols, rows, err := db.Print(ctx, sql)
	if err != nil {
		return nil, nil, unknownTable(ctx, db, path, err)
	}
	return cols, rows, nil
}

// register makes one planned table readable in the query's database.
type register func(ctx context.Context, db *engine.DB) error

// startedDB is a DuckDB being started on a goroutine of its own.
type startedDB struct {
	done chan struct{}
	db   *engine.DB
	err  error
}

// startDB starts a private database: the process ends with the query, and a pooled one
// would be emptied on Close (a query of its objects and a DROP of each) for no one.
func startDB(ctx context.Context) *startedDB {
	s := &startedDB{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.db, s.err = engine.OpenPrivate(ctx)
	}()
	return s
}

func (s *startedDB) wait() (*engine.DB, error) {
	<-s.done
	return s.db, s.err
}

// close closes the database once it has started (nil when it failed to).
func (s *startedDB) close() {
	<-s.done
	s.db.Close()
}

// missingTable is DuckDB's refusal of a table it does not know; its "Did you mean" is drawn
// from its own catalog too, so it offers pg_enum rather than the spec's tables.
var missingTable = regexp.MustCompile(`Catalog Error: Table with name (\S+) does not exist!`)

// unknownTable is err naming the tables of the spec instead, when err is that refusal.
func unknownTable(ctx context.Context, db *engine.DB, path string, err error) error {
	m := missingTable.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	_, views, lerr := db.Rows(ctx, "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal ORDER BY 1")
	if lerr != nil {
		return err
	}
	var names []string
	for _, v := range views {
		names = append(names, fmt.Sprint(v[0]))
	}
	if len(names) == 0 {
		return fmt.Errorf("no table %q in %s: it has none yet (nothing has been published); run it first", m[1], path)
	}
	return fmt.Errorf("no table %q in %s: its tables are %s", m[1], path, strings.Join(names, ", "))
}

// planWorkflow plans the Iceberg table of each task of a workflow (loads and SQL models)
// under its target name; a table nothing has written yet is left out.
func planWorkflow(ctx context.Context, path string, snapshot int64, env string) ([]register, error) {
	if snapshot != 0 {
		return nil, fmt.Errorf("--snapshot reads one table; name its dataset config rather than the workflow")
	}
	wf, err := controllers.LoadWorkflow(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var regs []register
	for _, t := range wf.Tasks {
		p := wf.TableOf(t)
		if p == nil || seen[p.Metadata.Target.Name] {
			continue
		}
		seen[p.Metadata.Target.Name] = true
		reg, err := planIceberg(ctx, p.Metadata.Target.Name, p.Metadata.Target.Catalog, lake.RefOf(p.Metadata.Target), p.BaseDir, 0, env)
		var nf *lake.NotFoundError
		if err != nil && !errors.As(err, &nf) {
			return nil, err
		}
		if err == nil {
			regs = append(regs, reg)
		}
	}
	return regs, nil
}

func planTarget(ctx context.Context, p *v1.Pipeline, snapshot int64, env string) (register, error) {
	t := p.Metadata.Target
	if p.IsIceberg() {
		return planIceberg(ctx, t.Name, t.Catalog, lake.RefOf(t), p.BaseDir, snapshot, env)
	}
	if snapshot != 0 {
		return nil, fmt.Errorf("--snapshot applies to ICEBERG targets; %s is a %s file", t.Path, t.Format)
	}
	path := t.Path
	if !strings.HasPrefix(path, "/") {
		path = p.BaseDir + "/" + path
	}
	src, err := formats.Source(t.Format, path, nil)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, db *engine.DB) error {
		return db.Exec(ctx, fmt.Sprintf("CREATE TEMP VIEW %s AS SELECT * FROM %s", engine.Ident(t.Name), src))
	}, nil
}

// planIceberg plans table ref as view: as of snapshot, or else environment env's head where
// env has written the table, or else main's.
func planIceberg(ctx context.Context, view string, c *v1.Catalog, ref lake.Ref, base string, snapshot int64, env string) (register, error) {
	cat, err := lake.OpenReadOnly(ctx, c, base)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	tbl, err := cat.Load(ctx, ref)
	if err != nil {
		return nil, err
	}
	if snapshot == 0 {
		if tbl, _, err = lake.OnEnv(tbl, env); err != nil {
			return nil, err
		}
	}
	v, err := lake.PlanView(ctx, tbl, snapshot)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, db *engine.DB) error { return v.Register(ctx, db, view) }, nil
}
