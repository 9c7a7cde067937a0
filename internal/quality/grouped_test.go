package quality

import (
	"context"
	"reflect"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// TestGroupedReportIsEachBatchsOwn: the checks scanned once over three batches told apart by a
// column give each batch the report Run gives it alone, each measured against its own context
// (freshness from its own now, row_count equals its own source rows); a batch whose unique
// check fails is left to Run (its keys need a query of its own), and a group with no rows has
// no report.
func TestGroupedReportIsEachBatchsOwn(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(ctx, `CREATE TEMP TABLE rows AS SELECT * FROM (VALUES
		(0, 1, 'a', TIMESTAMP '2026-09-01 10:00:00'), (0, 2, NULL, TIMESTAMP '2026-09-01 11:00:00'),
		(1, 3, 'c', TIMESTAMP '2026-09-02 10:00:00'), (1, 4, 'x', TIMESTAMP '2026-09-02 12:00:00'), (1, 5, 'a', TIMESTAMP '2026-09-02 13:00:00'),
		(2, 6, 'a', TIMESTAMP '2026-09-03 10:00:00'), (2, 6, 'a', TIMESTAMP '2026-09-03 10:00:00')
	) AS t(g, id, city, ts)`); err != nil {
		t.Fatal(err)
	}
	checks := []v1.Check{
		check(t, `{"check": "row_count", "equals": "source"}`),
		check(t, `{"check": "not_null", "columns": ["city"]}`),
		check(t, `{"check": "accepted_values", "column": "city", "values": ["a", "c"]}`),
		check(t, `{"check": "freshness", "column": "ts", "max_age_hours": 12}`),
		check(t, `{"check": "unique", "columns": ["id"]}`),
	}
	cols := []engine.Column{{Name: "id", Type: "INTEGER"}, {Name: "city", Type: "VARCHAR"}, {Name: "ts", Type: "TIMESTAMP"}}
	scan, err := RunGrouped(ctx, db, "rows", "g", cols, checks, "fail")
	if err != nil {
		t.Fatal(err)
	}
	for g := int64(0); g < 2; g++ {
		qc := Context{SourceRows: 2 + g, Now: time.Date(2026, 9, 2+int(g), 0, 0, 0, 0, time.UTC)}
		got, ok := scan.Report(g, qc)
		if !ok {
			t.Fatalf("batch %d: no report", g)
		}
		view := "batch" + string(rune('0'+g))
		if err := db.Exec(ctx, "CREATE TEMP VIEW "+view+" AS SELECT id, city, ts FROM rows WHERE g = "+string(rune('0'+g))); err != nil {
			t.Fatal(err)
		}
		want, err := Run(ctx, db, view, checks, qc, "fail")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch %d:\ngrouped %+v\nalone   %+v", g, got, want)
		}
		if scan.Rows(g) != 2+g {
			t.Errorf("batch %d: %d rows, want %d", g, scan.Rows(g), 2+g)
		}
	}
	if _, ok := scan.Report(2, Context{}); ok {
		t.Error("batch 2 (a failed unique check) has a grouped report; its keys need Run")
	}
	if _, ok := scan.Report(3, Context{}); ok || scan.Rows(3) != 0 {
		t.Error("batch 3 (no rows) has a report")
	}
}
