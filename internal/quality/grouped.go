package quality

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// Grouped is one scan of the checks over several batches held in one relation, told apart by
// an integer column: a backfill's windows read together are checked by one statement, not one
// each (a statement costs a small window more than its rows do).
type Grouped struct {
	checks    []v1.Check
	types     map[string]string
	relation  string
	cols      []engine.Column
	onFailure string
	vals      map[int64][]any
}

// RunGrouped scans checks over the rows of relation grouped by the column by; cols are the
// batches' columns (by not among them). Each batch's report is then Report's.
func RunGrouped(ctx context.Context, db *engine.DB, relation, by string, cols []engine.Column, checks []v1.Check, onFailure string) (*Grouped, error) {
	if err := CheckColumns(checks, cols); err != nil {
		return nil, err
	}
	g := &Grouped{checks: checks, types: map[string]string{}, relation: relation, cols: cols, onFailure: onFailure, vals: map[int64][]any{}}
	for _, c := range cols {
		g.types[strings.ToLower(c.Name)] = c.Type
	}
	// The expressions do not depend on the context, only the verdicts do (Report).
	_, exprs := compileAll(checks, g.types, relation, cols, defaults(Context{}))
	rows, err := db.Query(ctx, fmt.Sprintf("SELECT %s::BIGINT, %s FROM %s GROUP BY 1", engine.Ident(by), strings.Join(exprs, ", "), relation))
	if err != nil {
		return nil, fmt.Errorf("run quality checks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key int64
		vals := make([]any, len(exprs))
		ptrs := []any{&key}
		for i := range vals {
			ptrs = append(ptrs, &vals[i])
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("run quality checks: %w", err)
		}
		g.vals[key] = vals
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("run quality checks: %w", err)
	}
	return g, nil
}

// Rows is how many rows batch group holds (0 for a group the relation has no row of).
func (g *Grouped) Rows(group int64) int64 {
	if v, ok := g.vals[group]; ok {
		return toInt(v[0])
	}
	return 0
}

// Report is batch group's report as Run gives it for that batch alone, measured against qc.
// False when the relation holds no row of it, or when a check failed whose result needs a
// second query over its batch alone (a failed unique check counts its keys): Run gives that.
func (g *Grouped) Report(group int64, qc Context) (*v1.QualityReport, bool) {
	vals, ok := g.vals[group]
	if !ok {
		return nil, false
	}
	plans, _ := compileAll(g.checks, g.types, g.relation, g.cols, defaults(qc))
	rep := assemble(plans, slices.Clone(vals), g.cols, g.onFailure)
	for i, p := range plans {
		if p.after != nil && !rep.Results[i].Passed {
			return nil, false
		}
	}
	return rep, true
}
