package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/report"
	"github.com/ldp-dev/ldp/controllers/web"
)

// TestPastedCommandsRunNothing: a spec named o$(id>PWNED).json; the commands ldp schedule
// list, ldp status and the page print for it, pasted into a real shell, hand the shell the
// spec's name as one word and run nothing (issue 33, point 11).
func TestPastedCommandsRunNothing(t *testing.T) {
	dir := t.TempDir()
	name := "o$(id>PWNED)`id>PWNED2`;id>PWNED3 'x'.json"
	spec := filepath.Join("shop", name)
	os.MkdirAll(filepath.Join(dir, "shop", "drops"), 0o755)
	os.WriteFile(filepath.Join(dir, spec), []byte(`{"identifier": "orders", "metadata": {"schedule": "5 2 * * *", "window": {"size": "day"},
		"source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
		"target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "shop", "drops", "orders_2026-08-04.csv"), []byte("order_id,amount\n1,10\n"), 0o644)
	if code, out, errs := runInProcess(t, dir, nil, "schedule", "tick", "shop", "--now", "2026-08-05T02:05:00Z"); code != 0 {
		t.Fatalf("tick: %d\n%s%s", code, out, errs)
	}
	const now = "2026-08-08T03:00:00Z"
	fill := []string{"backfill", spec, "--from", "2026-08-05T00:00:00Z", "--to", "2026-08-07T00:00:00Z"}

	var printed []struct {
		where string
		cmd   string
		want  []string
	}
	add := func(where, cmd string, want []string) {
		printed = append(printed, struct {
			where string
			cmd   string
			want  []string
		}{where, cmd, want})
	}
	_, list, _ := runInProcess(t, dir, nil, "schedule", "list", "shop", "--now", now)
	m := regexp.MustCompile(`(?m)^  fill with   (.*)$`).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("ldp schedule list prints no fill command:\n%s", list)
	}
	add("ldp schedule list", m[1], fill)
	_, status, _ := runInProcess(t, dir, nil, "status", "shop", "--now", now)
	m = regexp.MustCompile(`(?m)^  missed      \d+ windows: (.*)$`).FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("ldp status prints no backfill command:\n%s", status)
	}
	add("ldp status", m[1], fill)

	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	srv := httptest.NewServer((&web.Server{Paths: []string{"shop"}, Reconciler: &controllers.Reconciler{}, Now: func() time.Time { return mustTime(t, now) }}).Handler())
	defer srv.Close()
	var rep report.StatusReport
	getJSON(t, srv.URL+"/api/status", &rep)
	if len(rep.Objects) != 1 || rep.Objects[0].Backfill == "" {
		t.Fatalf("the page's report has no backfill command: %+v", rep.Objects)
	}
	add("the page's missed windows", rep.Objects[0].Backfill, fill)
	var cell report.CellDetail
	getJSON(t, srv.URL+"/api/cell?"+url.Values{"file": {spec}, "start": {"2026-08-04T00:00:00Z"}, "task": {"orders"}}.Encode(), &cell)
	add("the page's run it again", cell.Command, []string{"backfill", spec, "--from", "2026-08-04T00:00:00Z", "--to", "2026-08-05T00:00:00Z", "--replace"})

	for _, p := range printed {
		words, ok := strings.CutPrefix(p.cmd, "ldp ")
		if !ok {
			t.Errorf("%s prints %q, not an ldp command", p.where, p.cmd)
			continue
		}
		// The shell runs the pasted line with printf in ldp's place: one argument a line.
		sh := exec.Command("sh", "-c", `printf '%s\n' `+words)
		sh.Dir = dir
		out, err := sh.Output()
		if err != nil {
			t.Errorf("%s: sh -c %q: %v", p.where, words, err)
		}
		if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, p.want) {
			t.Errorf("%s prints %s\nthe shell reads it as %q, want %q", p.where, p.cmd, got, p.want)
		}
	}
	for _, f := range []string{"PWNED", "PWNED2", "PWNED3"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a pasted command ran code: %s was created", f)
		}
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
