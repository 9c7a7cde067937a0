package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/lake"
	"github.com/ldp-dev/ldp/internal/ledger"
	"github.com/ldp-dev/ldp/internal/quality"
)

func day(t *testing.T, s string, loc *time.Location) v1.LogicalWindow {
	t.Helper()
	start, err := time.ParseInLocation("2006-01-02", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v1.LogicalWindow{Start: start, End: start.AddDate(0, 0, 1)}
}

// TestThreeWindowsOverOneFile: one file holds three days; each daily run keeps its day's row,
// so three runs load 3 rows, not 9. Running a day again is skipped without reading the source,
// and redoing one day under a key of its own replaces that day's rows only.
func TestThreeWindowsOverOneFile(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "orders.csv"), "order_id,ordered_at,amount\n1,2026-08-01 10:00:00,10\n2,2026-08-02 23:30:00,20\n3,2026-08-03 00:15:00,30\n")
	p := spec(t, dir, `{"identifier": "daily_orders", "metadata": {
		"window": {"size": "day", "column": "ordered_at", "timezone": "Europe/Paris"},
		"source": {"name": "orders", "format": "CSV", "path": "orders.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "write_mode": "overwrite", "catalog": {"identifier": "shop"}},
		"quality": [{"check": "row_count", "min": 1}]}}`)
	paris, _ := time.LoadLocation("Europe/Paris")
	ctx := context.Background()
	days := []string{"2026-08-01", "2026-08-02", "2026-08-03"}
	for _, d := range days {
		res, err := Run(ctx, p, Options{Window: day(t, d, paris)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != v1.PipelinePublished || res.RowsRead != 3 || res.RowsKept != 1 || res.RowsWritten != 1 {
			t.Errorf("%s: %+v", d, res)
		}
		if res.Key != p.IdempotencyKey(day(t, d, paris)) {
			t.Errorf("%s: key %s is not the window's", d, res.Key)
		}
	}
	if got := queryTable(t, p, "SELECT list(order_id ORDER BY order_id) FROM t", 0); got != "[1 2 3]" {
		t.Fatalf("rows = %s, want [1 2 3]", got)
	}
	// Again: every day is skipped, and the source is not even read (it is gone).
	if err := os.Rename(filepath.Join(dir, "orders.csv"), filepath.Join(dir, "orders.bak")); err != nil {
		t.Fatal(err)
	}
	for _, d := range days {
		res, err := Run(ctx, p, Options{Window: day(t, d, paris)})
		if err != nil || res.Status != v1.PipelineSkippedDuplicate || res.RowsRead != 0 {
			t.Errorf("%s again: %+v, %v; want skipped_duplicate without a read", d, res, err)
		}
	}
	// The source changes for 2 August; redo that day under a key of its own.
	putFile(t, filepath.Join(dir, "orders.csv"), "order_id,ordered_at,amount\n1,2026-08-01 10:00:00,10\n20,2026-08-02 09:00:00,200\n21,2026-08-02 18:00:00,210\n3,2026-08-03 00:15:00,30\n")
	res, err := Run(ctx, p, Options{Window: day(t, "2026-08-02", paris), Key: "orders-2026-08-02-v2"})
	if err != nil || res.Status != v1.PipelinePublished || res.RowsKept != 2 {
		t.Fatalf("redo: %+v, %v", res, err)
	}
	if got := queryTable(t, p, "SELECT list(order_id ORDER BY order_id) FROM t", 0); got != "[1 3 20 21]" {
		t.Errorf("after the redo rows = %s, want [1 3 20 21]", got)
	}
	// Every publish carries the protocol's summary keys.
	tbl := loadTable(t, p)
	s := tbl.CurrentSnapshot().Summary.Properties
	for _, k := range []string{lake.KeyProp, lake.RunIDProp, lake.AttemptProp, lake.SpecHashProp, lake.WindowProp, lake.SourcePropStem + "orders"} {
		if s[k] == "" {
			t.Errorf("snapshot summary lacks %s: %v", k, s)
		}
	}
	if s[lake.WindowProp] != "2026-08-01T22:00:00Z/2026-08-02T22:00:00Z" || s[lake.KeyProp] != "orders-2026-08-02-v2" {
		t.Errorf("summary %v", s)
	}
}

func TestDailyDropsNamedByPlaceholder(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "drops", "orders_2026-08-01.csv"), "order_id,amount\n1,10\n2,20\n")
	putFile(t, filepath.Join(dir, "drops", "orders_2026-08-02.csv"), "order_id,amount\n3,30\n")
	p := spec(t, dir, `{"identifier": "drops", "metadata": {
		"window": {"size": "day", "timezone": "Europe/Paris"},
		"source": {"name": "orders", "format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`)
	paris, _ := time.LoadLocation("Europe/Paris")
	ctx := context.Background()
	for _, d := range []string{"2026-08-01", "2026-08-02"} {
		res, err := Run(ctx, p, Options{Window: day(t, d, paris)})
		if err != nil || res.SourcePath != "drops/orders_"+d+".csv" {
			t.Fatalf("%s: %+v, %v", d, res, err)
		}
	}
	if got := queryTable(t, p, "SELECT count(*) FROM t", 0); got != "3" {
		t.Errorf("rows = %s, want 3", got)
	}
	// A day whose file has not landed is an I/O error that names the file.
	_, err := Run(ctx, p, Options{Window: day(t, "2026-08-03", paris)})
	if err == nil || err.Error() != "source file "+filepath.Join(dir, "drops/orders_2026-08-03.csv")+" does not exist" {
		t.Errorf("missing drop: %v", err)
	}
}

