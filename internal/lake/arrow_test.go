package lake

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

func icebergSelect(cols ...string) []table.ScanOption {
	return []table.ScanOption{table.WithSelectedFields(cols...)}
}

// arrowRows formats an Arrow table's rows as DuckDB's do in the tests: values joined by |,
// <nil> for null, floats without trailing zeros.
func arrowRows(t *testing.T, at arrow.Table) []string {
	t.Helper()
	tr := array.NewTableReader(at, 1024)
	defer tr.Release()
	var out []string
	for tr.Next() {
		rec := tr.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			parts := make([]string, rec.NumCols())
			for c := 0; c < int(rec.NumCols()); c++ {
				col := rec.Column(c)
				if col.IsNull(r) {
					parts[c] = "<nil>"
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					parts[c] = fmt.Sprint(a.Value(r))
				case *array.Float64:
					parts[c] = fmt.Sprint(a.Value(r))
				case *array.String:
					parts[c] = a.Value(r)
				case *array.LargeString:
					parts[c] = a.Value(r)
				default:
					parts[c] = col.ValueStr(r)
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	return out
}
