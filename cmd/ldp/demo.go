package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/internal/shell"
	"github.com/ldp-dev/ldp/internal/synth"
)

// demoMarker marks a folder the demo made, so a second demo may replace it and nothing else.
const demoMarker = ".ldp-demo"

// demoOptions are the flags and arguments of the command newDemoCmd builds.
type demoOptions struct {
	args    []string
	workdir string
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *demoOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return nil
}

func (o *demoOptions) Run(ctx context.Context, s *streams) error {
	return runDemo(ctx, s, o.workdir)
}

func newDemoCmd(s *streams) *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Tell the whole story of ldp on synthetic data, offline, in under a minute",
		Long: `Generate taxi rides and orders, then walk through ldp one titled step at a time, each with
the command it stands for: load from a spec; append twice (duplicates) and overwrite twice
(idempotent); upsert; a day-partitioned table; checks that pass, then a bad batch held back
before the write; DuckDB SQL; time travel; export to CSV; then daily windows: a three-day
backfill with a bad row on day 3, the fix, the resumed backfill, a schedule tick and the run
history. It ends with the commands to explore what it built.`,
		Example: `  ldp demo
  ldp demo --workdir /tmp/ldp-demo`,
		Args: cobra.NoArgs,
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.workdir, "workdir", "ldp-demo", "the folder to build the demo in (a folder an earlier demo made is replaced)")
	return cmd
}

type demo struct {
	ctx  context.Context
	s    *streams
	step int
}

func (d *demo) title(t string) {
	d.step++
	fmt.Fprintf(d.s.Out, "\n== %d. %s\n", d.step, t)
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.s.Out, "   "+format+"\n", args...)
}

// ldp runs a command as a user would type it, shows it and its output, and checks its exit code.
func (d *demo) ldp(want int, args ...string) error {
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = shell.Quote(a)
	}
	fmt.Fprintf(d.s.Out, "   $ ldp %s\n", strings.Join(shown, " "))
	var out bytes.Buffer
	code := run(d.ctx, args, &streams{In: d.s.In, Out: &out, Err: &out, Getenv: d.s.Getenv})
	for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(d.s.Out, "     %s\n", l)
		}
	}
	if code != 0 {
		fmt.Fprintf(d.s.Out, "     (exit %d)\n", code)
	}
	if code != want {
		return fmt.Errorf("demo step %d: ldp %s exited %d, want %d", d.step, strings.Join(args, " "), code, want)
	}
	return nil
}

func (d *demo) write(name, body string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(body), 0o644)
}

func prepareWorkdir(dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, demoMarker)); err != nil {
			return fmt.Errorf("%s exists and was not made by ldp demo: pass --workdir with a new folder", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, demoMarker), []byte("made by ldp demo\n"), 0o644)
}

func runDemo(ctx context.Context, s *streams, workdir string) error {
	if err := prepareWorkdir(workdir); err != nil {
		return err
	}
	abs, _ := filepath.Abs(workdir)
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := os.Chdir(workdir); err != nil {
		return err
	}
	defer os.Chdir(wd)
	start := time.Now()
	d := &demo{ctx: ctx, s: s}
	fmt.Fprintf(s.Out, "ldp demo in %s: a lakehouse on your laptop, one step at a time.\n", abs)
	for _, step := range []func(*demo) error{demoLoad, demoModes, demoPartitioned, demoChecks, demoSQL, demoTimeTravel, demoExport, demoWindows, demoSchedule, demoApply} {
		if err := step(d); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.Out, "\nDone in %.1fs. Explore what the demo built, from here:\n", time.Since(start).Seconds())
	bin := "ldp"
	if _, err := exec.LookPath("ldp"); err != nil {
		if exe, err := os.Executable(); err == nil {
			bin = exe // not on the PATH (make demo): name the one that ran
		}
	}
	for _, l := range exploreLines(bin, workdir) {
		fmt.Fprintf(s.Out, "  %s\n", l)
	}
	return nil
}

