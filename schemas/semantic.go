package schemas

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones must resolve the same on a machine without /usr/share/zoneinfo

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/cronx"
	"github.com/ldp-dev/ldp/internal/redact"
)

// checker collects the problems of the rules CUE cannot express. It reads the decoded document
// defensively: a value of the wrong type was already reported by CUE, so it is skipped here.
type checker struct {
	r    *Result
	file string
	out  []Problem
}

func (c *checker) at(path fieldPath, format string, args ...any) {
	l, col := c.r.valuePos(path...)
	c.out = append(c.out, Problem{File: c.file, Line: l, Column: col, Field: path.String(), Message: fmt.Sprintf(format, args...)})
}

func semantic(r *Result, file string) []Problem {
	c := &checker{r: r, file: file}
	md, _ := r.Doc["metadata"].(map[string]any)
	mdPath := fieldPath{"metadata"}
	switch r.Kind {
	case v1.KindPipeline:
		c.pipeline(md, mdPath)
	case v1.KindWorkflow:
		c.schedule(md, mdPath)
		c.workflowMeta(md, mdPath)
		c.tasks()
	}
	return c.out
}

func str(m map[string]any, k string) (string, bool) {
	if m == nil {
		return "", false
	}
	s, ok := m[k].(string)
	return s, ok
}

// number reads a decoded number, which CUE gives as an int for whole numbers.
func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int:
		return float64(t), true
	case int64:
		return float64(t), true
	}
	return 0, false
}

func obj(m map[string]any, k string) map[string]any {
	if m == nil {
		return nil
	}
	o, _ := m[k].(map[string]any)
	return o
}

// schedule checks metadata.schedule and the window's time zone, shared by both kinds.
func (c *checker) schedule(md map[string]any, p fieldPath) {
	if s, ok := str(md, "schedule"); ok && s != "" {
		if sched, err := cronx.Parse(s); err != nil {
			c.at(p.child("schedule"), "%v", err)
		} else if sched.Next(time.Now()).IsZero() {
			// The cron parser accepts fields that no date satisfies (30 February); such a
			// schedule has no next fire, and planning the folder would fail at run time.
			c.at(p.child("schedule"), "schedule %q never fires: no date in the next five years matches it (such as day 30 of February)", s)
		}
	}
	if w := obj(md, "window"); w != nil {
		if tz, ok := str(w, "timezone"); ok && tz != "" {
			if err := checkZone(tz); err != nil {
				c.at(p.child("window").child("timezone"), "%v", err)
			}
		}
	}
}

