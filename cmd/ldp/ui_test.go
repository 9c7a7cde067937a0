package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// statusFolder is a daily workflow over ldp init's orders, backfilled over 1-15 August with a
// negative amount on 7 August: 13 windows published, 7 August blocked by the range check and
// its maintenance task upstream_failed, and every day since (to the schedule's last fire)
// missing.
func statusFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ldpOK(t, "init", "--now", "2026-08-15T12:00:00Z", dir)
	data := filepath.Join(dir, "data", "orders.csv")
	b, _ := os.ReadFile(data)
	bad := regexp.MustCompile(`(?m)^(33,2026-08-07 [0-9:]+),[0-9.]+$`).ReplaceAll(b, []byte("$1,-4.00"))
	os.WriteFile(data, bad, 0o644)
	// The config runs as the workflow's task only: without its own schedule it is no object.
	spec := filepath.Join(dir, "orders.json")
	sb, _ := os.ReadFile(spec)
	os.WriteFile(spec, []byte(strings.Replace(string(sb), `"schedule": "5 2 * * *",`, "", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "workflow.json"), []byte(`{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "shop_daily",
  "metadata": {"schedule": "5 2 * * *", "window": {"size": "day", "timezone": "Europe/Paris"}},
  "tasks": [{"id": "orders", "pipeline": "orders.json"},
            {"id": "tidy", "depends_on": ["orders"], "maintain": {"config": "orders.json", "expire": 30}}]}`), 0o644)
	var out bytes.Buffer
	if code := run(context.Background(), []string{"backfill", filepath.Join(dir, "workflow.json"), "--from", "2026-08-01", "--to", "2026-08-15"}, &streams{Out: &out, Err: &out, Getenv: os.Getenv}); code != 3 {
		t.Fatalf("backfill exited %d, want 3 (one window held back):\n%s", code, out.String())
	}
	return dir
}

func ldpOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), args, &streams{Out: &out, Err: &errb, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("ldp %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// gridDays is how many columns statusFolder's workflow has: every Paris day from 1 August to
// the window its daily 02:05 schedule last fired for.
func gridDays(t *testing.T) int {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	fired := time.Now().In(paris).Add(-(2*time.Hour + 5*time.Minute))
	end := time.Date(fired.Year(), fired.Month(), fired.Day(), 0, 0, 0, 0, paris)
	n := 0
	for d := time.Date(2026, 8, 1, 0, 0, 0, 0, paris); d.Before(end); d = d.AddDate(0, 0, 1) {
		n++
	}
	return n
}

// serveUI starts ldp ui on the folder as a process and returns its base URL.
func serveUI(t *testing.T, dirs ...string) string {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(ldpCommand(t), append(append([]string{"ui"}, dirs...), "--addr", addr)...)
	log := startServer(t, cmd)
	base := "http://" + addr
	waitFor(t, "ldp ui to answer", 30*time.Second, func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	}, log)
	return base
}

// retryFolder holds two daily configs a watcher ran once: late failed (its file is not there)
// and its retry is due hours later, since a watcher does not wait out a backoff; killed
// published yesterday's window, and a run of the day before was killed mid-run (unfinished).
func retryFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	spec := func(id, path string) string {
		return `{"identifier": "` + id + `", "metadata": {"schedule": "5 2 * * *", "window": {"size": "day"},
		  "retries": {"max_attempts": 3, "delay_s": 36000, "backoff": 1},
		  "source": {"format": "CSV", "path": "` + path + `"},
		  "target": {"name": "` + id + `", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`
	}
	os.WriteFile(filepath.Join(dir, "late.json"), []byte(spec("late", "drops/late_{window_start:%Y-%m-%d}.csv")), 0o644)
	os.MkdirAll(filepath.Join(dir, "killed"), 0o755)
	os.WriteFile(filepath.Join(dir, "killed", "rows.csv"), []byte("id,amount\n1,2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "killed", "killed.json"), []byte(spec("killed", "rows.csv")), 0o644)
	// The watcher tries late's window, finds no file (retriable) and leaves its retry for later.
	l := &lakeDir{dir: dir, ldp: ldpCommand(t)}
	w := l.cmd(nil, "watch", ".", "--resync", "1h")
	logs := startServer(t, w)
	waitFor(t, "the watcher to leave a retry for later", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, ".ldp", "events.jsonl"))
		return strings.Contains(string(b), "retry_at")
	}, logs)
	w.Process.Signal(syscall.SIGTERM)
	w.Wait()
	// A run of killed's window before the one the watcher ran is killed between its extract
	// and its checks. The watcher ran the window of the last 02:05 (UTC) fire, the day before
	// that fire's day: between midnight and 02:05 that is two days back, not one.
	before := time.Now().UTC().Add(-(2*time.Hour + 5*time.Minute)).Truncate(24*time.Hour).AddDate(0, 0, -2)
	win := before.Format(time.RFC3339) + "/" + before.AddDate(0, 0, 1).Format(time.RFC3339)
	if code, _, errs := l.run(t, []string{"LDP_FAULT=extracted:kill"}, "workflow", "run", filepath.Join("killed", "killed.json"), "--window", win); code == 0 {
		t.Fatalf("the killed run exited 0: %s", errs)
	}
	return dir
}