// exploreLines are the commands the demo ends with, each of which works on its own from the
// folder the demo was started in: the paths lead into workdir rather than a cd before each.
func exploreLines(bin, workdir string) []string {
	in := func(p string) string { return shell.Quote(filepath.Join(workdir, p)) }
	return []string{
		bin + " query " + in("rides.json") + ` "SELECT city, count(*), round(avg(fare), 2) FROM rides GROUP BY city"`,
		bin + " snapshots " + in("rides.json"),
		bin + " commits " + in("daily/orders.json"),
		bin + " runs " + in("daily/workflow.json") + " --attempts",
		bin + " diff -f " + in("daily") + " --from 2026-08-01 --to 2026-08-06",
		bin + " schedule list " + in("daily") + " --now 2026-08-06T03:00:00Z",
		bin + " ui " + shell.Quote(workdir) + "   # the status page, on http://127.0.0.1:8080/",
	}
}

const demoCatalog = `"catalog": {"identifier": "demo", "warehouse_path": "warehouse"}`

func demoLoad(d *demo) error {
	d.title("Generate 1,000 synthetic taxi rides (fixed seed) and load them from a spec")
	day0 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	synth.WriteRides(&b, 1000, 42, day0, 2, 1)
	if err := d.write("data/rides.csv", b.String()); err != nil {
		return err
	}
	d.say("wrote data/rides.csv: 1,000 rides over 1 and 2 September 2026")
	if err := d.write("rides_raw.json", `{"identifier": "rides_raw", "metadata": {
  "source": {"name": "rides", "format": "CSV", "path": "data/rides.csv"},
  "target": {"name": "rides_raw", "format": "ICEBERG", "write_mode": "append", `+demoCatalog+`}}}`); err != nil {
		return err
	}
	return d.ldp(0, "validate", ".")
}

func demoModes(d *demo) error {
	d.title("Append twice: the rows are there twice (append is not idempotent)")
	for i := 0; i < 2; i++ {
		if err := d.ldp(0, "run", "rides_raw.json"); err != nil {
			return err
		}
	}
	if err := d.ldp(0, "query", "rides_raw.json", "SELECT count(*) AS rows, count(DISTINCT ride_id) AS rides FROM rides_raw"); err != nil {
		return err
	}
	d.title("Overwrite twice: one copy, however often it runs")
	if err := d.write("rides.json", `{"identifier": "rides", "metadata": {
  "source": {"name": "rides", "format": "CSV", "path": "data/rides.csv"},
  "target": {"name": "rides", "format": "ICEBERG", "write_mode": "overwrite", `+demoCatalog+`}}}`); err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		if err := d.ldp(0, "run", "rides.json"); err != nil {
			return err
		}
	}
	if err := d.ldp(0, "query", "rides.json", "SELECT count(*) AS rows, count(DISTINCT ride_id) AS rides FROM rides"); err != nil {
		return err
	}
	d.title("Upsert: 100 rides change their fare, 100 new rides arrive; one row per ride")
	var b bytes.Buffer
	synth.WriteRides(&b, 200, 7, time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC), 1, 901)
	if err := d.write("data/rides_update.csv", b.String()); err != nil {
		return err
	}
	if err := d.write("rides_update.json", `{"identifier": "rides_update", "metadata": {
  "source": {"name": "rides", "format": "CSV", "path": "data/rides_update.csv"},
  "target": {"name": "rides", "format": "ICEBERG", "write_mode": "upsert", "join_cols": ["ride_id"], `+demoCatalog+`}}}`); err != nil {
		return err
	}
	if err := d.ldp(0, "run", "rides_update.json"); err != nil {
		return err
	}
	return d.ldp(0, "query", "rides.json", "SELECT count(*) AS rows, count(DISTINCT ride_id) AS rides, max(ride_id) AS last_ride FROM rides")
}

const checkedRides = `"quality": {"on_failure": "fail", "checks": [
    {"check": "row_count", "min": 1},
    {"check": "not_null", "columns": ["ride_id", "pickup_ts"]},
    {"check": "unique", "columns": ["ride_id"]},
    {"check": "accepted_values", "column": "city", "values": ["NYC", "BKK"]},
    {"check": "range", "column": "fare", "min": 0},
    {"check": "freshness", "column": "pickup_ts", "max_age_hours": 48, "now": "2026-09-03T00:00:00Z"},
    {"check": "schema", "columns": {"ride_id": "int64", "fare": "double"}}]}`