// checkZone accepts IANA names only: "Local" would make a spec mean different windows on
// different machines.
func checkZone(tz string) error {
	if tz == "Local" {
		return fmt.Errorf(`time zone "Local" depends on the machine; name an IANA zone such as "Europe/Paris" or "UTC"`)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("unknown time zone %q%s: use an IANA name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"", tz, ZoneSuggestion(tz))
	}
	return nil
}

// ZoneSuggestion is ` (did you mean "Europe/London"?)` for a zone name that is a typo or a
// case away from a common IANA zone, else "". The list is fixed, not read from the machine,
// so validation says the same everywhere.
func ZoneSuggestion(tz string) string {
	for _, z := range commonZones {
		if strings.EqualFold(z, tz) {
			return fmt.Sprintf(" (did you mean %q?)", z)
		}
	}
	return didYouMean(tz, commonZones)
}

var commonZones = []string{"UTC", "GMT",
	"Africa/Cairo", "Africa/Johannesburg", "Africa/Lagos", "Africa/Nairobi", "Africa/Casablanca",
	"America/Anchorage", "America/Argentina/Buenos_Aires", "America/Bogota", "America/Chicago", "America/Denver",
	"America/Halifax", "America/Los_Angeles", "America/Mexico_City", "America/New_York", "America/Phoenix",
	"America/Santiago", "America/Sao_Paulo", "America/Toronto", "America/Vancouver", "America/Lima",
	"Asia/Bangkok", "Asia/Dhaka", "Asia/Dubai", "Asia/Hong_Kong", "Asia/Jakarta", "Asia/Jerusalem", "Asia/Karachi",
	"Asia/Kolkata", "Asia/Manila", "Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Taipei", "Asia/Tehran",
	"Asia/Tokyo", "Asia/Ho_Chi_Minh", "Asia/Riyadh", "Asia/Kathmandu",
	"Atlantic/Reykjavik", "Australia/Adelaide", "Australia/Brisbane", "Australia/Melbourne", "Australia/Perth", "Australia/Sydney",
	"Europe/Amsterdam", "Europe/Athens", "Europe/Berlin", "Europe/Brussels", "Europe/Bucharest", "Europe/Budapest",
	"Europe/Copenhagen", "Europe/Dublin", "Europe/Helsinki", "Europe/Istanbul", "Europe/Kyiv", "Europe/Lisbon",
	"Europe/London", "Europe/Madrid", "Europe/Moscow", "Europe/Oslo", "Europe/Paris", "Europe/Prague", "Europe/Rome",
	"Europe/Stockholm", "Europe/Vienna", "Europe/Warsaw", "Europe/Zurich",
	"Pacific/Auckland", "Pacific/Honolulu"}

func (c *checker) pipeline(md map[string]any, p fieldPath) {
	c.schedule(md, p)
	if w := obj(md, "window"); w != nil {
		if _, ok := w["column"]; !ok {
			for _, k := range []string{"null_rows", "outside_rows"} {
				if _, ok := w[k]; ok {
					c.at(p.child("window").child(k), "%s says what a run does with the rows its window column drops, so it needs window.column", k)
				}
			}
		}
	}
	if src := obj(md, "source"); src != nil {
		sp := p.child("source")
		f, _ := str(src, "format")
		format := v1.ParseFormat(f)
		_, hasPath := src["path"]
		if format == v1.FormatIceberg {
			if _, ok := src["catalog"]; !ok {
				c.at(sp, "an ICEBERG source needs a catalog and the table's name")
			}
			if _, ok := src["name"]; !ok {
				c.at(sp, "an ICEBERG source needs name: the table to read")
			}
			if hasPath {
				c.at(sp.child("path"), "an ICEBERG source is named by catalog and name, not by a path; remove path")
			}
		} else if format == v1.FormatGitHub {
			if _, ok := src["repository"]; !ok {
				c.at(sp, `a GITHUB source needs repository: the issues of "owner/name"`)
			}
			for _, k := range []string{"path", "catalog", "snapshot_id", "engine", "credentials", "options"} {
				if _, ok := src[k]; ok {
					c.at(sp.child(k), "a GITHUB source is named by repository; remove %s", k)
				}
			}
		} else {
			if !hasPath && format != "" {
				c.at(sp, "a %s source needs a path: the file to read, relative to the spec's folder", format)
			}
			if e, _ := str(src, "engine"); strings.EqualFold(e, "bigquery") && format != v1.FormatJSON && format != "" {
				c.at(sp.child("engine"), "engine BIGQUERY runs the query of a query file: its format is JSON, not %s", format)
			}
			for _, k := range []string{"repository", "state", "base_url", "token_env"} {
				if _, ok := src[k]; ok {
					c.at(sp.child(k), "%s applies only to GITHUB sources", k)
				}
			}
			for _, k := range []string{"catalog", "snapshot_id"} {
				if _, ok := src[k]; ok {
					c.at(sp.child(k), "%s applies only to ICEBERG sources", k)
				}
			}
		}
	}
	tgt := obj(md, "target")
	tp := p.child("target")
	if src := obj(md, "source"); src != nil && tgt != nil {
		sf, _ := str(src, "format")
		tf, _ := str(tgt, "format")
		if v1.ParseFormat(sf) == v1.FormatIceberg && v1.ParseFormat(tf) == v1.FormatIceberg {
			c.at(tp.child("format"), "no pipeline reads an ICEBERG table into an ICEBERG table; export it to CSV or PARQUET (ldp pipelines lists the routes)")
		}
	}
	if tgt != nil {
		m, _ := str(tgt, "write_mode")
		mode := v1.ParseWriteMode(m)
		if mode == v1.WriteUpsert {
			if jc, ok := tgt["join_cols"].([]any); !ok || len(jc) == 0 {
				c.at(tp.child("write_mode"), "write_mode upsert needs target.join_cols: the columns that identify a row")
			}
		}
		f, _ := str(tgt, "format")
		switch format := v1.ParseFormat(f); format {
		case v1.FormatIceberg:
			if _, ok := tgt["catalog"]; !ok {
				c.at(tp, `an ICEBERG target needs a catalog, for example "catalog": {"identifier": "shop", "warehouse_path": "warehouse"}`)
			}
			if _, ok := tgt["path"]; ok {
				c.at(tp.child("path"), "an ICEBERG target is named by catalog and name, not by a path; remove path")
			}
		case v1.FormatCSV, v1.FormatParquet:
			if _, ok := tgt["path"]; !ok {
				c.at(tp, "a %s target needs a path: the file to write, relative to the spec's folder", format)
			}
			for _, k := range []string{"catalog", "join_cols", "partition_by"} {
				if _, ok := tgt[k]; ok {
					c.at(tp.child(k), "%s applies only to ICEBERG targets", k)
				}
			}
			if mode == v1.WriteUpsert {
				c.at(tp.child("write_mode"), "a %s file is replaced whole by each run; upsert needs an ICEBERG target", format)
			}
		}
	}
	if src := obj(md, "source"); src != nil {
		c.catalog(obj(src, "catalog"), p.child("source").child("catalog"))
	}
	c.catalog(obj(tgt, "catalog"), tp.child("catalog"))
	if parts, ok := tgt["partition_by"].([]any); ok {
		for i, e := range parts {
			f, _ := e.(map[string]any)
			tr, _ := str(f, "transform")
			col, _ := str(f, "column")
			name, named := str(f, "name")
			if pf := (v1.PartitionField{Column: col, Transform: tr, Name: name}); col != "" && !v1.ValidPartitionName(pf.FieldName()) {
				at := tp.child("partition_by").child(strconv.Itoa(i)).child("column")
				if named {
					at = tp.child("partition_by").child(strconv.Itoa(i)).child("name")
				}
				c.at(at, "%s", v1.PartitionNameHint(pf))
			}
			if m := sizedTransform.FindStringSubmatch(tr); m != nil {
				// Iceberg stores N and W as 32-bit integers.
				if _, err := strconv.ParseInt(m[2], 10, 32); err != nil {
					c.at(tp.child("partition_by").child(strconv.Itoa(i)).child("transform"), "%s[%s]: %s must be at most 2147483647", m[1], m[2], map[string]string{"bucket": "N", "truncate": "W"}[m[1]])
				}
			}
		}
	}
	c.checks(md, p)
	c.placeholders(md, p)
	c.sourceGlob(obj(md, "source"), p.child("source"))
	c.sinks(obj(md, "observability"), p.child("observability"))
}

// sourceGlob refuses a source path with glob characters outside its placeholders: a window
// reads one file (what it read is recorded with its snapshot), so a pattern would have been
// taken as a file name and failed at run time with a bare "does not exist".
func (c *checker) sourceGlob(src map[string]any, p fieldPath) {
	path, ok := str(src, "path")
	if !ok {
		return
	}
	if bare := anyWindowRe.ReplaceAllString(path, ""); strings.ContainsAny(bare, "*?[") {
		c.at(p.child("path"), "%q is a glob, and ldp reads one file a window: name each window's file with a placeholder, such as %s, or put the files together in one", path, globExample(path))
	}
}

// globExample rewrites a glob as the placeholder path a user likely means: the first segment
// with a pattern becomes the window's date (a file keeps its prefix and extension).
func globExample(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		j := strings.IndexAny(seg, "*?[")
		if j < 0 {
			continue
		}
		if i < len(segs)-1 {
			segs[i] = seg[:j] + "{window_start:%Y-%m-%d}"
		} else {
			ext := ""
			if k := strings.LastIndexByte(seg, '.'); k > j {
				ext = seg[k:]
			}
			segs[i] = seg[:j] + "{window_start:%Y-%m-%d}" + ext
		}
		break
	}
	return strings.Join(segs, "/")
}

