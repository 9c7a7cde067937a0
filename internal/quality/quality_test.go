package quality

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

func check(t *testing.T, js string) v1.Check {
	t.Helper()
	var c v1.Check
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEveryCheckPassesAndFails(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Exec(ctx, `CREATE TEMP TABLE batch AS SELECT * FROM (VALUES
		(1, 'NYC', 12.5::DOUBLE, TIMESTAMP '2026-09-01 10:00:00', TIMESTAMPTZ '2026-09-01 10:00:00+00', 'secret-value-1'),
		(2, 'BKK', 7.0,  TIMESTAMP '2026-09-01 11:00:00', TIMESTAMPTZ '2026-09-01 11:00:00+00', NULL),
		(2, 'LIS', -3.0, TIMESTAMP '2026-09-01 12:00:00', TIMESTAMPTZ '2026-09-01 12:00:00+00', 'secret-value-3')
	) AS t(ride_id, city, fare, pickup_ts, pickup_tz, note)`)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		check    string
		passed   bool
		failRows int64
		detail   string
	}{
		{`{"check": "row_count", "min": 1}`, true, 0, "3 rows"},
		{`{"check": "row_count", "min": 5}`, false, 0, "fewer than min 5"},
		{`{"check": "row_count", "max": 2}`, false, 0, "more than max 2"},
		{`{"check": "row_count", "equals": "source"}`, true, 0, "3 rows"},
		{`{"check": "row_count", "equals": 4}`, false, 0, "want exactly 4"},
		{`{"check": "not_null", "columns": ["ride_id", "city"]}`, true, 0, "0 rows with a null"},
		{`{"check": "not_null", "columns": ["ride_id", "note"]}`, false, 1, "1 row with a null"},
		{`{"check": "unique", "columns": ["ride_id", "city"]}`, true, 0, "0 duplicate rows"},
		{`{"check": "unique", "columns": ["ride_id"]}`, false, 1, "1 duplicate row in 1 key"},
		{`{"check": "accepted_values", "column": "city", "values": ["NYC", "BKK", "LIS"]}`, true, 0, "0 rows outside"},
		{`{"check": "accepted_values", "column": "city", "values": ["NYC", "BKK"]}`, false, 1, "1 row outside the 2 accepted values"},
		{`{"check": "accepted_values", "column": "ride_id", "values": [1, 2]}`, true, 0, "0 rows"},
		{`{"check": "range", "column": "fare", "min": -5, "max": 20}`, true, 0, "0 rows outside [-5, 20]"},
		{`{"check": "range", "column": "fare", "min": 0}`, false, 1, "1 row outside >= 0"},
		{`{"check": "range", "column": "city", "min": 0}`, false, 0, "not a number"},
		{`{"check": "freshness", "column": "pickup_ts", "max_age_hours": 24}`, true, 0, "newest value is 12h0m0s old"},
		{`{"check": "freshness", "column": "pickup_tz", "max_age_hours": 6}`, false, 0, "newest value is 12h0m0s old"},
		{`{"check": "freshness", "column": "pickup_ts", "max_age_hours": 1, "now": "2026-09-01T12:30:00Z"}`, true, 0, "30m0s old"},
		{`{"check": "freshness", "column": "city", "max_age_hours": 1}`, false, 0, "not a date or a timestamp"},
		{`{"check": "schema", "columns": ["ride_id", "fare"]}`, true, 0, "every column present"},
		{`{"check": "schema", "columns": {"ride_id": "int32", "fare": "double", "city": "string", "pickup_ts": "timestamp[us]"}}`, true, 0, "every column"},
		{`{"check": "schema", "columns": {"ride_id": "int64", "gone": "string"}}`, false, 0, `"gone" missing; "ride_id" is int32, want int64`},
	}
	for _, c := range cases {
		t.Run(c.check, func(t *testing.T) {
			rep, err := Run(ctx, db, "batch", []v1.Check{check(t, c.check)}, Context{SourceRows: 3, Now: now}, "fail")
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			if r.Passed != c.passed || r.FailingRows != c.failRows || !strings.Contains(r.Details, c.detail) {
				t.Errorf("got passed=%v failing=%d details=%q; want passed=%v failing=%d details containing %q",
					r.Passed, r.FailingRows, r.Details, c.passed, c.failRows, c.detail)
			}
			if strings.Contains(r.Details, "secret-value") {
				t.Errorf("details print a row's value: %q", r.Details)
			}
		})
	}
}

