package bigquery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/redact"
	"github.com/ldp-dev/ldp/internal/sources/bigquery"
	"github.com/ldp-dev/ldp/internal/sources/bigquery/bqtest"
)

func f(name, typ, mode string, sub ...map[string]any) map[string]any {
	m := map[string]any{"name": name, "type": typ, "mode": mode}
	if len(sub) > 0 {
		m["fields"] = sub
	}
	return m
}

const orders = "SELECT * FROM shop.orders WHERE ordered_at >= @window_start AND ordered_at < @window_end"

func setup(t *testing.T, query string) (*bqtest.Server, bigquery.Config) {
	t.Helper()
	srv := bqtest.New()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "key.json"), srv.KeyJSON(), 0o600)
	q, _ := json.Marshal(map[string]string{"query": query})
	os.WriteFile(filepath.Join(dir, "query.json"), q, 0o644)
	srv.Results[orders] = bqtest.Result{
		Fields: []map[string]any{f("id", "INTEGER", "REQUIRED"), f("amount", "NUMERIC", "NULLABLE"), f("paid", "BOOLEAN", "NULLABLE"),
			f("ordered_at", "TIMESTAMP", "NULLABLE"), f("local", "DATETIME", "NULLABLE"), f("tags", "STRING", "REPEATED"),
			f("ship", "RECORD", "NULLABLE", f("city", "STRING", "NULLABLE"), f("zip", "INTEGER", "NULLABLE"))},
		Rows: [][]any{
			{"1", "10.500000001", "true", "1772409600000000", "2026-03-02T01:00:00", []any{"a", "b"}, map[string][]any{"f": {"Paris", "75001"}}},
			{"2", nil, "false", "1772413200123456", nil, []any{}, nil},
			{"3", "-0.000000001", nil, nil, "2026-03-02T23:59:59.999999", []any{"c"}, map[string][]any{"f": {nil, nil}}},
		},
	}
	return srv, bigquery.Config{KeyFile: filepath.Join(dir, "key.json"), QueryFile: filepath.Join(dir, "query.json"),
		Start: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC),
		JobID: bigquery.JobID("run-1", 1), Endpoint: srv.Endpoint()}
}

func read(cfg bigquery.Config) ([]bigquery.Column, []map[string]any, error) {
	var cols []bigquery.Column
	var rows []map[string]any
	err := bigquery.Read(context.Background(), cfg, func(c []bigquery.Column) error { cols = c; return nil },
		func(r map[string]any) error { rows = append(rows, r); return nil })
	return cols, rows, err
}