var sizedTransform = regexp.MustCompile(`^(bucket|truncate)\[([0-9]+)\]$`)

// catalog checks what a catalog block needs beyond its shape: a server for a shared type, a
// shared type for an object-store warehouse, and no secret among its properties.
func (c *checker) catalog(cat map[string]any, p fieldPath) {
	if cat == nil {
		return
	}
	t, _ := str(cat, "type")
	typ := v1.ParseCatalogType(t)
	if _, ok := cat["uri"]; !ok && typ != v1.CatalogLocal {
		c.at(p, "a %s catalog needs uri: %s", typ, map[v1.CatalogType]string{
			v1.CatalogSQL:  "postgres://USER@HOST:PORT/DB, or a SQLite file",
			v1.CatalogREST: "the REST catalog's base URL, such as http://127.0.0.1:8181",
		}[typ])
	}
	if typ != v1.CatalogREST {
		notRest := map[string]string{"warehouse": "; a " + string(typ) + " catalog's is warehouse_path", "token_env": "", "credential_env": ""}
		if typ == v1.CatalogSQL {
			// pyiceberg's settings carry over: warehouse (a URI) stands for warehouse_path.
			delete(notRest, "warehouse")
			_, wh := cat["warehouse"]
			if _, wp := cat["warehouse_path"]; wh && wp {
				c.at(p.child("warehouse"), "warehouse and warehouse_path say the same for a sql catalog: keep one")
			}
		}
		for k, hint := range notRest {
			if _, ok := cat[k]; ok {
				c.at(p.child(k), "%s applies only to a rest catalog (type rest)%s", k, hint)
			}
		}
	}
	if uri, _ := str(cat, "uri"); uri != "" {
		// A uri that does not parse (postgres://%zz) holds no password to find here; the
		// catalog's open names what is wrong with it.
		if u, err := url.Parse(uri); err == nil {
			if _, hasPassword := u.User.Password(); hasPassword || u.Query().Has("password") {
				// The value is never echoed: it is the secret.
				c.at(p.child("uri"), "a password never goes in a catalog uri: write it as postgres://USER@HOST:PORT/DB and set PGPASSWORD in the environment (PostgreSQL's client reads it), from a secret store")
			}
		}
	}
	wp, _ := str(cat, "warehouse_path")
	if u, err := url.Parse(wp); err == nil && u.User != nil {
		c.at(p.child("warehouse_path"), "keys never go in a path: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
	}
	if typ == v1.CatalogLocal && strings.Contains(wp, "://") {
		c.at(p.child("warehouse_path"), "a local catalog keeps its database in the warehouse folder, which %s cannot hold: use type sql with a PostgreSQL uri for an object-store warehouse", wp)
	}
	props, _ := cat["properties"].(map[string]any)
	for _, k := range sortedKeys(props) {
		if redact.SecretKey(k) || strings.Contains(strings.ToLower(k), "access-key") {
			c.at(p.child("properties").child(k), "%s is a secret, and a spec is not the place for one: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment (or name a variable in token_env or credential_env for a rest catalog)", k)
		}
	}
}

// checks looks at the bounds of each quality check.
func (c *checker) checks(md map[string]any, p fieldPath) {
	qp := p.child("quality")
	var list []any
	switch q := md["quality"].(type) {
	case []any:
		list = q
	case map[string]any:
		list, _ = q["checks"].([]any)
		qp = qp.child("checks")
	}
	for i, e := range list {
		ch, _ := e.(map[string]any)
		if ch == nil {
			continue
		}
		cp := qp.child(strconv.Itoa(i))
		lo, okLo := number(ch["min"])
		hi, okHi := number(ch["max"])
		if okLo && okHi && lo > hi {
			c.at(cp.child("min"), "min %v is greater than max %v: no value can pass", lo, hi)
		}
		if name, _ := str(ch, "check"); name == "freshness" {
			if now, ok := str(ch, "now"); ok {
				if _, err := parseInstant(now); err != nil {
					c.at(cp.child("now"), "now must be an ISO-8601 time with an offset, such as 2026-08-05T02:05:00Z; got %q", now)
				}
			}
		}
	}
}

var (
	placeholderRe = regexp.MustCompile(`\{(window_start|window_end)(?::([^{}]*))?\}`)
	anyWindowRe   = regexp.MustCompile(`\{window_[^}]*\}?`)
	strftimeRe    = regexp.MustCompile(`%.?`)
)

// strftimeDirectives are the Python strftime directives a placeholder may use.
const strftimeDirectives = "aAwdbBmyYHIpMSfzZjUWcxXGuV%"

// placeholders checks {window_start:FORMAT} and {window_end:FORMAT}: well formed, only in
// metadata.source.path, and never with a window of "none".
func (c *checker) placeholders(md map[string]any, p fieldPath) {
	var walk func(v any, at fieldPath)
	walk = func(v any, at fieldPath) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(t[k], at.child(k))
			}
		case []any:
			for i, e := range t {
				walk(e, at.child(strconv.Itoa(i)))
			}
		case string:
			if !anyWindowRe.MatchString(t) {
				return
			}
			if at.String() != "metadata.source.path" {
				c.at(at, "placeholder %s works only in metadata.source.path", anyWindowRe.FindString(t))
				return
			}
			c.placeholderSyntax(t, at)
			if w, ok := md["window"].(string); ok && w == "none" {
				c.at(at, "placeholder %s needs a window, but metadata.window is \"none\"", anyWindowRe.FindString(t))
			}
		}
	}
	walk(c.r.Doc, nil)
}