// TestACheckOnAMissingColumnIsASpecError: a check naming a column the batch lacks fails Run
// with a ConfigError (exit 1, not a data gate) that suggests the column meant; a schema check
// still reports a missing column as its failure.
func TestACheckOnAMissingColumnIsASpecError(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, "CREATE TABLE batch AS SELECT 1 AS order_id, 2.5 AS amount_usd, TIMESTAMP '2026-01-01' AS created_at"); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ check, want string }{
		{`{"check": "range", "column": "amount", "min": 0}`, `check range(amount) names column "amount", which the batch does not have (did you mean "amount_usd"?); its columns are "order_id", "amount_usd", "created_at"`},
		{`{"check": "not_null", "columns": ["order_id", "ordr_id"]}`, `column "ordr_id", which the batch does not have (did you mean "order_id"?)`},
		{`{"check": "unique", "columns": ["customer"]}`, `column "customer", which the batch does not have; its columns`},
		{`{"check": "accepted_values", "column": "Amount", "values": [1]}`, `(did you mean "amount_usd"?)`},
		{`{"check": "freshness", "column": "created", "max_age_hours": 1}`, `(did you mean "created_at"?)`},
	}
	for _, c := range cases {
		t.Run(c.check, func(t *testing.T) {
			_, err := Run(ctx, db, "batch", []v1.Check{check(t, c.check)}, Context{}, "fail")
			var ce *ldperr.ConfigError
			if !errors.As(err, &ce) || ldperr.IsDataGate(err) {
				t.Fatalf("err = %v (%T), want a ConfigError", err, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %q, want it to contain %q", err, c.want)
			}
		})
	}
	rep, err := Run(ctx, db, "batch", []v1.Check{check(t, `{"check": "schema", "columns": ["amount"]}`)}, Context{}, "fail")
	if err != nil || rep.Passed() {
		t.Fatalf("schema check of a missing column: rep=%+v err=%v, want a failed check", rep, err)
	}
}

func TestAllChecksInOneReport(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, "CREATE TEMP TABLE b AS SELECT range AS id FROM range(10)"); err != nil {
		t.Fatal(err)
	}
	checks := []v1.Check{check(t, `{"check": "row_count", "min": 1}`), check(t, `{"check": "unique", "columns": ["id"]}`), check(t, `{"check": "range", "column": "id", "max": 5}`)}
	rep, err := Run(ctx, db, "b", checks, Context{}, "fail")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 10 || rep.Passed() {
		t.Fatalf("rows=%d passed=%v; want 10 rows and a failure", rep.Rows, rep.Passed())
	}
	if p, f := rep.Counts(); p != 2 || f != 1 {
		t.Errorf("counts = %d passed, %d failed", p, f)
	}
	if got := rep.Results[2].Metrics["max"]; got != 9 {
		t.Errorf("range max metric = %v, want 9", got)
	}
	gate := &GateError{Target: "lake.t", Report: rep}
	if !ldperr.IsDataGate(gate) || ldperr.ExitCode(gate) != ldperr.ExitDataGate {
		t.Error("a GateError is not a data gate with exit code 3")
	}
	if !strings.Contains(gate.Error(), "range(id)") {
		t.Errorf("gate error %q does not name the failed check", gate)
	}
}