// TestStatusAPIAndMetrics: /api/status is ldp status -o json; each row's cells follow the
// ledger and the keys; the ETag makes an unchanged poll a 304; /metrics parses and counts the
// folder's windows by state.
func TestStatusAPIAndMetrics(t *testing.T) {
	t.Parallel()
	dir := statusFolder(t)
	retry := retryFolder(t)
	base := serveUI(t, dir, retry)
	resp, err := http.Get(base + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Objects []struct {
			Name     string
			Summary  map[string]int
			Windows  struct{ Count int }
			NextFire string `json:"next_fire"`
			Waiting  *struct {
				Window  string
				ReadyAt string `json:"ready_at"`
				RunsAt  string `json:"runs_at"`
			}
			Tasks []struct {
				ID    string
				Cells []struct {
					S string
					N int
				}
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	days := gridDays(t)
	missing := strconv.Itoa(days - 14)
	if len(rep.Objects) != 3 || rep.Objects[0].Windows.Count != days {
		t.Fatalf("status: %+v", rep)
	}
	rows := map[string]string{}
	for _, ob := range rep.Objects {
		for _, tr := range ob.Tasks {
			var runs []string
			for _, c := range tr.Cells {
				runs = append(runs, c.S+"*"+strconv.Itoa(c.N))
			}
			rows[ob.Name+"/"+tr.ID] = strings.Join(runs, " ")
		}
	}
	want := map[string]string{
		"shop_daily/orders": "published*6 blocked*1 published*7 missing*" + missing,
		"shop_daily/tidy":   "published*6 upstream_failed*1 published*7 missing*" + missing,
		"late/late":         "retrying*1",
		"killed/killed":     "unfinished*1 published*1",
	}
	for k, v := range want {
		if rows[k] != v {
			t.Errorf("row %s: %q, want %q", k, rows[k], v)
		}
	}
	if s := rep.Objects[0].Summary; s["published"] != 13 || s["blocked"] != 1 || s["missing"] != days-14 {
		t.Errorf("summary %v", s)
	}
	// The window not finished yet (the Paris day that holds now, or the next) is waiting, not
	// missing: it may run at its end, and the fire that runs it is the next or the one after.
	if w := rep.Objects[0].Waiting; w == nil {
		t.Errorf("shop_daily has no waiting window: %+v", rep.Objects[0])
	} else {
		start, end, _ := strings.Cut(w.Window, "/")
		s, _ := time.Parse(time.RFC3339, start)
		e, _ := time.Parse(time.RFC3339, end)
		runs, _ := time.Parse(time.RFC3339, w.RunsAt)
		if now := time.Now(); w.ReadyAt != end || !e.After(now) || s.After(now.Add(24*time.Hour)) || runs.Before(e) || w.RunsAt < rep.Objects[0].NextFire {
			t.Errorf("shop_daily's waiting window %+v (next fire %s): want the day not finished, ready at its end, run by a fire after it", *w, rep.Objects[0].NextFire)
		}
	}
	// The same report as ldp status -o json prints.
	var cli struct {
		Objects []struct{ Summary map[string]int }
	}
	json.Unmarshal([]byte(ldpOK(t, "status", dir, retry, "-o", "json")), &cli)
	if len(cli.Objects) != 3 || cli.Objects[0].Summary["blocked"] != 1 {
		t.Errorf("ldp status -o json: %+v", cli)
	}
	req, _ := http.NewRequest("GET", base+"/api/status", nil)
	req.Header.Set("If-None-Match", etag)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotModified {
		t.Errorf("an unchanged poll: %v %v, want 304", resp.Status, err)
	}
	// The blocked cell's detail names the failing check and the command that runs it again.
	resp, err = http.Get(base + "/api/cell?file=" + filepath.Join(dir, "workflow.json") + "&start=2026-08-06T22:00:00Z&task=orders")
	if err != nil {
		t.Fatal(err)
	}
	var cell struct {
		State, Command string
		Checks         []struct {
			Name   string
			Passed bool
		}
		Ledger []string
	}
	json.NewDecoder(resp.Body).Decode(&cell)
	resp.Body.Close()
	if cell.State != "blocked" || len(cell.Checks) != 3 || cell.Checks[2].Name != "range(amount)" || cell.Checks[2].Passed || len(cell.Ledger) == 0 ||
		cell.Command != "ldp backfill "+filepath.Join(dir, "workflow.json")+" --from 2026-08-06T22:00:00Z --to 2026-08-07T22:00:00Z" {
		t.Errorf("blocked cell: %+v", cell)
	}
	// /metrics, parsed as Prometheus parses it.
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	got := map[string]float64{}
	for _, m := range families["ldp_windows"].GetMetric() {
		labels := model.LabelSet{}
		for _, l := range m.GetLabel() {
			labels[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
		}
		got[string(labels["object"])+"/"+string(labels["state"])] = m.GetGauge().GetValue()
	}
	if got["shop_daily/published"] != 13 || got["shop_daily/blocked"] != 1 || got["shop_daily/missing"] != float64(days-14) {
		t.Errorf("ldp_windows: %v", got)
	}
}

// findChromium finds Debian's chromium (what .ci/run installs) or another Chrome.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium's tab, closed when the test ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	chrome := findChromium()
	needProgram(t, chrome != "", "chromium", "apt-get install chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 800))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	return ctx
}

// screenshot saves the page under the test's temp folder, and under LDP_SCREENSHOT_DIR when
// it is set, to be looked at.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	os.WriteFile(path, shot, 0o644)
	if d := os.Getenv("LDP_SCREENSHOT_DIR"); d != "" {
		os.WriteFile(filepath.Join(d, name), shot, 0o644)
	}
	t.Logf("screenshot: %s", path)
}

// TestStatusPageInABrowser loads the page ldp ui serves in headless Chromium, reads the grid
// from the DOM, opens the blocked cell, filters by state, and saves a screenshot.
func TestStatusPageInABrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := statusFolder(t)
	base := serveUI(t, dir)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`.row[data-task="orders"] .seg.blocked`))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	grid, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.row')].map(r => r.dataset.task + ': ' + [...r.querySelectorAll('.seg')].map(s => s.dataset.state + '*' + s.style.flexGrow + s.textContent).join(' '))`))
	if err != nil {
		t.Fatalf("read the grid: %v", err)
	}
	missing := strconv.Itoa(gridDays(t) - 14)
	want := []string{"orders: published*6✓ blocked*1! published*7✓ missing*" + missing + "·", "tidy: published*6✓ upstream_failed*1↑ published*7✓ missing*" + missing + "·"}
	if strings.Join(grid, "\n") != strings.Join(want, "\n") {
		t.Errorf("the grid:\n%s\nwant:\n%s", strings.Join(grid, "\n"), strings.Join(want, "\n"))
	}
	// Times in the spec's zone beside UTC: the axis names the zone (UTC in its title), a cell's
	// label both; the window not finished yet is said apart, as waiting.
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector('.axis span').textContent, document.querySelector('.axis span').title,
	  document.querySelector('.row[data-task="orders"] .seg.blocked').title, (document.querySelector('.meta.waiting') || {}).textContent || ""]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 4 || texts[0] != "2026-08-01, 00:00 Europe/Paris" || texts[1] != "2026-07-31T22:00:00Z" ||
		texts[2] != "orders 2026-08-07, 00:00 (Europe/Paris, 2026-08-06T22:00:00Z UTC): blocked" ||
		!strings.HasPrefix(texts[3], "waiting: ") || !strings.Contains(texts[3], "is not finished; it may run at ") || !strings.Contains(texts[3], ", the schedule runs it at ") {
		t.Errorf("the axis, a cell's label and the waiting line: %q", texts)
	}
	screenshot(t, ctx, "grid.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.row[data-task="orders"] .seg.blocked`)), chromedp.WaitVisible(chromedp.CSS(`#detail .command`))); err != nil {
		t.Fatalf("open the blocked cell: %v", err)
	}
	detail, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#detail-body`)))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "status.png")
	for _, want := range []string{"blocked", "range(amount)", "FAILED", "ldp backfill " + filepath.Join(dir, "workflow.json") + " --from 2026-08-06T22:00:00Z --to 2026-08-07T22:00:00Z"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the blocked cell's detail lacks %q:\n%s", want, detail)
		}
	}
	// A filter filters: only the rows with a blocked cell remain.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("close")), chromedp.SetValue(chromedp.ID("f-state"), "blocked")); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementById('f-state').dispatchEvent(new Event('input')); document.querySelectorAll('.row').length`))
	if err != nil || rows != 1 {
		t.Errorf("filtered to blocked: %d rows (%v), want 1", rows, err)
	}
}