func (c *checker) placeholderSyntax(s string, at fieldPath) {
	for _, m := range anyWindowRe.FindAllString(s, -1) {
		sub := placeholderRe.FindStringSubmatch(m)
		if sub == nil || sub[0] != m {
			c.at(at, "bad placeholder %s: write {window_start:FORMAT} or {window_end:FORMAT} with a strftime FORMAT such as %%Y-%%m-%%d", m)
			continue
		}
		for _, d := range strftimeRe.FindAllString(sub[2], -1) {
			if len(d) < 2 || !strings.ContainsRune(strftimeDirectives, rune(d[1])) {
				c.at(at, "placeholder %s: unknown strftime directive %q", m, d)
			}
		}
	}
}

func (c *checker) sinks(o map[string]any, p fieldPath) {
	list, _ := o["sinks"].([]any)
	for i, e := range list {
		s, _ := e.(map[string]any)
		if s == nil {
			continue
		}
		sp := p.child("sinks").child(strconv.Itoa(i))
		typ, _ := str(s, "type")
		_, hasPath := s["path"]
		_, hasURL := s["url"]
		switch typ {
		case "openlineage":
			if !hasPath && !hasURL {
				c.at(sp, "an openlineage sink needs a path (a file) or a url (an http(s) endpoint)")
			}
			if hasPath && hasURL {
				c.at(sp, "an openlineage sink takes a path or a url, not both")
			}
			if raw, _ := str(s, "url"); raw != "" && urlHoldsSecret(raw) {
				// The value is never echoed: it is the secret. The URL would reach ldp export
				// k8s's objects, the ledger's warnings and every terminal the spec is shown on.
				c.at(sp.child("url"), "credentials never go in a sink url (a user, a password or a key in its query): name the variable that holds the API key in api_key_env, as a bearer token")
			}
		case "jsonl", "null":
			if hasURL {
				c.at(sp.child("url"), "a %s sink takes no url", typ)
			}
			if _, ok := s["api_key_env"]; ok {
				c.at(sp.child("api_key_env"), "a %s sink takes no api_key_env", typ)
			}
		}
	}
}