func TestTypeNames(t *testing.T) {
	for user, duck := range map[string]string{"int64": "BIGINT", "long": "BIGINT", "double": "DOUBLE", "float64": "DOUBLE", "string": "VARCHAR", "utf8": "VARCHAR",
		"bool": "BOOLEAN", "date32[day]": "DATE", "timestamp[us]": "TIMESTAMP", "timestamptz": "TIMESTAMP WITH TIME ZONE", "decimal(10,2)": "DECIMAL(10,2)"} {
		if NormalizeType(user) != ArrowType(duck) {
			t.Errorf("NormalizeType(%q) = %q, ArrowType(%q) = %q", user, NormalizeType(user), duck, ArrowType(duck))
		}
	}
}

// TestALargeBatchIsCheckedUnderTheBound: a batch of boundedRows keys with one repeated is
// checked under the memory bound, finds the repeat exactly, and leaves the database's default
// limit in place.
func TestALargeBatchIsCheckedUnderTheBound(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before, after string
	db.QueryRow(ctx, "SELECT current_setting('memory_limit')", &before)
	if err := db.Exec(ctx, "CREATE TEMP VIEW big AS SELECT i AS id FROM range(2000000) t(i) UNION ALL SELECT 42"); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(ctx, db, "big", []v1.Check{check(t, `{"check": "unique", "columns": ["id"]}`)}, Context{SourceRows: boundedRows + 1}, "fail")
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Passed || r.FailingRows != 1 || r.Details != "1 duplicate row in 1 key" {
		t.Errorf("unique over the large batch: %+v", r)
	}
	db.QueryRow(ctx, "SELECT current_setting('memory_limit')", &after)
	if after != before {
		t.Errorf("memory limit after the checks = %q, want the default %q", after, before)
	}
}

// TestNaNIsOutOfEveryRange: a NaN fails a range with a min as it fails one with a max (it
// passed a min, since DuckDB orders NaN above every number), and the details count it.
func TestNaNIsOutOfEveryRange(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, `CREATE TEMP TABLE b AS SELECT * FROM (VALUES (1.0::DOUBLE), ('NaN'::DOUBLE), (3.0)) AS t(x)`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{`{"check": "range", "column": "x", "min": 0}`, `{"check": "range", "column": "x", "max": 10}`, `{"check": "range", "column": "x", "min": 0, "max": 10}`} {
		rep, err := Run(ctx, db, "b", []v1.Check{check(t, c)}, Context{}, "fail")
		if err != nil {
			t.Fatal(err)
		}
		r := rep.Results[0]
		if r.Passed || r.FailingRows != 1 || !strings.Contains(r.Details, "1 row outside") || !strings.Contains(r.Details, "(1 NaN)") || r.Metrics["max"] != 3 {
			t.Errorf("%s: passed=%v failing=%d details=%q metrics=%v; want 1 failing row, the NaN, and max 3", c, r.Passed, r.FailingRows, r.Details, r.Metrics)
		}
	}
}

// TestUniqueCountsRowsAndKeys: duplicate rows beyond the first of each key, the keys they
// share, NULL a key like any other (as GROUP BY has it), over several columns.
func TestUniqueCountsRowsAndKeys(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, `CREATE TEMP TABLE batch AS SELECT * FROM (VALUES
		(1, 'a'), (1, 'a'), (1, 'a'), (2, 'b'), (2, 'b'), (3, NULL), (NULL, NULL), (NULL, NULL), (4, 'c')) AS t(id, tag)`); err != nil {
		t.Fatal(err)
	}
	for js, want := range map[string]string{
		`{"check": "unique", "columns": ["id"]}`:        "4 duplicate rows in 3 keys",
		`{"check": "unique", "columns": ["id", "tag"]}`: "4 duplicate rows in 3 keys",
		`{"check": "unique", "columns": ["tag"]}`:       "5 duplicate rows in 3 keys",
	} {
		rep, err := Run(ctx, db, "batch", []v1.Check{check(t, js)}, Context{}, "fail")
		if err != nil {
			t.Fatal(err)
		}
		if r := rep.Results[0]; r.Details != want || r.Passed || float64(r.FailingRows) != r.Metrics["duplicate_rows"] || r.Metrics["duplicate_keys"] != 3 {
			t.Errorf("%s: %+v, want %s", js, r, want)
		}
	}
}
