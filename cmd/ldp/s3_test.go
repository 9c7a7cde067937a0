package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The S3 tests run against versitygw, an S3 gateway over a local folder, on 127.0.0.1.
const (
	s3Bucket = "lake"
	s3Key    = "ldptestkey"
	s3Secret = "ldptestsecret-not-a-real-one"
)

// findVersitygw finds the gateway on the PATH or where go install puts it.
func findVersitygw() string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	for _, dir := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("GOPATH"), "bin"), filepath.Join(os.Getenv("HOME"), "go", "bin")} {
		if p := filepath.Join(dir, "versitygw"); dir != "" && fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// startS3 starts versitygw serving a fresh folder with one bucket, on 127.0.0.1, for the test,
// and returns its endpoint and the folder it serves. The keys are in the standard AWS variables of this process (and so
// of every ldp it starts); each ldp gets its own cache folder unless a test says otherwise.
// .ci/run installs versitygw; where it is missing outside CI the test is skipped.
func startS3(t *testing.T) (endpoint, root string) {
	t.Helper()
	bin := findVersitygw()
	needProgram(t, bin != "", "versitygw", "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0")
	root = t.TempDir()
	if err := os.Mkdir(filepath.Join(root, s3Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	gw := exec.Command(bin, "--port", addr, "posix", root)
	gw.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s3Key, "ROOT_SECRET_KEY="+s3Secret)
	log := startServer(t, gw)
	waitFor(t, "versitygw listening on "+addr, 30*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, log)
	useS3Keys(t)
	return "http://" + addr, root
}

// needProgram skips the test where a server program it needs is not installed, outside CI,
// saying how to install it; in CI (which installs it) a missing program fails the test.
func needProgram(t *testing.T, found bool, name, install string) {
	t.Helper()
	switch {
	case found:
	case os.Getenv("CI") == "":
		t.Skipf("%s is not installed (%s); CI installs it and runs this test", name, install)
	default:
		t.Fatalf("%s is not installed: .ci/run installs it (%s)", name, install)
	}
}

// startServer starts a test's server process, stopped when the test ends, and returns what it
// logs.
func startServer(t *testing.T, cmd *exec.Cmd) *syncBuffer {
	t.Helper()
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return log
}

// useS3Keys puts the test servers' S3 keys in the standard AWS variables of this process (and
// so of every ldp it starts), and gives the ldp processes a fresh cache folder.
func useS3Keys(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", s3Key)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3Secret)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("LDP_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
}

// sharedCatalog is the catalog block of a PostgreSQL catalog at uri with its warehouse in the
// test's bucket at endpoint.
func sharedCatalog(uri, endpoint, identifier string) map[string]any {
	return map[string]any{
		"type": "sql", "uri": uri, "identifier": identifier,
		"warehouse_path": "s3://" + s3Bucket + "/warehouse",
		"properties":     map[string]any{"s3.endpoint": endpoint},
	}
}

func sharedCatalogJSON(uri, endpoint, identifier string) string {
	b, _ := json.Marshal(sharedCatalog(uri, endpoint, identifier))
	return string(b)
}

// withCatalog rewrites the dataset config at path so that every catalog block it has is the
// one catalog gives for its identifier: the only change a team makes to move a laptop's specs
// to shared infrastructure.
func withCatalog(t *testing.T, path string, catalog func(identifier string) map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	md, _ := doc["metadata"].(map[string]any)
	for _, side := range []string{"source", "target"} {
		s, _ := md[side].(map[string]any)
		if c, ok := s["catalog"].(map[string]any); ok {
			s["catalog"] = catalog(c["identifier"].(string))
		}
	}
	out, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// samplesByTwoWorkers copies the nyc_taxi example and the daily_orders workflow with its
// pipelines into a folder, gives every catalog block the one catalog makes, and has two
// workers (each with its own cache) run nyc_taxi at once, then tick the folder at once with
// tickFlags. It checks what must hold whatever the catalog: each window run once, each key on
// main once, and a third machine reading the same rows.
func samplesByTwoWorkers(t *testing.T, catalog func(identifier string) map[string]any, tickFlags ...string) *lakeDir {
	t.Helper()
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	samples := filepath.Join("..", "..", "config", "samples")
	for _, f := range []string{"nyc_taxi.json", "daily_orders.json", "daily_orders_workflow.json", "customers.json", "export_orders.json", "data", "drops"} {
		if out, err := exec.Command("cp", "-r", filepath.Join(samples, f), filepath.Join(l.dir, f)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v %s", f, err, out)
		}
	}
	for _, f := range []string{"nyc_taxi.json", "daily_orders.json", "customers.json", "export_orders.json"} {
		withCatalog(t, filepath.Join(l.dir, f), catalog)
	}
	if code, out, errs := l.run(t, nil, "validate", "."); code != 0 {
		t.Fatalf("validate: %d %s %s", code, out, errs)
	}
	worker := func(i int) []string {
		return []string{"LDP_CACHE_DIR=" + filepath.Join(l.dir, fmt.Sprintf("cache-worker-%d", i))}
	}
	// nyc_taxi: both workers overwrite the table with the day's export at once; the table
	// holds the export once.
	l.together(t, [][]string{worker(0), worker(1)}, "run", "nyc_taxi.json")
	reader := worker(3)
	code, out, errs := l.run(t, reader, "query", "nyc_taxi.json", "SELECT count(*) AS n, count(DISTINCT ride_id) AS ids, round(sum(fare), 2) AS fare FROM rides", "-o", "csv")
	if code != 0 || out != "n,ids,fare\n200,200,4010.5\n" {
		t.Errorf("nyc_taxi read by a third machine: %d %q %s", code, out, errs)
	}

	// The workflow and the scheduled pipeline: two workers tick the folder at once.
	const now = "2026-08-04T00:30:00Z"
	l.together(t, [][]string{worker(0), worker(1)}, append([]string{"schedule", "tick", ".", "--now", now, "--json"}, tickFlags...)...)
	runs := map[string]int{}
	b, err := os.ReadFile(filepath.Join(l.dir, ".ldp", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Type    string `json:"type"`
			Payload struct {
				Workflow string `json:"workflow"`
				Window   struct {
					Start string `json:"start"`
					End   string `json:"end"`
				} `json:"logical_window"`
			} `json:"payload"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "workflow.started" {
			runs[e.Payload.Workflow+" "+e.Payload.Window.Start+"/"+e.Payload.Window.End]++
		}
	}
	for _, w := range []string{"2026-07-31T22:00:00Z/2026-08-01T22:00:00Z", "2026-08-01T22:00:00Z/2026-08-02T22:00:00Z", "2026-08-02T22:00:00Z/2026-08-03T22:00:00Z"} {
		if n := runs["daily_orders_workflow "+w]; n != 1 {
			t.Errorf("daily_orders_workflow %s ran %d times, want once (all runs: %v)", w, n, runs)
		}
	}
	if n := runs["daily_orders 2026-08-02T22:00:00Z/2026-08-03T22:00:00Z"]; n != 1 {
		t.Errorf("daily_orders ran %d times for its due window, want once (all runs: %v)", n, runs)
	}
	code, out, errs = l.run(t, reader, "diff", "-f", ".", "--now", now)
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("after both workers: %d %s %s", code, out, errs)
	}
	commits, keys := l.commits(t, reader, "daily_orders.json")
	if len(commits) != 3 || len(keys) != 3 {
		t.Errorf("orders: %d publishes of %d keys on main, want 3 of 3 (one per day): %v", len(commits), len(keys), keys)
	}
	code, out, errs = l.run(t, reader, "query", "daily_orders.json", "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM orders", "-o", "csv")
	if code != 0 || out != "n,ids\n12,12\n" {
		t.Errorf("orders read by a third machine: %d %q %s", code, out, errs)
	}
	return l
}

// TestSamplesOnPostgresAndS3: the nyc_taxi example and the scheduled daily_orders workflow,
// unchanged but for their catalog blocks, run on a PostgreSQL catalog with an S3 warehouse by
// two workers at once, each with its own local cache (as two machines would be), dividing the
// windows by lease: every window is run once, each key is on main once, and a third machine
// reads the same rows.
func TestSamplesOnPostgresAndS3(t *testing.T) {
	uri := startPostgres(t)
	endpoint, bucket := startS3(t)
	l := samplesByTwoWorkers(t, func(id string) map[string]any { return sharedCatalog(uri, endpoint, id) }, "--leases")
	// The data files are in the bucket, not in the folder the specs share.
	for _, tbl := range []string{"nyc.db/rides", "shop.db/orders", "shop.db/customers"} {
		if matches, _ := filepath.Glob(filepath.Join(bucket, s3Bucket, "warehouse", tbl, "data", "*", "*")); len(matches) == 0 {
			t.Errorf("no data files of %s in the bucket", tbl)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(l.dir, "warehouse", "*")); len(matches) > 0 {
		t.Errorf("files were written beside the specs: %v", matches)
	}
}

// TestFilesInObjectStorage: a CSV source and a CSV target at s3:// paths, with the table's
// files in the same bucket: the drop is read from the bucket, the export lands there as one
// object, and a drop that is not there yet is named as missing.
func TestFilesInObjectStorage(t *testing.T) {
	endpoint, bucket := startS3(t)
	drops := filepath.Join(bucket, s3Bucket, "drops")
	os.MkdirAll(drops, 0o755)
	os.WriteFile(filepath.Join(drops, "orders_2026-08-01.csv"), []byte("order_id,ordered_at,amount\n1,2026-08-01 09:00:00,10\n2,2026-08-01 10:00:00,20\n"), 0o644)
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	cat, _ := json.Marshal(map[string]any{
		"type": "sql", "uri": filepath.Join(l.dir, "catalog.db"), "identifier": "shop",
		"warehouse_path": "s3://" + s3Bucket + "/warehouse", "properties": map[string]any{"s3.endpoint": endpoint},
	})
	l.write(t, "load.json", `{"identifier": "load", "metadata": {"window": {"size": "day", "column": "ordered_at"},
		"source": {"format": "CSV", "path": "s3://lake/drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": `+string(cat)+`}}}`)
	l.write(t, "export.json", `{"identifier": "export", "metadata": {
		"source": {"name": "orders", "format": "ICEBERG", "catalog": `+string(cat)+`},
		"target": {"name": "orders_export", "format": "CSV", "path": "s3://lake/exports/orders.csv"}}}`)

	code, out, errs := l.run(t, nil, "plan", "load.json", "--window", "2026-08-02/2026-08-03")
	if code != 0 || !strings.Contains(out, "source      s3://lake/drops/orders_2026-08-02.csv (not there yet)") {
		t.Errorf("plan of a window whose drop is missing: %d %s %s", code, out, errs)
	}
	code, out, errs = l.run(t, nil, "run", "load.json", "--window", "2026-08-02/2026-08-03")
	if code == 0 || !strings.Contains(errs, "source file s3://lake/drops/orders_2026-08-02.csv does not exist") {
		t.Errorf("run of a window whose drop is missing: %d %s %s", code, out, errs)
	}
	if code, out, errs = l.run(t, nil, "run", "load.json", "--window", "2026-08-01/2026-08-02"); code != 0 {
		t.Fatalf("load from the bucket: %d %s %s", code, out, errs)
	}
	if code, out, errs = l.run(t, nil, "run", "export.json"); code != 0 {
		t.Fatalf("export to the bucket: %d %s %s", code, out, errs)
	}
	got, err := os.ReadFile(filepath.Join(bucket, s3Bucket, "exports", "orders.csv"))
	if err != nil || string(got) != "order_id,ordered_at,amount\n1,2026-08-01 09:00:00,10\n2,2026-08-01 10:00:00,20\n" {
		t.Errorf("the exported object: %v %q", err, got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(bucket, s3Bucket, "exports", ".*")); len(leftovers) > 0 {
		t.Errorf("a partial object was left beside the export: %v", leftovers)
	}

	// Maintenance reaches the bucket: a file no snapshot references, four days old, is deleted.
	// A file DuckDB wrote alone is linked straight into data/; one of a partitioned write sits
	// in a folder of its own.
	files, _ := filepath.Glob(filepath.Join(bucket, s3Bucket, "warehouse", "shop.db", "orders", "data", "*.parquet"))
	more, _ := filepath.Glob(filepath.Join(bucket, s3Bucket, "warehouse", "shop.db", "orders", "data", "*", "*.parquet"))
	files = append(files, more...)
	if len(files) != 1 {
		t.Fatalf("data files of the table in the bucket: %v", files)
	}
	orphan := filepath.Join(filepath.Dir(files[0]), "orphan.parquet")
	data, _ := os.ReadFile(files[0])
	os.WriteFile(orphan, data, 0o644)
	old := time.Now().Add(-96 * time.Hour)
	os.Chtimes(orphan, old, old)
	code, out, errs = l.run(t, nil, "maintain", "load.json", "--orphans", "--apply")
	if code != 0 || !strings.Contains(out, "orphan.parquet") {
		t.Errorf("maintain --orphans: %d %s %s", code, out, errs)
	}
	if fileExists(orphan) || !fileExists(files[0]) {
		t.Errorf("after maintain: orphan there %v, live data file there %v", fileExists(orphan), fileExists(files[0]))
	}
	code, out, errs = l.run(t, nil, "query", "load.json", "SELECT count(*) AS n FROM orders", "-o", "csv")
	if code != 0 || out != "n\n2\n" {
		t.Errorf("the table after maintenance: %d %q %s", code, out, errs)
	}

	// Keys the store refuses, or none: the error says which setting to fix.
	for env, want := range map[string]string{
		"AWS_SECRET_ACCESS_KEY=not-the-secret": "(the object store refused the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
		"AWS_ACCESS_KEY_ID=":                   "(no S3 keys: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
	} {
		code, out, errs = l.run(t, []string{env}, "query", "load.json", "SELECT count(*) FROM orders")
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("with %s: %d %s %s", env, code, out, errs)
		}
	}

	// A backfill publishes its windows in grouped commits, their files uploaded to the bucket;
	// the window already done is left alone.
	for _, day := range []string{"2026-08-02", "2026-08-03"} {
		os.WriteFile(filepath.Join(drops, "orders_"+day+".csv"), []byte("order_id,ordered_at,amount\n"+day[9:]+","+day+" 09:00:00,10\n"), 0o644)
	}
	code, out, errs = l.run(t, nil, "backfill", "load.json", "--from", "2026-08-01", "--to", "2026-08-04")
	if code != 0 || !strings.Contains(out, "load: 3 windows: 1 done, 2 published") {
		t.Errorf("backfill: %d %s %s", code, out, errs)
	}
	code, out, errs = l.run(t, nil, "query", "load.json", "SELECT count(*) AS n, count(DISTINCT order_id) AS ids FROM orders", "-o", "csv")
	if code != 0 || out != "n,ids\n4,3\n" {
		t.Errorf("the table after the backfill: %d %q %s", code, out, errs)
	}
}
