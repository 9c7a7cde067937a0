// Package quality runs the quality checks of a spec over a batch before it is written. The
// checks compile to one SQL aggregate that DuckDB evaluates in a single pass, and their
// results carry counts and numeric metrics only: never a row's values, which may be personal.
package quality

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/suggest"
)

// GateError is a batch held back by a failed check with on_failure "fail". It is a data gate:
// exit code 3, never retried.
type GateError struct {
	Target string
	Report *v1.QualityReport
}

func (e *GateError) Error() string {
	names := e.FailedChecks()
	return fmt.Sprintf("data gate: %d of %d checks failed (%s); nothing was written to %s",
		len(names), len(e.Report.Results), strings.Join(names, ", "), e.Target)
}

// FailedChecks are the names of the checks that held the data back: what a held window's
// status names.
func (e *GateError) FailedChecks() []string {
	var names []string
	for _, f := range e.Report.Failures() {
		names = append(names, f.Name)
	}
	return names
}

// DataGate marks the error as a data gate.
func (e *GateError) DataGate() bool { return true }

// Context is what a check measures against.
type Context struct {
	// SourceRows is the row count row_count equals="source" compares with: the rows read from
	// the source, before the window filter, so rows a window drops fail it.
	SourceRows int64
	// Now is the time freshness measures from when a check has no now of its own: the end of
	// the window in a windowed run, else the current time.
	Now time.Time
	// Location reads a timestamp without a time zone (UTC when nil).
	Location *time.Location
}

// checksMemory is the memory DuckDB may take for the checks of a batch of boundedRows or more,
// beyond what the database holds. A smaller batch's hash tables fit in the caches anyway, and
// setting the limit costs a small window a quarter of its time (a backfill's windows).
const (
	checksMemory = 256 << 20
	boundedRows  = 2_000_000
)

// plan is one check's SQL expressions and the function that turns their values into a result.
type plan struct {
	exprs []string
	eval  func(vals []any) v1.CheckResult
	// after, when set, completes the result with what the scan could not give (run only as
	// the result needs it).
	after func(ctx context.Context, db *engine.DB, r *v1.CheckResult) error
}

