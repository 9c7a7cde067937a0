package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go/table"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// reserved are the names of the run's own views, which an input may not take.
var reserved = map[string]bool{"source": true, "ldp_extract": true, "ldp_batch": true, "ldp_source": true}

// registerInputs makes each input of a SQL model a view of its table as of the snapshot read
// now (pinned: a load publishing meanwhile does not change what the model reads), and sets the
// variables window_start and window_end (UTC instants; NULL without a window).
func (r *run) registerInputs(ctx context.Context) error {
	var err error
	r.inputs, _, err = bindInputs(ctx, r.db, r.p, r.opts.Window, r.opts.Env, false)
	return err
}

// bindInputs registers the inputs of the SQL model p in db and sets the window variables. An
// input environment env has written is read from env's branch, any other from main. With
// missingOK an input whose table does not exist yet is left out and named in missing.
func bindInputs(ctx context.Context, db *engine.DB, p *v1.Pipeline, w v1.LogicalWindow, env string, missingOK bool) (snaps map[string]int64, missing []string, err error) {
	src := p.Metadata.Source
	names := make([]string, 0, len(src.Inputs))
	for n := range src.Inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	snaps = map[string]int64{}
	for _, name := range names {
		if reserved[name] {
			return nil, nil, &ldperr.ConfigError{File: p.Path, Msg: fmt.Sprintf("task %s: input name %q is one of ldp's own views; choose another", src.Name, name)}
		}
		in := src.Inputs[name]
		ref := lake.Ref{Namespace: in.Catalog.NamespaceName(), Name: in.Name}
		cat, err := lake.OpenExisting(ctx, in.Catalog, p.BaseDir)
		if err != nil {
			return nil, nil, err
		}
		var nf *lake.NotFoundError
		tbl, err := (*table.Table)(nil), error(&lake.NotFoundError{Ref: ref})
		if cat != nil {
			tbl, err = cat.Load(ctx, ref)
			cat.Close()
		}
		if errors.As(err, &nf) {
			if missingOK {
				missing = append(missing, name)
				continue
			}
			return nil, nil, fmt.Errorf("input %s: table %s does not exist yet: run the task that loads it first", name, ref)
		}
		if err != nil {
			return nil, nil, err
		}
		if tbl, _, err = lake.OnEnv(tbl, env); err != nil {
			return nil, nil, fmt.Errorf("input %s: %w", name, err)
		}
		var id int64
		if s := tbl.CurrentSnapshot(); s != nil {
			id = s.SnapshotID
		}
		if err := lake.RegisterView(ctx, db, name, tbl, id); err != nil {
			return nil, nil, fmt.Errorf("input %s: %w", name, err)
		}
		snaps[name] = id
	}
	for _, v := range []struct {
		name string
		set  bool
		at   string
	}{
		{"window_start", !w.IsZero(), w.Start.UTC().Format("2006-01-02 15:04:05.999999")},
		{"window_end", !w.IsZero(), w.End.UTC().Format("2006-01-02 15:04:05.999999")},
	} {
		val := "NULL::TIMESTAMPTZ"
		if v.set {
			val = "TIMESTAMPTZ " + engine.Lit(v.at+"+00")
		}
		if err := db.Exec(ctx, "SET VARIABLE "+v.name+" = "+val); err != nil {
			return nil, nil, err
		}
	}
	return snaps, missing, nil
}

// CheckModel checks that the query of the SQL model p binds against its inputs (the tables'
// columns; nothing is read), with the variables of window w. It returns the inputs whose tables
// do not exist yet: a query reading one of them is checked when it runs.
func CheckModel(ctx context.Context, p *v1.Pipeline, w v1.LogicalWindow) (missing []string, err error) {
	db, err := engine.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, missing, err = bindInputs(ctx, db, p, w, "", true); err != nil || len(missing) > 0 {
		return missing, err
	}
	if _, err := db.Columns(ctx, subquery(p.Metadata.Source.Query)); err != nil {
		return nil, &ldperr.ConfigError{File: p.Path, Msg: fmt.Sprintf("task %s: the query does not bind: %v", p.Metadata.Source.Name, err)}
	}
	return nil, nil
}

// subquery makes a SELECT a spec holds (a model's query, a transform) usable after FROM: a
// trailing semicolon would end the statement early.
func subquery(q string) string {
	return "(" + strings.TrimRight(strings.TrimSpace(q), "; \n\t") + ")"
}