func (c *checker) workflowMeta(md map[string]any, p fieldPath) {
	start, hasStart := str(md, "start")
	if hasStart {
		if _, err := parseInstant(start); err != nil {
			c.at(p.child("start"), "start must be an ISO-8601 date or time, such as 2026-08-01 or 2026-08-01T00:00:00; got %q", start)
		}
	}
	if end, ok := str(md, "end"); ok {
		e, err := parseInstant(end)
		if err != nil {
			c.at(p.child("end"), "end must be an ISO-8601 date or time, such as 2026-09-01 or 2026-09-01T00:00:00; got %q", end)
		} else if s, err := parseInstant(start); hasStart && err == nil && !e.After(s) {
			c.at(p.child("end"), "end %s is not after start %s: no window would be expected", end, start)
		}
	}
	if cu, ok := md["catchup"].(bool); ok && cu && !hasStart {
		c.at(p.child("catchup"), "catchup: true needs metadata.start, the first window to catch up from (for example \"2026-08-01\")")
	}
	c.sinks(obj(md, "observability"), p.child("observability"))
}

// parseInstant accepts the forms the contract allows for start and now.
func parseInstant(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an ISO-8601 date or time: %q", s)
}

// taskKinds are the keys that name a task's kind: apis/v1's list, which controllers/tasks
// registers a kind for.
var taskKinds = v1.Names(v1.TaskKinds)

// oneKind is what a task with no kind or with two is told.
var oneKind = "a task needs exactly one of " + strings.Join(taskKinds[:len(taskKinds)-1], ", ") + " or " + taskKinds[len(taskKinds)-1]