// TestReadPagesAndTypes: the JWT flow gets a token, the window goes in as two TIMESTAMP
// parameters, the three rows come in two pages, and each BigQuery type maps as the issue says.
func TestReadPagesAndTypes(t *testing.T) {
	srv, cfg := setup(t, orders)
	cols, rows, err := read(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, c := range cols {
		types = append(types, c.Name+" "+c.Type)
	}
	if got, want := strings.Join(types, ", "), `id BIGINT, amount DECIMAL(38,9), paid BOOLEAN, ordered_at TIMESTAMPTZ, local TIMESTAMP, tags VARCHAR[], ship STRUCT("city" VARCHAR, "zip" BIGINT)`; got != want {
		t.Errorf("columns\n%s\nwant\n%s", got, want)
	}
	b, _ := json.Marshal(rows)
	want := `[{"amount":"10.500000001","id":1,"local":"2026-03-02T01:00:00","ordered_at":"2026-03-02T00:00:00Z","paid":true,"ship":{"city":"Paris","zip":75001},"tags":["a","b"]},` +
		`{"amount":null,"id":2,"local":null,"ordered_at":"2026-03-02T01:00:00.123456Z","paid":false,"ship":null,"tags":[]},` +
		`{"amount":"-0.000000001","id":3,"local":"2026-03-02T23:59:59.999999","ordered_at":null,"paid":null,"ship":{"city":null,"zip":null},"tags":["c"]}]`
	if string(b) != want {
		t.Errorf("rows\n%s\nwant\n%s", b, want)
	}
	p, _ := json.Marshal(srv.Params[cfg.JobID])
	if want := `[{"name":"window_start","parameterType":{"type":"TIMESTAMP"},"parameterValue":{"value":"2026-03-02 00:00:00+00:00"}},{"name":"window_end","parameterType":{"type":"TIMESTAMP"},"parameterValue":{"value":"2026-03-03 00:00:00+00:00"}}]`; string(p) != want {
		t.Errorf("parameters %s\nwant %s", p, want)
	}
	if srv.Tokens != 1 {
		t.Errorf("%d tokens issued, want 1", srv.Tokens)
	}
}

// TestRetrySendsNoSecondQuery: a second read of the same attempt (a retry after a crash) finds
// the job by its id (409) and reads its results; BigQuery ran the query once.
func TestRetrySendsNoSecondQuery(t *testing.T) {
	srv, cfg := setup(t, orders)
	if _, _, err := read(cfg); err != nil {
		t.Fatal(err)
	}
	_, rows, err := read(cfg)
	if err != nil || len(rows) != 3 {
		t.Fatalf("the retry read %d rows, %v", len(rows), err)
	}
	if n := srv.Inserts[cfg.JobID]; n != 2 || len(srv.Params) != 1 {
		t.Errorf("inserts %v, jobs %d: want two inserts of one job id and one job", srv.Inserts, len(srv.Params))
	}
	if bigquery.JobID("2026-03-02T00:00:00Z/x", 2) != "ldp_2026-03-02T00_00_00Z_x_2" {
		t.Errorf("job id %s", bigquery.JobID("2026-03-02T00:00:00Z/x", 2))
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct {
		name      string
		query     string
		change    func(srv *bqtest.Server, cfg *bigquery.Config)
		want      string
		retriable bool
	}{
		{"key missing", orders, func(_ *bqtest.Server, cfg *bigquery.Config) { cfg.KeyFile += ".gone" },
			"key.json.gone does not exist: source.credentials.path names a service-account key (JSON)", false},
		{"not a service account", orders, func(_ *bqtest.Server, cfg *bigquery.Config) {
			os.WriteFile(cfg.KeyFile, []byte(`{"type": "authorized_user", "client_id": "x", "client_secret": "s3cr3t", "refresh_token": "r"}`), 0o600)
		}, "is not a service-account key", false},
		{"no project", orders, func(srv *bqtest.Server, cfg *bigquery.Config) {
			var k map[string]any
			json.Unmarshal(srv.KeyJSON(), &k)
			delete(k, "project_id")
			b, _ := json.Marshal(k)
			os.WriteFile(cfg.KeyFile, b, 0o600)
		}, "has no project_id: the query job runs in the key's project", false},
		{"private key corrupt", orders, func(srv *bqtest.Server, cfg *bigquery.Config) {
			var k map[string]any
			json.Unmarshal(srv.KeyJSON(), &k)
			k["private_key"] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
			b, _ := json.Marshal(k)
			os.WriteFile(cfg.KeyFile, b, 0o600)
		}, "private_key is not a valid PEM RSA key: take a new key from the service account's keys", false},
		{"query file missing", orders, func(_ *bqtest.Server, cfg *bigquery.Config) { cfg.QueryFile += ".gone" },
			`query.json.gone does not exist: it holds {"query": "SELECT ..."}`, false},
		{"no query", orders, func(_ *bqtest.Server, cfg *bigquery.Config) {
			os.WriteFile(cfg.QueryFile, []byte(`{"sql": "SELECT 1"}`), 0o644)
		},
			`has no "query"`, false},
		{"syntax error", "SELEC 1", func(srv *bqtest.Server, _ *bigquery.Config) {
			srv.Results["SELEC 1"] = bqtest.Result{Status: 400, Reason: "invalidQuery", Message: "Syntax error: Unexpected identifier \"SELEC\" at [1:1]"}
		}, `BigQuery: Syntax error: Unexpected identifier "SELEC" at [1:1] (invalidQuery); fix the query file`, false},
		{"access denied", "SELECT * FROM secret.t", func(srv *bqtest.Server, _ *bigquery.Config) {
			srv.Results["SELECT * FROM secret.t"] = bqtest.Result{Status: 403, Reason: "accessDenied", Message: "Access Denied: Table secret.t: User does not have permission to query table secret.t."}
		}, "Access Denied: Table secret.t: User does not have permission to query table secret.t. (accessDenied); check that the service account may run query jobs", false},
		{"fails after start", "SELECT 1/0", func(srv *bqtest.Server, _ *bigquery.Config) {
			srv.Results["SELECT 1/0"] = bqtest.Result{Status: 400, Reason: "invalidQuery", Message: "Query error: division by zero: 1 / 0", FailLater: true}
		}, "BigQuery: Query error: division by zero: 1 / 0 (invalidQuery)", false},
		{"quota", "SELECT 2", func(srv *bqtest.Server, _ *bigquery.Config) {
			srv.Results["SELECT 2"] = bqtest.Result{Status: 403, Reason: "quotaExceeded", Message: "Quota exceeded: Your project exceeded quota for concurrent queries.", RetryAfter: 30}
		}, "Quota exceeded: Your project exceeded quota for concurrent queries. (quotaExceeded); retry in 30s", true},
		{"bignumeric", "SELECT big", func(srv *bqtest.Server, _ *bigquery.Config) {
			srv.Results["SELECT big"] = bqtest.Result{Fields: []map[string]any{f("id", "INTEGER", ""), f("m", "RECORD", "", f("big", "BIGNUMERIC", ""))}}
		}, "column m.big: BigQuery type BIGNUMERIC has no Iceberg type; an Iceberg decimal holds 38 digits: CAST it to NUMERIC (or STRING) in the query", false},
		{"key of another account", orders, func(srv *bqtest.Server, cfg *bigquery.Config) {
			other := bqtest.New()
			defer other.Close()
			b := strings.ReplaceAll(string(other.KeyJSON()), other.URL, srv.URL)
			os.WriteFile(cfg.KeyFile, []byte(b), 0o600)
		}, "the token endpoint refused the key in", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, cfg := setup(t, c.query)
			c.change(srv, &cfg)
			key, _ := os.ReadFile(cfg.KeyFile)
			_, _, err := read(cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			var r interface{ Retriable() bool }
			if got := errors.As(err, &r) && r.Retriable(); got != c.retriable {
				t.Errorf("retriable %v, want %v", got, c.retriable)
			}
			for _, secret := range []string{"PRIVATE KEY", "s3cr3t", string(key)} {
				if secret != "" && strings.Contains(err.Error(), secret) {
					t.Errorf("the error quotes the key file: %v", err)
				}
			}
		})
	}
}

// TestReal runs a query in BigQuery when LDP_TEST_BIGQUERY names a service-account key file
// (or "adc" for Application Default Credentials).
func TestReal(t *testing.T) {
	key := os.Getenv("LDP_TEST_BIGQUERY")
	if key == "" {
		t.Skip("set LDP_TEST_BIGQUERY to a service-account key file (or adc) to query BigQuery")
	}
	if key == "adc" {
		key = ""
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.json"), []byte(`{"query": "SELECT @window_start AS s, NUMERIC '1.5' AS n, [1, 2] AS l, STRUCT('a' AS x) AS r"}`), 0o644)
	cfg := bigquery.Config{KeyFile: key, QueryFile: filepath.Join(dir, "q.json"), Start: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		End: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), JobID: bigquery.JobID("ldp-test-"+time.Now().Format("20060102T150405.000000000"), 1)}
	cols, rows, err := read(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(cols) != 4 || rows[0]["s"] != "2026-03-02T00:00:00Z" {
		t.Errorf("columns %v rows %v", cols, rows)
	}
}

// TestApplicationDefaultCredentials: without a key file the read finds the key
// GOOGLE_APPLICATION_CREDENTIALS names, runs its JWT flow and takes its project.
func TestApplicationDefaultCredentials(t *testing.T) {
	srv, cfg := setup(t, orders)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", cfg.KeyFile)
	cfg.KeyFile = ""
	_, rows, err := read(cfg)
	if err != nil || len(rows) != 3 || srv.Tokens != 1 {
		t.Fatalf("read %d rows with %d tokens: %v", len(rows), srv.Tokens, err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("HOME", t.TempDir()) // no gcloud credentials either
	if _, _, err := read(cfg); err == nil || !strings.Contains(err.Error(), "no BigQuery credentials found: name a service-account key in source.credentials.path") {
		t.Errorf("error %v", err)
	}
}

// TestTokenEndpointHangCancel: a token endpoint that never answers cannot hold a run past its
// context: cancelling returns context.Canceled at once instead of hanging until kill -9.
func TestTokenEndpointHangCancel(t *testing.T) {
	_, cfg := setup(t, orders)
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer hang.Close()
	defer close(done)
	var key map[string]any
	b, _ := os.ReadFile(cfg.KeyFile)
	json.Unmarshal(b, &key)
	key["token_uri"] = hang.URL + "/token"
	b, _ = json.Marshal(key)
	os.WriteFile(cfg.KeyFile, b, 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	errc := make(chan error, 1)
	go func() {
		errc <- bigquery.Read(ctx, cfg, func([]bigquery.Column) error { return nil }, func(map[string]any) error { return nil })
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Read did not return 60 s after its context was cancelled")
	}
}

// TestTransientErrorsRetried: a 500 on jobs.insert, a 503 and a short 429 (Retry-After 1s) are
// sent again within the read; the job id makes re-sending jobs.insert safe.
func TestTransientErrorsRetried(t *testing.T) {
	srv, cfg := setup(t, orders)
	srv.Transient = []int{500, 503, 429}
	_, rows, err := read(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Errorf("%d rows, want 3", len(rows))
	}
	srv.Transient = []int{500, 500, 500, 500, 500, 500}
	cfg.JobID = bigquery.JobID("run-2", 1)
	_, _, err = read(cfg)
	if err == nil || err.Error() != "BigQuery: Internal Server Error (backendError) (after 4 tries)" {
		t.Errorf("err = %v", err)
	}
}

// TestNoResultSet: a job with no schema (a DDL or DML statement) is refused in words, not left
// for DuckDB to fail on an empty column list.
func TestNoResultSet(t *testing.T) {
	srv, cfg := setup(t, "DELETE FROM shop.orders WHERE true")
	srv.Results["DELETE FROM shop.orders WHERE true"] = bqtest.Result{}
	_, _, err := read(cfg)
	if err == nil || err.Error() != "the query returned no result set (a DDL or DML statement?): ldp loads a SELECT" {
		t.Errorf("err = %v", err)
	}
}

// TestNoCredentialsMessage: the message for missing Application Default Credentials reads the
// same after the redactor (it masked "give" after "credentials:").
func TestNoCredentialsMessage(t *testing.T) {
	_, cfg := setup(t, orders)
	cfg.KeyFile = ""
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	_, _, err := read(cfg)
	want := "no BigQuery credentials found: name a service-account key in source.credentials.path or set GOOGLE_APPLICATION_CREDENTIALS"
	if err == nil || redact.String(err.Error()) != want {
		t.Errorf("err = %v, redacted %q, want %q", err, redact.String(fmt.Sprint(err)), want)
	}
}

// TestPendingJobPolledWithPauses: a server that answers getQueryResults at once with
// jobComplete false (an emulator, a proxy that does not hold the request) is asked again after
// a doubling pause capped at two seconds, not in a tight loop, and the rows come when the job
// completes; the run's context ends the polling with an error that names the job.
func TestPendingJobPolledWithPauses(t *testing.T) {
	srv, cfg := setup(t, orders)
	res := srv.Results[orders]
	res.Pending = 7
	srv.Results[orders] = res
	var waits []string
	defer bigquery.SetPause(func(_ context.Context, d time.Duration) error {
		waits = append(waits, d.String())
		return nil
	})()
	_, rows, err := read(cfg)
	if err != nil || len(rows) != 3 {
		t.Fatalf("read %d rows, %v; want 3", len(rows), err)
	}
	if got, want := strings.Join(waits, " "), "100ms 200ms 400ms 800ms 1.6s 2s 2s"; got != want {
		t.Errorf("pauses %s, want %s", got, want)
	}

	res.Pending = 1 << 30
	srv.Results[orders] = res
	cfg.JobID = bigquery.JobID("run-3", 1)
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	bigquery.SetPause(func(ctx context.Context, _ time.Duration) error {
		if polls++; polls == 3 {
			cancel()
		}
		return ctx.Err()
	})
	err = bigquery.Read(ctx, cfg, func([]bigquery.Column) error { return nil }, func(map[string]any) error { return nil })
	if want := "BigQuery job " + cfg.JobID + " still running: context canceled"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
