package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ldp-dev/ldp/internal/sources/bigquery/bqtest"
)

// TestBigQueryIntoIceberg: a JSON source with engine BIGQUERY (the seed's shape) runs its query
// against the test's BigQuery server on 127.0.0.1, the service-account key's JWT flow getting
// the token, and the rows land in an Iceberg table in the types the issue lists, and in a CSV
// file (BigQueryToCSV). Each run sends its query once. A query BigQuery refuses fails with its
// message and exit 1, and the key's contents appear in no output, ledger line or export.
func TestBigQueryIntoIceberg(t *testing.T) {
	t.Parallel()
	srv := bqtest.New()
	defer srv.Close()
	const q = "SELECT * FROM shop.orders WHERE ordered_at >= @window_start AND ordered_at < @window_end"
	fld := func(name, typ, mode string, sub ...map[string]any) map[string]any {
		m := map[string]any{"name": name, "type": typ, "mode": mode}
		if len(sub) > 0 {
			m["fields"] = sub
		}
		return m
	}
	srv.Results[q] = bqtest.Result{
		Fields: []map[string]any{fld("id", "INTEGER", "REQUIRED"), fld("amount", "NUMERIC", "NULLABLE"),
			fld("ordered_at", "TIMESTAMP", "NULLABLE"), fld("local", "DATETIME", "NULLABLE"), fld("tags", "STRING", "REPEATED"),
			fld("ship", "RECORD", "NULLABLE", fld("city", "STRING", "NULLABLE"))},
		Rows: [][]any{
			{"1", "10.500000001", "1772409600000000", "2026-03-02T01:00:00", []any{"a", "b"}, map[string][]any{"f": {"Paris"}}},
			{"2", nil, "1772413200123456", nil, []any{}, nil},
			{"3", "-0.5", "1772495999000000", "2026-03-02T23:59:59", []any{"c"}, map[string][]any{"f": {nil}}},
		},
	}
	srv.Results["SELEC 1"] = bqtest.Result{Status: 400, Reason: "invalidQuery", Message: `Syntax error: Unexpected identifier "SELEC" at [1:1]`}
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	key := srv.KeyJSON()
	l.write(t, "key.json", string(key))
	qj, _ := json.Marshal(map[string]string{"query": q})
	l.write(t, "query.json", string(qj))
	l.write(t, "bad_query.json", `{"query": "SELEC 1"}`)
	source := func(query string) string {
		return `{"format": "JSON", "engine": "BIGQUERY", "path": "` + query + `", "credentials": {"name": "loader", "path": "key.json"}}`
	}
	l.write(t, "orders.json", `{"identifier": "orders", "metadata": {"window": {"size": "day"}, "source": `+source("query.json")+`,
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "bq"}}}}`)
	l.write(t, "orders_csv.json", `{"identifier": "orders_csv", "metadata": {"window": {"size": "day"}, "source": `+source("query.json")+`,
		"target": {"name": "orders_csv", "format": "CSV", "path": "out/orders.csv"}}}`)
	l.write(t, "broken.json", `{"identifier": "broken", "metadata": {"source": `+source("bad_query.json")+`,
		"target": {"name": "broken", "format": "ICEBERG", "catalog": {"identifier": "bq"}}}}`)
	env := []string{"LDP_BIGQUERY_ENDPOINT=" + srv.Endpoint()}
	var all strings.Builder
	ldp := func(want int, args ...string) string {
		t.Helper()
		code, out, errs := l.run(t, env, args...)
		all.WriteString(out + errs)
		if code != want {
			t.Fatalf("ldp %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	ldp(0, "validate", "orders.json", "orders_csv.json", "broken.json")
	l.write(t, "csv_engine.json", `{"identifier": "csv_engine", "metadata": {"source": {"format": "CSV", "engine": "BIGQUERY", "path": "query.json"},
		"target": {"name": "csv_engine", "format": "ICEBERG", "catalog": {"identifier": "bq"}}}}`)
	if out := ldp(1, "validate", "csv_engine.json"); !strings.Contains(out, "metadata.source.engine: engine BIGQUERY runs the query of a query file: its format is JSON, not CSV") {
		t.Errorf("a CSV source with engine BIGQUERY validates as:\n%s", out)
	}
	// The query file is checked by validate, as a run reads it (the key file is not: a secret
	// is mounted where the run happens, not beside the spec CI validates).
	l.write(t, "lost.json", `{"identifier": "lost", "metadata": {"source": {"format": "JSON", "engine": "bigquery", "path": "sql/lost.json", "credentials": {"path": "absent-key.json"}},
		"target": {"name": "lost", "format": "ICEBERG", "catalog": {"identifier": "bq"}}}}`)
	l.write(t, "noquery.json", `{"identifier": "noquery", "metadata": {"source": {"format": "JSON", "engine": "BIGQUERY", "path": "key.json"},
		"target": {"name": "noquery", "format": "ICEBERG", "catalog": {"identifier": "bq"}}}}`)
	out := ldp(1, "validate", "lost.json", "noquery.json")
	for _, want := range []string{
		`lost.json:1:89: metadata.source.path: query file sql/lost.json does not exist: it holds {"query": "SELECT ..."}`,
		`noquery.json:1:92: metadata.source.path: query file key.json has no "query": it holds {"query": "SELECT ..."}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate says:\n%s\nwant a line with\n%s", out, want)
		}
	}
	if strings.Contains(out, "absent-key") {
		t.Errorf("validate checked the key file, a secret mounted where the run happens:\n%s", out)
	}
	ldp(0, "run", "orders.json", "--window", "2026-03-02/2026-03-03")
	got := ldp(0, "query", "orders.json", "SELECT id, amount, strftime(ordered_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%f') AS at, local, "+
		"array_to_string(tags, '|') AS tags, ship.city AS city, typeof(amount) AS ta, typeof(ordered_at) AS tt, typeof(local) AS tl, typeof(tags) AS tg, typeof(ship) AS ts FROM orders ORDER BY id", "-o", "csv")
	want := `id,amount,at,local,tags,city,ta,tt,tl,tg,ts
1,10.500000001,2026-03-02T00:00:00.000000,2026-03-02 01:00:00,a|b,Paris,"DECIMAL(38,9)",TIMESTAMP WITH TIME ZONE,TIMESTAMP,VARCHAR[],STRUCT(city VARCHAR)
2,,2026-03-02T01:00:00.123456,,,,"DECIMAL(38,9)",TIMESTAMP WITH TIME ZONE,TIMESTAMP,VARCHAR[],STRUCT(city VARCHAR)
3,-0.500000000,2026-03-02T23:59:59.000000,2026-03-02 23:59:59,c,,"DECIMAL(38,9)",TIMESTAMP WITH TIME ZONE,TIMESTAMP,VARCHAR[],STRUCT(city VARCHAR)
`
	if got != want {
		t.Errorf("the table:\n%s\nwant:\n%s", got, want)
	}
	// A STRUCT and a list read as DuckDB prints them, the fields in their declared order, and
	// as JSON objects and arrays (they printed as Go's map[a:Paris z:1] and [a b]).
	if got, want := ldp(0, "query", "orders.json", "SELECT ship, tags, {'z': id, 'a': ship.city} AS o FROM orders WHERE id = 1"), "ship             tags    o\n{'city': Paris}  [a, b]  {'z': 1, 'a': Paris}\n(1 row)\n"; got != want {
		t.Errorf("a struct and a list print as:\n%s\nwant:\n%s", got, want)
	}
	if got, want := ldp(0, "query", "orders.json", "SELECT ship, tags, {'z': id, 'a': ship.city} AS o FROM orders WHERE id = 1", "-o", "json"), "[\n  {\"ship\": {\"city\":\"Paris\"}, \"tags\": [\"a\",\"b\"], \"o\": {\"z\":1,\"a\":\"Paris\"}}\n]\n"; got != want {
		t.Errorf("a struct and a list in JSON:\n%s\nwant:\n%s", got, want)
	}
	ldp(0, "run", "orders_csv.json", "--window", "2026-03-02/2026-03-03")
	csv, _ := os.ReadFile(filepath.Join(l.dir, "out", "orders.csv"))
	if !strings.HasPrefix(string(csv), "id,amount,ordered_at,local,tags,ship\n1,10.500000001,") || strings.Count(string(csv), "\n") != 4 {
		t.Errorf("the CSV file:\n%s", csv)
	}
	if out := ldp(1, "run", "broken.json"); !strings.Contains(out, `BigQuery: Syntax error: Unexpected identifier "SELEC" at [1:1] (invalidQuery); fix the query file`) {
		t.Errorf("the broken query's run says:\n%s", out)
	}
	if code, out, _ := l.run(t, env, "query", "broken.json", "SELECT count(*) FROM broken", "-o", "csv"); code == 0 {
		t.Errorf("the failed run left a table:\n%s", out)
	}
	srv.Lock()
	if len(srv.Inserts) != 3 {
		t.Errorf("jobs inserted %v, want three runs", srv.Inserts)
	}
	for id, n := range srv.Inserts {
		if n != 1 || !strings.HasPrefix(id, "ldp_") || !strings.HasSuffix(id, "_1") {
			t.Errorf("job %s inserted %d times, want once, as ldp_<run id>_<attempt>", id, n)
		}
	}
	srv.Unlock()
	all.WriteString(ldp(0, "export", "k8s", "orders.json"))
	ldp(1, "run", "orders.json", "--window", "2026-03-02/2026-03-03", "-v", "--mode", "bogus")
	ledger, _ := os.ReadFile(filepath.Join(l.dir, ".ldp", "events.jsonl"))
	var k map[string]string
	json.Unmarshal(key, &k)
	pemBody := strings.Split(k["private_key"], "\n")[3]
	for what, text := range map[string]string{"output, errors and the export": all.String(), "the ledger": string(ledger)} {
		if strings.Contains(text, pemBody) || strings.Contains(text, "PRIVATE KEY") {
			t.Errorf("the key is in %s", what)
		}
	}
}
