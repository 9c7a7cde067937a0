package pipeline

import (
	"strings"
	"testing"
)

// TestRoutes: the routes made from apis/v1's format lists are each file format and GitHub's
// issues into Iceberg, CSV or Parquet, and Iceberg out to CSV or Parquet.
func TestRoutes(t *testing.T) {
	var got []string
	for _, r := range Routes() {
		got = append(got, r.String())
	}
	want := "CSV -> CSV, CSV -> ICEBERG, CSV -> PARQUET, GITHUB -> CSV, GITHUB -> ICEBERG, GITHUB -> PARQUET, ICEBERG -> CSV, ICEBERG -> PARQUET, JSON -> CSV, JSON -> ICEBERG, JSON -> PARQUET, PARQUET -> CSV, PARQUET -> ICEBERG, PARQUET -> PARQUET"
	if s := strings.Join(got, ", "); s != want {
		t.Errorf("routes:\n%s\nwant\n%s", s, want)
	}
}