// Run evaluates checks over relation (a table or view in db) and returns the report.
func Run(ctx context.Context, db *engine.DB, relation string, checks []v1.Check, qc Context, onFailure string) (*v1.QualityReport, error) {
	cols, err := db.Columns(ctx, relation)
	if err != nil {
		return nil, err
	}
	// Columns are named without case, as DuckDB and the table resolve them: a check of
	// "amount" reads a drop whose header says "Amount".
	types := map[string]string{}
	for _, c := range cols {
		types[strings.ToLower(c.Name)] = c.Type
	}
	if err := CheckColumns(checks, cols); err != nil {
		return nil, err
	}
	plans, exprs := compileAll(checks, types, relation, cols, defaults(qc))
	vals := make([]any, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	query := func() error {
		return db.QueryRow(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+relation, ptrs...)
	}
	if qc.SourceRows >= boundedRows {
		// The checks are aggregates over the whole batch (unique builds a hash table of its
		// keys): a bounded budget keeps a large batch's lean and faster (engine.DB.Bounded).
		err = db.Bounded(ctx, checksMemory, query)
	} else {
		err = query()
	}
	if err != nil {
		return nil, fmt.Errorf("run quality checks: %w", err)
	}
	rep := assemble(plans, vals, cols, onFailure)
	for i, p := range plans {
		if p.after != nil {
			if err := p.after(ctx, db, &rep.Results[i]); err != nil {
				return nil, fmt.Errorf("run quality checks: %w", err)
			}
		}
	}
	return rep, nil
}

// defaults fills what a Context leaves out: UTC, and the current time.
func defaults(qc Context) Context {
	if qc.Location == nil {
		qc.Location = time.UTC
	}
	if qc.Now.IsZero() {
		qc.Now = time.Now()
	}
	return qc
}

// compileAll compiles checks over relation into one scan's expressions: the row count, each
// check's, then each column's null count.
func compileAll(checks []v1.Check, types map[string]string, relation string, cols []engine.Column, qc Context) ([]plan, []string) {
	plans := make([]plan, len(checks))
	exprs := []string{"count(*)"}
	for i, c := range checks {
		plans[i] = compile(c, types, relation, qc)
		exprs = append(exprs, plans[i].exprs...)
	}
	for _, c := range cols {
		exprs = append(exprs, "count(*) - count("+engine.Ident(c.Name)+")")
	}
	return plans, exprs
}

// assemble is the report of one scan's values, as compileAll ordered them (without what
// the plans' after completes).
func assemble(plans []plan, vals []any, cols []engine.Column, onFailure string) *v1.QualityReport {
	rep := &v1.QualityReport{OnFailure: onFailure, Rows: toInt(vals[0])}
	at := 1
	for _, p := range plans {
		n := len(p.exprs)
		rep.Results = append(rep.Results, p.eval(vals[at:at+n]))
		at += n
	}
	rep.NullCounts = make(map[string]int64, len(cols))
	for i, c := range cols {
		rep.NullCounts[c.Name] = toInt(vals[at+i])
	}
	return rep
}

// CheckColumns refuses checks that name a column the batch does not have: the spec is wrong,
// not the data, so it is a ConfigError (exit 1) with a did-you-mean, never a data gate that
// waits for data that cannot fix it. The schema check is the exception: a missing column is
// what it looks for.
func CheckColumns(checks []v1.Check, cols []engine.Column) error {
	types := map[string]string{}
	for _, c := range cols {
		types[strings.ToLower(c.Name)] = c.Type
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	var problems []string
	for _, c := range checks {
		var want []string
		switch c.Check {
		case "not_null", "unique":
			if c.Columns != nil {
				want = c.Columns.Names
			}
		case "accepted_values", "range", "freshness":
			want = []string{c.Column}
		}
		for _, col := range want {
			if _, ok := types[strings.ToLower(col)]; !ok {
				problems = append(problems, fmt.Sprintf("check %s names column %q, which the batch does not have%s", name(c), col, suggest.DidYouMean(col, names)))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &ldperr.ConfigError{Msg: fmt.Sprintf("metadata.quality: %s; its columns are %s", strings.Join(problems, "; "), strings.Join(quoteAll(names), ", "))}
}

func name(c v1.Check) string {
	switch {
	case c.Columns != nil && c.Columns.Names != nil:
		return fmt.Sprintf("%s(%s)", c.Check, strings.Join(c.Columns.Names, ", "))
	case c.Columns != nil:
		return fmt.Sprintf("%s(%s)", c.Check, strings.Join(slices.Sorted(maps.Keys(c.Columns.Types)), ", "))
	case c.Column != "":
		return fmt.Sprintf("%s(%s)", c.Check, c.Column)
	}
	return c.Check
}

func failed(c v1.Check, details string) plan {
	return plan{eval: func([]any) v1.CheckResult {
		return v1.CheckResult{Name: name(c), Check: c.Check, Details: details, Metrics: map[string]float64{}}
	}}
}

func missing(c v1.Check, cols []string, types map[string]string) (plan, bool) {
	var gone []string
	for _, col := range cols {
		if _, ok := types[strings.ToLower(col)]; !ok {
			gone = append(gone, col)
		}
	}
	if len(gone) == 0 {
		return plan{}, false
	}
	return failed(c, fmt.Sprintf("column %s not found in the batch", strings.Join(quoteAll(gone), ", "))), true
}

func compile(c v1.Check, types map[string]string, relation string, qc Context) plan {
	switch c.Check {
	case "row_count":
		return rowCount(c, qc)
	case "not_null":
		cols := c.Columns.Names
		if p, bad := missing(c, cols, types); bad {
			return p
		}
		var conds, exprs []string
		for _, col := range cols {
			conds = append(conds, engine.Ident(col)+" IS NULL")
			exprs = append(exprs, fmt.Sprintf("count(*) FILTER (WHERE %s IS NULL)", engine.Ident(col)))
		}
		exprs = append([]string{fmt.Sprintf("count(*) FILTER (WHERE %s)", strings.Join(conds, " OR "))}, exprs...)
		return plan{exprs: exprs, eval: func(v []any) v1.CheckResult {
			n := toInt(v[0])
			m := map[string]float64{}
			for i, col := range cols {
				m["nulls."+col] = float64(toInt(v[i+1]))
			}
			return v1.CheckResult{Name: name(c), Check: c.Check, Passed: n == 0, FailingRows: n, Metrics: m,
				Details: fmt.Sprintf("%d %s with a null", n, rowsWord(n))}
		}}
	case "unique":
		cols := c.Columns.Names
		if p, bad := missing(c, cols, types); bad {
			return p
		}
		key := identList(cols)
		// The duplicate rows come from one distinct count in the checks' scan (a struct, so a
		// NULL key counts as a key, as GROUP BY has it); the keys they share are counted by a
		// second query only when there are any. A grouping subquery in the scan cost a small
		// batch's checks 2-3 ms more.
		fields := make([]string, len(cols))
		for i, col := range cols {
			fields[i] = fmt.Sprintf("'k%d': %s", i, engine.Ident(col))
		}
		keysQuery := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s GROUP BY %s HAVING count(*) > 1)", relation, key)
		result := func(rows, keys int64) v1.CheckResult {
			return v1.CheckResult{Name: name(c), Check: c.Check, Passed: rows == 0, FailingRows: rows,
				Metrics: map[string]float64{"duplicate_rows": float64(rows), "duplicate_keys": float64(keys)},
				Details: fmt.Sprintf("%d duplicate %s in %d %s", rows, rowsWord(rows), keys, plural(keys, "key", "keys"))}
		}
		return plan{exprs: []string{"count(*) - count(DISTINCT {" + strings.Join(fields, ", ") + "})"}, eval: func(v []any) v1.CheckResult {
			return result(toInt(v[0]), 0)
		}, after: func(ctx context.Context, db *engine.DB, r *v1.CheckResult) error {
			if r.FailingRows == 0 {
				return nil
			}
			var keys int64
			if err := db.QueryRow(ctx, keysQuery, &keys); err != nil {
				return err
			}
			*r = result(r.FailingRows, keys)
			return nil
		}}
	case "accepted_values":
		if p, bad := missing(c, []string{c.Column}, types); bad {
			return p
		}
		col, list := acceptedList(c, types[strings.ToLower(c.Column)])
		expr := fmt.Sprintf("count(*) FILTER (WHERE %s IS NOT NULL AND %s NOT IN (%s))", engine.Ident(c.Column), col, list)
		return plan{exprs: []string{expr}, eval: func(v []any) v1.CheckResult {
			n := toInt(v[0])
			return v1.CheckResult{Name: name(c), Check: c.Check, Passed: n == 0, FailingRows: n, Metrics: map[string]float64{},
				Details: fmt.Sprintf("%d %s outside the %d accepted values", n, rowsWord(n), len(c.Values))}
		}}
	case "range":
		if p, bad := missing(c, []string{c.Column}, types); bad {
			return p
		}
		if !isNumeric(types[strings.ToLower(c.Column)]) {
			return failed(c, fmt.Sprintf("column %q is %s, not a number", c.Column, types[strings.ToLower(c.Column)]))
		}
		var conds []string
		if c.Min != nil {
			conds = append(conds, fmt.Sprintf("%s < %s", engine.Ident(c.Column), num(*c.Min)))
		}
		if c.Max != nil {
			conds = append(conds, fmt.Sprintf("%s > %s", engine.Ident(c.Column), num(*c.Max)))
		}
		col := engine.Ident(c.Column)
		// A NaN is out of every range. DuckDB orders NaN above every number, so without this
		// it failed a max and passed a min.
		nan := "false"
		if t := strings.ToUpper(types[strings.ToLower(c.Column)]); t == "DOUBLE" || t == "FLOAT" || t == "REAL" {
			nan = "isnan(" + col + ")"
			conds = append(conds, nan)
		}
		cond := "false"
		if len(conds) > 0 {
			cond = strings.Join(conds, " OR ")
		}
		exprs := []string{fmt.Sprintf("count(*) FILTER (WHERE %s)", cond), fmt.Sprintf("(min(%s) FILTER (WHERE NOT %s))::DOUBLE", col, nan), fmt.Sprintf("(max(%s) FILTER (WHERE NOT %s))::DOUBLE", col, nan),
			fmt.Sprintf("count(*) FILTER (WHERE %s)", nan)}
		return plan{exprs: exprs, eval: func(v []any) v1.CheckResult {
			n, nans := toInt(v[0]), toInt(v[3])
			m := map[string]float64{}
			if f, ok := toFloat(v[1]); ok {
				m["min"] = f
			}
			if f, ok := toFloat(v[2]); ok {
				m["max"] = f
			}
			details := fmt.Sprintf("%d %s outside %s", n, rowsWord(n), bounds(c.Min, c.Max))
			if nans > 0 {
				m["nan"] = float64(nans)
				details += fmt.Sprintf(" (%d NaN)", nans)
			}
			return v1.CheckResult{Name: name(c), Check: c.Check, Passed: n == 0, FailingRows: n, Metrics: m, Details: details}
		}}
	case "freshness":
		return freshness(c, types, qc)
	case "schema":
		return schemaCheck(c, types)
	}
	return failed(c, fmt.Sprintf("unknown check %q", c.Check))
}

func rowCount(c v1.Check, qc Context) plan {
	return plan{exprs: []string{"count(*)"}, eval: func(v []any) v1.CheckResult {
		n := toInt(v[0])
		var problems []string
		if c.Min != nil && float64(n) < *c.Min {
			problems = append(problems, fmt.Sprintf("fewer than min %s", num(*c.Min)))
		}
		if c.Max != nil && float64(n) > *c.Max {
			problems = append(problems, fmt.Sprintf("more than max %s", num(*c.Max)))
		}
		want, of := int64(-1), ""
		switch e := c.Equals.(type) {
		case string:
			if e == "source" {
				want, of = qc.SourceRows, " (the rows read from the source)"
			}
		case float64:
			want = int64(e)
		}
		if want >= 0 && n != want {
			problems = append(problems, fmt.Sprintf("want exactly %d%s", want, of))
		}
		d := fmt.Sprintf("%d %s", n, rowsWord(n))
		if len(problems) > 0 {
			d += ": " + strings.Join(problems, ", ")
		}
		return v1.CheckResult{Name: name(c), Check: c.Check, Passed: len(problems) == 0, Details: d, Metrics: map[string]float64{"rows": float64(n)}}
	}}
}

func freshness(c v1.Check, types map[string]string, qc Context) plan {
	if p, bad := missing(c, []string{c.Column}, types); bad {
		return p
	}
	t := strings.ToUpper(types[strings.ToLower(c.Column)])
	col := engine.Ident(c.Column)
	var expr string
	zoned := strings.Contains(t, "WITH TIME ZONE")
	switch {
	case zoned:
		expr = fmt.Sprintf("epoch_us(max(%s))", col)
	case strings.HasPrefix(t, "TIMESTAMP"), t == "DATE":
		expr = fmt.Sprintf("epoch_us(max(%s)::TIMESTAMP)", col)
	default:
		return failed(c, fmt.Sprintf("column %q is %s, not a date or a timestamp", c.Column, types[strings.ToLower(c.Column)]))
	}
	now := qc.Now
	if c.Now != "" {
		if t, err := time.Parse(time.RFC3339Nano, c.Now); err == nil {
			now = t
		}
	}
	maxAge := time.Duration(*c.MaxAgeHours * float64(time.Hour))
	return plan{exprs: []string{expr}, eval: func(v []any) v1.CheckResult {
		res := v1.CheckResult{Name: name(c), Check: c.Check, Metrics: map[string]float64{}}
		us, ok := v[0].(int64)
		if !ok {
			res.Details = "no values to measure"
			return res
		}
		newest := time.UnixMicro(us).UTC()
		if !zoned { // a wall-clock time, read in the window's zone
			newest = time.Date(newest.Year(), newest.Month(), newest.Day(), newest.Hour(), newest.Minute(), newest.Second(), newest.Nanosecond(), qc.Location)
		}
		age := now.Sub(newest)
		res.Metrics["age_hours"] = round(age.Hours())
		res.Passed = age <= maxAge
		res.Details = fmt.Sprintf("newest value is %s old at %s (max %s h)", roundDuration(age), now.UTC().Format(time.RFC3339), num(*c.MaxAgeHours))
		return res
	}}
}

func schemaCheck(c v1.Check, types map[string]string) plan {
	var problems []string
	var bad int64
	if c.Columns.Types == nil {
		for _, col := range c.Columns.Names {
			if _, ok := types[strings.ToLower(col)]; !ok {
				problems = append(problems, fmt.Sprintf("%q missing", col))
			}
		}
	} else {
		for _, col := range slices.Sorted(maps.Keys(c.Columns.Types)) {
			want := c.Columns.Types[col]
			got, ok := types[strings.ToLower(col)]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%q missing", col))
			case NormalizeType(want) != ArrowType(got):
				problems = append(problems, fmt.Sprintf("%q is %s, want %s", col, ArrowType(got), want))
			}
		}
	}
	bad = int64(len(problems))
	return plan{eval: func([]any) v1.CheckResult {
		d := "every column present with its type"
		if bad > 0 {
			d = strings.Join(problems, "; ")
		}
		return v1.CheckResult{Name: name(c), Check: c.Check, Passed: bad == 0, Details: d, Metrics: map[string]float64{"mismatches": float64(bad)}}
	}}
}

func acceptedList(c v1.Check, colType string) (string, string) {
	allNum, allBool := true, true
	for _, v := range c.Values {
		switch v.(type) {
		case float64:
			allBool = false
		case bool:
			allNum = false
		default:
			allNum, allBool = false, false
		}
	}
	var parts []string
	switch {
	case allNum && isNumeric(colType):
		for _, v := range c.Values {
			parts = append(parts, num(v.(float64)))
		}
		return engine.Ident(c.Column), strings.Join(parts, ", ")
	case allBool && strings.EqualFold(colType, "BOOLEAN"):
		for _, v := range c.Values {
			parts = append(parts, strconv.FormatBool(v.(bool)))
		}
		return engine.Ident(c.Column), strings.Join(parts, ", ")
	}
	for _, v := range c.Values {
		switch t := v.(type) {
		case float64:
			parts = append(parts, engine.Lit(num(t)))
		default:
			parts = append(parts, engine.Lit(fmt.Sprint(t)))
		}
	}
	return "CAST(" + engine.Ident(c.Column) + " AS VARCHAR)", strings.Join(parts, ", ")
}

func isNumeric(duckType string) bool {
	t := strings.ToUpper(duckType)
	for _, p := range []string{"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func identList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = engine.Ident(c)
	}
	return strings.Join(q, ", ")
}

func bounds(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("[%s, %s]", num(*lo), num(*hi))
	case lo != nil:
		return ">= " + num(*lo)
	case hi != nil:
		return "<= " + num(*hi)
	}
	return "any bound"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func round(f float64) float64 { return math.Round(f*100) / 100 }

func roundDuration(d time.Duration) string {
	if d < 0 {
		return "-" + roundDuration(-d)
	}
	return d.Round(time.Minute).String()
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int64:
		return t
	case int32:
		return int64(t)
	case int:
		return int64(t)
	case float64:
		return int64(t)
	case uint64:
		return int64(t)
	case *big.Int: // DuckDB's HUGEINT
		return t.Int64()
	}
	return 0
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	}
	return 0, false
}

func rowsWord(n int64) string { return plural(n, "row", "rows") }

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}
