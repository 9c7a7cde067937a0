package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealDbt runs testdata/dbt_real, a dbt-duckdb project, with a real dbt: opt-in (dbt
// cannot be installed where ldp's CI runs), with LDP_RUN_DBT=1 and dbt on the PATH. It loads
// a day of orders, builds the project for that day and reads the published model back.
func TestRealDbt(t *testing.T) {
	if os.Getenv("LDP_RUN_DBT") != "1" {
		t.Skip("opt-in: set LDP_RUN_DBT=1 with dbt-duckdb on the PATH")
	}
	if _, err := exec.LookPath("dbt"); err != nil {
		t.Fatal("LDP_RUN_DBT=1 but dbt is not on the PATH")
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "shop_dbt"), os.DirFS("testdata/dbt_real")); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("orders.json", `{"identifier": "orders", "metadata": {"window": {"size": "day", "column": "ordered_at"},
 "source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
 "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`)
	write("revenue.json", `{"identifier": "revenue", "metadata": {"source": {"format": "CSV", "path": "unused.csv"},
 "target": {"name": "daily_revenue", "format": "ICEBERG", "catalog": {"identifier": "shop", "namespace": "marts"}}}}`)
	write("drops/orders_2026-08-01.csv", "order_id,customer_id,amount,ordered_at\n11,1,10.0,2026-08-01 09:00:00\n12,2,20.0,2026-08-01 10:00:00\n")
	// The test binary runs as ldp when called by that name (testscript.Main).
	bin := filepath.Join(t.TempDir(), "ldp")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	ldp := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ldp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ldp("run", "orders.json", "--window", "2026-08-01/2026-08-02")
	if out := ldp("dbt", "build", "shop_dbt", "--window", "2026-08-01/2026-08-02"); !strings.Contains(out, "succeeded, published [iceberg:marts.daily_revenue]") {
		t.Fatalf("dbt build: %s", out)
	}
	if out := ldp("query", "revenue.json", "SELECT revenue, orders FROM daily_revenue"); !strings.Contains(out, "30") {
		t.Errorf("the published model: %s", out)
	}
}