// TestDemoStatusPage is the page over what ldp demo built, as its last Explore line serves it:
// the daily workflow's published days, the third marked as held back before its fix, and the
// tries of that day with the failing check. The demo's data ends on 5 August and so does its
// workflow (metadata.end): after the demo says every window is done, the page counts no
// missing window (it counted every day from August to today as missing).
func TestDemoStatusPage(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	dir := filepath.Join(t.TempDir(), "ldp-demo")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"demo", "--workdir", dir}, &streams{Out: &out, Err: &out, Getenv: os.Getenv}); code != 0 {
		t.Fatalf("ldp demo exited %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "ldp ui "+dir) {
		t.Fatalf("the demo does not end with ldp ui %s:\n%s", dir, out.String())
	}
	text := ldpOK(t, "status", dir)
	workflow := filepath.Join(dir, "daily", "workflow.json")
	for _, want := range []string{
		"daily (" + workflow + "): 5 windows: 5 published\n",
		"  orders         5 published; went wrong before: 2026-08-03T00:00:00Z (blocked)\n",
		"  revenue        5 published; went wrong before: 2026-08-03T00:00:00Z (upstream_failed)\n",
		"  ends        2026-08-06T00:00:00Z: no window after it is expected\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ldp status %s lacks %q:\n%s", dir, want, text)
		}
	}
	if strings.Contains(text, "missing") || strings.Contains(text, "missed") || strings.Contains(text, "next fire") {
		t.Errorf("ldp status %s counts windows after the demo's data ends:\n%s", dir, text)
	}
	base := serveUI(t, dir)
	var rep struct {
		Objects []struct {
			Name    string
			Windows struct{ Count int }
			Summary map[string]int
		}
	}
	resp, err := http.Get(base + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if len(rep.Objects) != 1 || rep.Objects[0].Name != "daily" || rep.Objects[0].Windows.Count != 5 || rep.Objects[0].Summary["missing"] != 0 || rep.Objects[0].Summary["published"] != 5 {
		t.Fatalf("/api/status after the demo: %+v, want 5 windows, all published", rep)
	}
	marked := `.row[data-task="orders"] .seg.marked`
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(marked))); err != nil {
		t.Fatalf("load the page: %v", err)
	}
	grid, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.row')].map(r => r.dataset.task + ': ' + [...r.querySelectorAll('.seg')].map(s => s.dataset.state + '*' + s.style.flexGrow + s.textContent + (s.dataset.earlier ? '(' + s.dataset.earlier + ')' : '')).join(' '))`))
	if err != nil {
		t.Fatalf("read the grid: %v", err)
	}
	want := []string{
		"orders: published*2✓ published*1✓•(blocked) published*2✓",
		"revenue: published*2✓ published*1✓•(upstream_failed) published*2✓",
	}
	if strings.Join(grid, "\n") != strings.Join(want, "\n") {
		t.Errorf("the grid:\n%s\nwant:\n%s", strings.Join(grid, "\n"), strings.Join(want, "\n"))
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#objects`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "5 published · 1 window went wrong before its last try") || regexp.MustCompile(`[0-9]+ missing|missed windows`).MatchString(page) {
		t.Errorf("the page's counts:\n%s", page)
	}
	if !strings.Contains(page, "the schedule ends at 2026-08-06T00:00:00Z: no window after it is expected") || strings.Contains(page, "next fire") {
		t.Errorf("the page does not say why no window after 5 August is expected:\n%s", page)
	}
	screenshot(t, ctx, "demo-grid.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(marked)), chromedp.WaitVisible(chromedp.CSS(`#detail .tries`))); err != nil {
		t.Fatalf("open the marked cell: %v", err)
	}
	tries, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#detail .tries tr[data-try]')].map(r => [...r.cells].slice(0, 2).map(c => c.textContent).join(': '))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(tries) != 2 || tries[0] != "blocked: range(amount): 1 failing rows" || !strings.HasPrefix(tries[1], "published: snapshot ") {
		t.Errorf("the tries of 3 August: %q, want the blocked try and its check, then the published one", tries)
	}
	detail, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#detail-body`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"published (after 2 tries: blocked before)", "ldp backfill " + workflow + " --from 2026-08-03T00:00:00Z --to 2026-08-04T00:00:00Z --replace"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the detail lacks %q:\n%s", want, detail)
		}
	}
	screenshot(t, ctx, "demo.png")
}