// tasks checks the task graph: one kind each, unique ids, known dependencies, no cycle.
func (c *checker) tasks() {
	list, _ := c.r.Doc["tasks"].([]any)
	ids := map[string]int{}
	var order []string
	deps := map[string][]string{}
	depIdx := map[string]map[string]int{}
	for i, e := range list {
		t, _ := e.(map[string]any)
		if t == nil {
			continue
		}
		tp := fieldPath{"tasks", strconv.Itoa(i)}
		var kinds []string
		for _, k := range taskKinds {
			if _, ok := t[k]; ok {
				kinds = append(kinds, k)
			}
		}
		switch len(kinds) {
		case 0:
			c.at(tp, "%s; it has none", oneKind)
		case 1:
		default:
			c.at(tp, "%s; it has %s", oneKind, strings.Join(kinds, " and "))
		}
		if m, ok := t["sql"].(map[string]any); ok {
			c.catalog(obj(obj(m, "target"), "catalog"), tp.child("sql").child("target").child("catalog"))
			_, q := m["query"]
			_, f := m["query_file"]
			switch {
			case q && f:
				c.at(tp.child("sql"), "a sql task takes query or query_file, not both")
			case !q && !f:
				c.at(tp.child("sql"), "a sql task needs its SELECT: query (inline) or query_file (a file relative to the workflow)")
			}
			ins, _ := m["inputs"].(map[string]any)
			for _, name := range sortedKeys(ins) {
				switch name {
				case "source", "ldp_extract", "ldp_batch", "ldp_source":
					c.at(tp.child("sql").child("inputs").child(name), "input name %q is one of ldp's own views; choose another", name)
				}
			}
		}
		id, ok := str(t, "id")
		if !ok {
			continue
		}
		if first, dup := ids[id]; dup {
			l, _ := c.r.valuePos("tasks", strconv.Itoa(first), "id")
			c.at(tp.child("id"), "duplicate task id %q (first used at line %d)", id, l)
			continue
		}
		ids[id] = i
		order = append(order, id)
		ds, _ := t["depends_on"].([]any)
		depIdx[id] = map[string]int{}
		for j, d := range ds {
			if s, ok := d.(string); ok {
				deps[id] = append(deps[id], s)
				depIdx[id][s] = j
			}
		}
	}
	for _, id := range order {
		for _, d := range deps[id] {
			dp := fieldPath{"tasks", strconv.Itoa(ids[id]), "depends_on", strconv.Itoa(depIdx[id][d])}
			switch _, known := ids[d]; {
			case d == id:
				c.at(dp, "task %q depends on itself", id)
			case !known:
				c.at(dp, "task %q depends on unknown task %q%s", id, d, didYouMean(d, order))
			}
		}
	}
	for _, cyc := range findCycles(order, deps) {
		first := cyc[0]
		dp := fieldPath{"tasks", strconv.Itoa(ids[first]), "depends_on", strconv.Itoa(depIdx[first][cyc[1]])}
		c.at(dp, "tasks depend on each other in a cycle: %s (each waits for the next)", strings.Join(append(cyc, first), " -> "))
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// findCycles returns each cycle of the graph once (with more than one task; a task that
// depends on itself is reported on its own), as ids in dependency order starting from the
// smallest id, sorted.
func findCycles(order []string, deps map[string][]string) [][]string {
	const (
		unseen = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	seen := map[string]bool{}
	var out [][]string
	var visit func(id string)
	visit = func(id string) {
		state[id] = onStack
		stack = append(stack, id)
		for _, d := range deps[id] {
			if _, ok := deps[d]; !ok && !contains(order, d) {
				continue
			}
			switch state[d] {
			case unseen:
				visit(d)
			case onStack:
				if d == id {
					continue
				}
				var cyc []string
				for i := len(stack) - 1; i >= 0; i-- {
					cyc = append([]string{stack[i]}, cyc...)
					if stack[i] == d {
						break
					}
				}
				cyc = rotateToMin(cyc)
				if k := strings.Join(cyc, "\x00"); !seen[k] {
					seen[k] = true
					out = append(out, cyc)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
	}
	for _, id := range order {
		if state[id] == unseen {
			visit(id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ",") < strings.Join(out[j], ",") })
	return out
}

func rotateToMin(c []string) []string {
	m := 0
	for i := range c {
		if c[i] < c[m] {
			m = i
		}
	}
	return append(append([]string{}, c[m:]...), c[:m]...)
}

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}

// urlHoldsSecret reports whether a URL carries user info or a query parameter that names a
// secret (?api_key=, ?token=): an HTTP client sends user info as a Basic credential.
func urlHoldsSecret(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		if redact.SecretKey(k) {
			return true
		}
	}
	return false
}