func demoPartitioned(d *demo) error {
	d.title("A day-partitioned table, checked by all seven checks before the write")
	if err := d.write("rides_by_day.json", `{"identifier": "rides_by_day", "metadata": {
  "source": {"name": "rides", "format": "CSV", "path": "data/rides.csv"},
  "target": {"name": "rides_by_day", "format": "ICEBERG", "write_mode": "overwrite", `+demoCatalog+`,
             "partition_by": [{"column": "pickup_ts", "transform": "day"}]},
  `+checkedRides+`}}`); err != nil {
		return err
	}
	return d.ldp(0, "run", "rides_by_day.json")
}

func demoChecks(d *demo) error {
	d.title("A bad batch (a repeated ride and a negative fare) is held back before the write")
	raw, err := os.ReadFile("data/rides.csv")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	lines[2] = strings.Replace(lines[2], "2,", "1,", 1) // ride 2 becomes a second ride 1
	f := strings.Split(lines[3], ",")
	f[6] = "-12.50"
	lines[3] = strings.Join(f, ",")
	if err := d.write("data/rides_bad.csv", strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	if err := d.write("rides_bad.json", `{"identifier": "rides_by_day", "metadata": {
  "source": {"name": "rides", "format": "CSV", "path": "data/rides_bad.csv"},
  "target": {"name": "rides_by_day", "format": "ICEBERG", "write_mode": "overwrite", `+demoCatalog+`,
             "partition_by": [{"column": "pickup_ts", "transform": "day"}]},
  `+checkedRides+`}}`); err != nil {
		return err
	}
	if err := d.ldp(3, "run", "rides_bad.json"); err != nil {
		return err
	}
	d.say("exit 3: a data gate held the batch back; the table still has one snapshot:")
	return d.ldp(0, "snapshots", "rides_by_day.json")
}

func demoSQL(d *demo) error {
	d.title("DuckDB SQL over the Iceberg table")
	return d.ldp(0, "query", "rides_by_day.json", "SELECT city, pickup_ts::DATE AS day, count(*) AS rides, round(sum(fare), 2) AS fares FROM rides_by_day GROUP BY 1, 2 ORDER BY 1, 2")
}

func demoTimeTravel(d *demo) error {
	d.title("Time travel: the table as of its first snapshot, before the upsert")
	if err := d.ldp(0, "snapshots", "rides.json"); err != nil {
		return err
	}
	var out bytes.Buffer
	if code := run(d.ctx, []string{"snapshots", "rides.json", "-o", "json"}, &streams{Out: &out, Err: &out, Getenv: d.s.Getenv}); code != 0 {
		return fmt.Errorf("demo: ldp snapshots -o json exited %d", code)
	}
	var snaps []struct {
		ID string `json:"snapshot_id"`
	}
	if err := json.Unmarshal(out.Bytes(), &snaps); err != nil || len(snaps) == 0 {
		return fmt.Errorf("demo: ldp snapshots -o json printed no snapshot: %v", err)
	}
	first := snaps[0].ID
	return d.ldp(0, "query", "rides.json", "SELECT count(*) AS rows, max(ride_id) AS last_ride FROM rides", "--snapshot", first)
}

func demoExport(d *demo) error {
	d.title("Export the table back to CSV")
	if err := d.write("export.json", `{"identifier": "export", "metadata": {
  "source": {"name": "rides_by_day", "format": "ICEBERG", `+demoCatalog+`},
  "target": {"name": "rides_export", "format": "CSV", "path": "exports/rides.csv"}}}`); err != nil {
		return err
	}
	if err := d.ldp(0, "run", "export.json"); err != nil {
		return err
	}
	d.say("wrote exports/rides.csv")
	return nil
}

func orders(day string, amounts ...string) string {
	var b strings.Builder
	b.WriteString("order_id,ordered_at,amount\n")
	for i, a := range amounts {
		fmt.Fprintf(&b, "%s%02d,%s %02d:30:00,%s\n", strings.ReplaceAll(day, "-", ""), i, day, 9+i*3, a)
	}
	return b.String()
}

func demoWindows(d *demo) error {
	d.title("Daily windows: a workflow backfilled over three days; day 3 has a bad row")
	files := map[string]string{
		"daily/orders.json": `{"identifier": "orders", "metadata": {
  "window": {"size": "day", "column": "ordered_at"},
  "source": {"name": "orders", "format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
  "target": {"name": "orders", "format": "ICEBERG", "write_mode": "overwrite", ` + demoCatalog + `},
  "quality": [{"check": "row_count", "min": 1}, {"check": "unique", "columns": ["order_id"]}, {"check": "range", "column": "amount", "min": 0}]}}`,
		"daily/revenue.json": `{"identifier": "revenue", "metadata": {"window": {"size": "day"},
  "source": {"name": "orders", "format": "CSV", "path": "drops/orders_{window_start:%Y-%m-%d}.csv"},
  "transform": {"sql": "SELECT min(ordered_at)::DATE AS day, count(*) AS orders, sum(amount) AS revenue FROM source"},
  "target": {"name": "revenue", "format": "ICEBERG", ` + demoCatalog + `}}}`,
		"daily/workflow.json": `{"apiVersion": "ldp/v1", "kind": "Workflow", "identifier": "daily",
  "metadata": {"schedule": "5 2 * * *", "window": {"size": "day"}, "start": "2026-08-01", "end": "2026-08-06"},
  "tasks": [{"id": "orders", "pipeline": "orders.json"}, {"id": "revenue", "pipeline": "revenue.json", "depends_on": ["orders"]}]}`,
		"daily/drops/orders_2026-08-01.csv": orders("2026-08-01", "10.00", "25.50", "8.25"),
		"daily/drops/orders_2026-08-02.csv": orders("2026-08-02", "12.00", "30.00"),
		"daily/drops/orders_2026-08-03.csv": orders("2026-08-03", "19.90", "-5.00"),
	}
	for name, body := range files {
		if err := d.write(name, body); err != nil {
			return err
		}
	}
	// diff exits 2: something would run.
	if err := d.ldp(2, "diff", "-f", "daily/workflow.json", "--from", "2026-08-01", "--to", "2026-08-04"); err != nil {
		return err
	}
	if err := d.ldp(3, "backfill", "daily/workflow.json", "--from", "2026-08-01", "--to", "2026-08-04"); err != nil {
		return err
	}
	d.say("exit 3: day 3 was held back and revenue is upstream_failed; days 1 and 2 are published.")
	d.title("Fix day 3 and run the same backfill again: only day 3 runs")
	if err := d.write("daily/drops/orders_2026-08-03.csv", orders("2026-08-03", "19.90", "5.00")); err != nil {
		return err
	}
	if err := d.ldp(0, "backfill", "daily/workflow.json", "--from", "2026-08-01", "--to", "2026-08-04"); err != nil {
		return err
	}
	return d.ldp(0, "backfill", "daily/workflow.json", "--from", "2026-08-01", "--to", "2026-08-04")
}

func demoSchedule(d *demo) error {
	d.title("A new day's drop lands; a schedule tick at 02:05 on 5 August runs 4 August")
	if err := d.write("daily/drops/orders_2026-08-04.csv", orders("2026-08-04", "42.00")); err != nil {
		return err
	}
	if err := d.ldp(0, "schedule", "tick", "daily", "--now", "2026-08-05T02:05:00Z"); err != nil {
		return err
	}
	if err := d.ldp(0, "commits", "daily/orders.json"); err != nil {
		return err
	}
	d.title("The run history, from the ledger")
	return d.ldp(0, "runs", "daily/workflow.json", "--limit", "8")
}

func demoApply(d *demo) error {
	d.title("Declare, then reconcile: diff says what would run, apply runs it, diff says it is done")
	if err := d.write("daily/drops/orders_2026-08-05.csv", orders("2026-08-05", "17.00", "9.50")); err != nil {
		return err
	}
	window := []string{"--from", "2026-08-01", "--to", "2026-08-06"}
	if err := d.ldp(2, append([]string{"diff", "-f", "daily"}, window...)...); err != nil {
		return err
	}
	d.say("exit 2: one window would run (5 August); the four before are done and stay as they are.")
	d.say("The workflow's start and end are where its drops start and end: ldp status and ldp ui expect these five days, no more.")
	if err := d.ldp(0, append([]string{"apply", "-f", "daily"}, window...)...); err != nil {
		return err
	}
	return d.ldp(0, append([]string{"diff", "-f", "daily"}, window...)...)
}