// TestCellShowsDroppedRows (issue 33): the page's cell detail says what the window filter left
// out: a window held back by a row with no window value names the null_rows check and the
// count; a published window says how many rows were left for other windows.
func TestCellShowsDroppedRows(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "drops"), 0o755)
	os.WriteFile(filepath.Join(dir, "orders.json"), []byte(`{"identifier": "orders", "metadata": {"schedule": "5 2 * * *",
	  "window": {"size": "day", "column": "ordered_at"},
	  "source": {"format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
	  "target": {"name": "orders", "format": "ICEBERG", "catalog": {"identifier": "shop"}}}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "drops", "orders_2026-08-01.csv"), []byte("order_id,ordered_at\n1,2026-08-01 09:00:00\n2,\n3,\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "drops", "orders_2026-08-02.csv"), []byte("order_id,ordered_at\n4,2026-08-02 09:00:00\n5,2026-08-01 23:59:00\n"), 0o644)
	var out bytes.Buffer
	if code := run(context.Background(), []string{"backfill", filepath.Join(dir, "orders.json"), "--from", "2026-08-01", "--to", "2026-08-03"}, &streams{Out: &out, Err: &out, Getenv: os.Getenv}); code != 3 {
		t.Fatalf("backfill exited %d, want 3 (1 August held back):\n%s", code, out.String())
	}
	base := serveUI(t, dir)
	type cell struct {
		State        string
		RowsRead     int64 `json:"rows_read"`
		RowsKept     int64 `json:"rows_kept"`
		RowsOutside  int64 `json:"rows_outside_window"`
		RowsNoWindow int64 `json:"rows_no_window_value"`
		Checks       []struct {
			Name    string
			Passed  bool
			Failing int64 `json:"failing_rows"`
		}
	}
	get := func(start string) cell {
		resp, err := http.Get(base + "/api/cell?file=" + filepath.Join(dir, "orders.json") + "&start=" + start + "&task=orders")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c cell
		if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
			t.Fatalf("cell %s: %s: %v", start, resp.Status, err)
		}
		return c
	}
	if c := get("2026-08-01T00:00:00Z"); c.State != "blocked" || c.RowsRead != 3 || c.RowsKept != 1 || c.RowsNoWindow != 2 || c.RowsOutside != 0 ||
		len(c.Checks) != 1 || c.Checks[0].Name != "null_rows(ordered_at)" || c.Checks[0].Passed || c.Checks[0].Failing != 2 {
		t.Errorf("the blocked cell: %+v", c)
	}
	if c := get("2026-08-02T00:00:00Z"); c.State != "published" || c.RowsRead != 2 || c.RowsKept != 1 || c.RowsOutside != 1 || c.RowsNoWindow != 0 {
		t.Errorf("the published cell: %+v", c)
	}
}
