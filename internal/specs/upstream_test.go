package specs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config is a dataset config writing table name, with window (a JSON value or "") and upstream
// entries (JSON objects).
func config(name, window, target string, upstream ...string) string {
	md := `"source": {"format": "CSV", "path": "data/` + name + `.csv"}, "target": ` + target
	if window != "" {
		md += `, "window": ` + window
	}
	if len(upstream) > 0 {
		md += `, "upstream": [` + strings.Join(upstream, ", ") + `]`
	}
	return `{"identifier": "` + name + `", "metadata": {` + md + `}}`
}

func iceberg(name string) string {
	return `{"name": "` + name + `", "format": "ICEBERG", "catalog": {"identifier": "shop"}}`
}

// TestUpstreamProblems: each wrong upstream is reported at its entry, with the file and the fix.
func TestUpstreamProblems(t *testing.T) {
	hourly := `{"size": "hour", "column": "ts"}`
	daily := `{"size": "day", "column": "ts"}`
	for _, tc := range []struct {
		name  string
		files map[string]string
		check string
		want  string // a problem of check's, at metadata.upstream[0].pipeline (or tasks[0]...)
		field string
	}{
		{name: "missing file", files: map[string]string{"daily.json": config("daily", daily, iceberg("daily"), `{"pipeline": "hourly.json"}`)},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstream "hourly.json" not found (looked for `},
		{name: "not windowed", files: map[string]string{
			"daily.json":  config("daily", daily, iceberg("daily"), `{"pipeline": "hourly.json"}`),
			"hourly.json": config("hourly", `"none"`, iceberg("hourly"))},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstream "hourly.json" has no window size (metadata.window.size)`},
		{name: "not an iceberg table", files: map[string]string{
			"daily.json":  config("daily", daily, iceberg("daily"), `{"pipeline": "hourly.json"}`),
			"hourly.json": config("hourly", hourly, `{"name": "out", "format": "CSV", "path": "out.csv"}`)},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstream "hourly.json" writes a CSV file, not an Iceberg table`},
		{name: "itself", files: map[string]string{"daily.json": config("daily", daily, iceberg("daily"), `{"pipeline": "./daily.json"}`)},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstream "./daily.json" is this dataset config itself: a window cannot wait for itself; remove the entry`},
		{name: "a cycle", files: map[string]string{
			"daily.json":  config("daily", daily, iceberg("daily"), `{"pipeline": "hourly.json"}`),
			"hourly.json": config("hourly", hourly, iceberg("hourly"), `{"pipeline": "daily.json"}`)},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstreams wait for each other in a cycle: `},
		{name: "a workflow", files: map[string]string{
			"daily.json": config("daily", daily, iceberg("daily"), `{"pipeline": "wf.json"}`),
			"wf.json":    `{"kind": "Workflow", "identifier": "wf", "tasks": [{"id": "a", "pipeline": "daily.json"}]}`},
			check: "daily.json", field: "metadata.upstream[0].pipeline", want: `upstream "wf.json" is a Workflow; an upstream names a dataset config (a Pipeline)`},
		{name: "a task of the same workflow", files: map[string]string{
			"hourly.json": config("hourly", hourly, iceberg("hourly")),
			"wf.json":     `{"kind": "Workflow", "identifier": "wf", "tasks": [{"id": "h", "pipeline": "hourly.json", "upstream": [{"pipeline": "hourly.json"}]}]}`},
			check: "wf.json", field: "tasks[0].upstream[0].pipeline", want: `upstream "hourly.json" is a task of this workflow: order tasks of one workflow with depends_on, not upstream`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load(filepath.Join(dir, tc.check))
			var inv *InvalidError
			if err == nil || !asInvalid(err, &inv) {
				t.Fatalf("loaded, or not an InvalidError: %v", err)
			}
			for _, p := range inv.Problems {
				if p.File == filepath.Join(dir, tc.check) && p.Field == tc.field && strings.Contains(p.Message, tc.want) {
					if p.Line == 0 {
						t.Errorf("problem %q has no line", p.Message)
					}
					return
				}
			}
			t.Fatalf("no problem %q at %s of %s; got:\n%v", tc.want, tc.field, tc.check, err)
		})
	}
}

// TestUpstreamValid: a daily config over an hourly one, and a workflow task over it, load.
func TestUpstreamValid(t *testing.T) {
	dir := t.TempDir()
	for n, body := range map[string]string{
		"hourly.json": config("hourly", `{"size": "hour", "column": "ts", "timezone": "Asia/Kolkata"}`, iceberg("hourly")),
		"daily.json":  config("daily", `{"size": "day", "column": "ts"}`, iceberg("daily"), `{"pipeline": "hourly.json"}`),
		"weekly.json": config("weekly", `{"size": "week", "column": "ts"}`, iceberg("weekly"), `{"pipeline": "daily.json"}`),
		"wf.json":     `{"kind": "Workflow", "identifier": "wf", "metadata": {"window": {"size": "day"}}, "tasks": [{"id": "w", "pipeline": "weekly.json", "upstream": [{"pipeline": "daily.json"}]}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"daily.json", "weekly.json", "wf.json"} {
		if _, err := Load(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func asInvalid(err error, out **InvalidError) bool {
	e, ok := err.(*InvalidError)
	*out = e
	return ok
}
