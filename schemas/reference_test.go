package schemas

import (
	"strings"
	"testing"
)

// TestKeyReferenceListsEnums: docs/spec.md names the values a closed key allows, whether the
// schema writes them as literals, a pattern of words or a check's name.
func TestKeyReferenceListsEnums(t *testing.T) {
	ref, err := KeyReference(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| `Pipeline.metadata.window.size` | string: one of `week`, `day`, `hour`, `15m` |",
		"| `Pipeline.metadata.source.format` | string: one of `csv`, `parquet`, `json`, `iceberg`, `github` (any case) |",
		"| `Pipeline.metadata.target.write_mode` | string: one of `append`, `overwrite`, `upsert` (any case) |",
		"| `Pipeline.metadata.target.partition_by[].transform` | string: one of `identity`, `year`, `month`, `day`, `hour`, `bucket[N]`, `truncate[N]` |",
		"| `Pipeline.metadata.quality.on_failure` | string: one of `fail`, `warn` |",
		"| `Pipeline.metadata.quality[].check` | string: one of `row_count`, `not_null`,",
		"| `Workflow.tasks[].dbt.command` | string: one of `build`, `test` |",
		"| `Pipeline.metadata.window` | string or object; the string: one of `none` |",
	} {
		if !strings.Contains(ref, want) {
			t.Errorf("the key reference lacks %q", want)
		}
	}
}