func TestEmptyWindowIsNoDataOrAGate(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "orders.csv"), "order_id,ordered_at\n1,2026-08-01 10:00:00\n")
	body := `{"identifier": "o", "metadata": {"window": {"size": "day", "column": "ordered_at"},
		"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "o", "format": "ICEBERG", "catalog": {"identifier": "shop"}}%s}}`
	ctx := context.Background()
	_, err := Run(ctx, spec(t, dir, fmt.Sprintf(body, "")), Options{Window: day(t, "2026-08-05", time.UTC)})
	if !errors.Is(err, lake.ErrNoData) || !strings.HasPrefix(err.Error(), "No data to write: window 2026-08-05T00:00:00Z/2026-08-06T00:00:00Z kept no rows of orders.csv (1 read, 1 outside the window)") {
		t.Errorf("empty window: %v, want No data to write saying the window kept no rows", err)
	}
	res, err := Run(ctx, spec(t, dir, fmt.Sprintf(body, `, "quality": [{"check": "row_count", "min": 1}]`)), Options{Window: day(t, "2026-08-05", time.UTC)})
	if res == nil || res.Status != v1.PipelineBlocked {
		t.Errorf("empty window with row_count min: %+v, %v; want blocked", res, err)
	}
}

// TestWindowDropsAreCountedAndRuled (issue 33): a day's drop holds two rows of the day, a late
// row of the day before and a row with no ordered_at. The run counts each (in the result and
// the ledger's events, never their values); the row with no window value holds the batch back
// by default, naming the file and the opt-out; with null_rows "drop" the window loads without
// it; outside_rows "fail" makes the late row a gate too; row_count equals "source" compares
// with the rows read, so dropped rows fail it.
func TestWindowDropsAreCountedAndRuled(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "drops", "orders_2026-08-02.csv"),
		"order_id,ordered_at,amount\n1,2026-08-02 09:00:00,10\n2,2026-08-01 23:50:00,20\n3,,30\n4,2026-08-02 18:00:00,40\n")
	body := func(table, window, quality string) string {
		return `{"identifier": "orders", "metadata": {"window": {"size": "day", "column": "ordered_at"` + window + `},
			"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
			"target": {"name": "` + table + `", "format": "ICEBERG", "catalog": {"identifier": "shop"}}` + quality + `}}`
	}
	win := day(t, "2026-08-02", time.UTC)
	counts := func(t *testing.T, res *v1.PipelineResult) {
		t.Helper()
		if res == nil || res.RowsRead != 4 || res.RowsKept != 2 || res.RowsOutside != 1 || res.RowsNoWindow != 1 {
			t.Errorf("counts: %+v, want 4 read, 2 kept, 1 outside, 1 with no window value", res)
		}
	}
	cases := []struct {
		name, table, window, quality string
		status                       string
		line                         string // a line of the run's log
		failed                       string // the checks that failed
	}{
		{"no window value holds it back", "orders", "", "", v1.PipelineBlocked,
			`check null_rows(ordered_at): FAILED: 1 row of drops/orders_2026-08-02.csv has no ordered_at, so it is in no window; fill the column at the source, or set "null_rows": "drop" in metadata.window to load the window without them`,
			"null_rows(ordered_at)"},
		{"a gate whatever on_failure", "orders", "", `, "quality": {"on_failure": "warn", "checks": [{"check": "row_count", "min": 1}]}`, v1.PipelineBlocked,
			"check row_count: passed: 2 rows", "null_rows(ordered_at)"},
		{"dropped on purpose", "orders", `, "null_rows": "drop"`, "", v1.PipelinePublished,
			`note: 1 row of drops/orders_2026-08-02.csv with no ordered_at dropped (metadata.window.null_rows is "drop")`, ""},
		{"published, then done", "orders", `, "null_rows": "drop"`, "", v1.PipelineSkippedDuplicate, "", ""},
		{"equals source is the rows read", "equals", `, "null_rows": "drop"`, `, "quality": [{"check": "row_count", "equals": "source"}]`, v1.PipelineBlocked,
			"check row_count: FAILED: 2 rows: want exactly 4 (the rows read from the source)", "row_count"},
		{"outside rows fail when asked", "outside", `, "null_rows": "drop", "outside_rows": "fail"`, "", v1.PipelineBlocked,
			"check outside_rows(ordered_at): FAILED: 1 row of drops/orders_2026-08-02.csv is outside the window 2026-08-02T00:00:00Z/2026-08-03T00:00:00Z; fix the source, or set \"outside_rows\": \"leave\" in metadata.window to leave them for their own windows",
			"outside_rows(ordered_at)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log strings.Builder
			events, _ := eventsOf(t, dir, body(c.table, c.window, c.quality), Options{Window: win, Log: &log})
			finished := events[len(events)-1].Payload
			if finished["status"] != c.status {
				t.Fatalf("status %v, want %s; log:\n%s", finished["status"], c.status, log.String())
			}
			if c.line != "" && !strings.Contains(log.String(), c.line+"\n") {
				t.Errorf("log lacks %q:\n%s", c.line, log.String())
			}
			if c.status == v1.PipelineSkippedDuplicate {
				return
			}
			if c.status == v1.PipelinePublished && !strings.Contains(log.String(), "note: 1 row of drops/orders_2026-08-02.csv outside the window was left for its own window\n") {
				t.Errorf("log does not say the late row was left:\n%s", log.String())
			}
			var extracted map[string]any
			var failed []string
			for _, e := range events {
				switch e.Type {
				case ledger.RunExtracted:
					extracted = e.Payload
				case ledger.RunBlockedQuality:
					for _, f := range e.Payload["failures"].([]any) {
						failed = append(failed, f.(map[string]any)["name"].(string))
					}
				}
				if b, _ := json.Marshal(e.Payload); strings.Contains(string(b), "23:50") {
					t.Errorf("event %s carries a row's value: %s", e.Type, b)
				}
			}
			for _, p := range []map[string]any{extracted, finished} {
				if fmt.Sprintf("%v %v %v %v", p["rows_read"], p["rows_kept"], p["rows_outside_window"], p["rows_no_window_value"]) != "4 2 1 1" {
					t.Errorf("event counts %v", p)
				}
			}
			if strings.Join(failed, ",") != c.failed {
				t.Errorf("failed checks %v, want %s", failed, c.failed)
			}
		})
	}
	// Through Run, the result says the same; nothing was written by a gate.
	p := spec(t, dir, body("orders_gate", "", ""))
	res, err := Run(context.Background(), p, Options{Window: win})
	counts(t, res)
	var gate *quality.GateError
	if !errors.As(err, &gate) || err.Error() != "data gate: 1 of 1 checks failed (null_rows(ordered_at)); nothing was written to shop.orders_gate" {
		t.Errorf("error %v", err)
	}
	if got := queryTable(t, spec(t, dir, body("orders", `, "null_rows": "drop"`, "")), "SELECT list(order_id ORDER BY order_id) FROM t", 0); got != "[1 4]" {
		t.Errorf("rows = %s, want [1 4]", got)
	}
}
