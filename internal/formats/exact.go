package formats

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/window"
)

// sniffRows is how many rows DuckDB's CSV sniffer reads to pick the types.
const sniffRows = 20480

// Read is Source with the types of a CSV file made exact where DuckDB's sniffer would lose
// information:
//
//   - integers too large for BIGINT are sniffed as DOUBLE, which rounds them
//     (12345678901234567890 and ...891 become one value, and an upsert on the column deletes a
//     customer): such a column becomes DECIMAL(38,0), and a value in it that is not an integer
//     fails the run naming the column and the value;
//   - a column that holds timestamps with an offset and timestamps without one is sniffed as
//     TIMESTAMP WITH TIME ZONE and the values without one are read as UTC: the contract says a
//     value without a zone is local time in the window's zone, so each value is read by its
//     own kind (one without a zone by window.Instant's rule across clock changes).
//
// cols are the columns of Source's expression; loc is the window's zone. A file whose types
// need none of this is read exactly as Source reads it, at no extra cost.
func Read(ctx context.Context, db *engine.DB, format v1.Format, path string, opts *v1.ReadOptions, cols []engine.Column, loc *time.Location) (string, error) {
	expr, err := Source(format, path, opts)
	if err != nil || format != v1.FormatCSV {
		return expr, err
	}
	delim, header := csvDialect(opts)
	if header && firstLineBlank(path) {
		// DuckDB reads a file of blank lines as rows of one NULL column named column0.
		return "", &ReadFailedError{Path: path, Line: "1", Msg: "the header line is empty: a CSV source needs its column names on the first line (or \"header\": false in metadata.source.options)"}
	}
	var doubles, zoned []string
	for _, c := range cols {
		switch strings.ToUpper(c.Type) {
		case "DOUBLE", "FLOAT":
			doubles = append(doubles, c.Name)
		case "TIMESTAMP WITH TIME ZONE":
			zoned = append(zoned, c.Name)
		}
	}
	if len(doubles) == 0 && len(zoned) == 0 {
		return expr, nil
	}
	ints, err := integerColumns(ctx, db, csvSource(path, delim, header, ", all_varchar = true"), doubles)
	if err != nil {
		return "", ReadError(format, path, opts, err)
	}
	var types, repl []string
	for _, name := range ints {
		c := engine.Ident(name)
		types = append(types, engine.Lit(name)+": 'VARCHAR'")
		msg := fmt.Sprintf("column %q holds integers too large for BIGINT, so it is read as DECIMAL(38,0), and this value of it is not an integer"+engine.ValueFollows, name)
		repl = append(repl, fmt.Sprintf("CASE WHEN %[1]s IS NULL THEN NULL WHEN regexp_full_match(trim(%[1]s), '[+-]?[0-9]+') THEN CAST(trim(%[1]s) AS DECIMAL(38,0)) ELSE error(%[2]s || %[1]s) END AS %[1]s", c, engine.Lit(msg)))
	}
	for _, name := range zoned {
		c := engine.Ident(name)
		types = append(types, engine.Lit(name)+": 'VARCHAR'")
		repl = append(repl, fmt.Sprintf("CASE WHEN %[1]s IS NULL THEN NULL WHEN regexp_matches(trim(%[1]s), '%[2]s') THEN CAST(trim(%[1]s) AS TIMESTAMPTZ) ELSE %[3]s END AS %[1]s", c, offsetPattern, window.InstantSQL("CAST(trim("+c+") AS TIMESTAMP)", loc)))
	}
	if len(repl) == 0 {
		return expr, nil
	}
	typed := csvSource(path, delim, header, ", types = {"+strings.Join(types, ", ")+"}")
	return fmt.Sprintf("(SELECT * REPLACE (%s) FROM %s)", strings.Join(repl, ", "), typed), nil
}

// offsetPattern matches a timestamp that ends in a zone: Z, UTC or an offset after the time.
const offsetPattern = `:[0-9]{2}(\.[0-9]*)?\s*([zZ]|UTC|[+-][0-9]{2}(:?[0-9]{2})?)$`

// integerColumns returns those of names whose values, in the rows the sniffer read, are all
// integers: a DOUBLE column sniffed from integers alone holds integers too large for BIGINT.
func integerColumns(ctx context.Context, db *engine.DB, varchar string, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var aggs, sel []string
	for _, n := range names {
		c := engine.Ident(n)
		sel = append(sel, c)
		aggs = append(aggs, fmt.Sprintf("coalesce(bool_and(%[1]s IS NULL OR regexp_full_match(trim(%[1]s), '[+-]?[0-9]+')), false)", c))
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s LIMIT %d)", strings.Join(aggs, ", "), strings.Join(sel, ", "), varchar, sniffRows)
	flags := make([]bool, len(names))
	dest := make([]any, len(names))
	for i := range flags {
		dest[i] = &flags[i]
	}
	if err := db.QueryRow(ctx, q, dest...); err != nil {
		return nil, err
	}
	var out []string
	for i, ok := range flags {
		if ok {
			out = append(out, names[i])
		}
	}
	return out, nil
}

// firstLineBlank reports whether the first line of the file at path holds nothing but spaces.
func firstLineBlank(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && err != io.EOF {
		return false
	}
	return strings.TrimSpace(line) == ""
}

// csvDialect is the delimiter and header setting of a CSV source.
func csvDialect(opts *v1.ReadOptions) (string, bool) {
	delim, header := ",", true
	if opts != nil {
		if opts.Delimiter != "" {
			delim = opts.Delimiter
		}
		if opts.Header != nil {
			header = *opts.Header
		}
	}
	return delim, header
}

// Sniffed is what DuckDB's sniffer found of a CSV file: its columns, and the read_csv options
// (after the path) that read a file of the same layout with no sniffing.
type Sniffed struct {
	Cols    []engine.Column
	Options string
}

// Sniff runs DuckDB's sniffer over the CSV file at path, in the dialect Source reads it with.
// Binding read_csv sniffs the file, so reading it through Source after a DESCRIBE sniffs it
// twice; SniffedSource reads it once more with no sniffing at all. A file whose types need
// Read's exact reading (a DOUBLE or a TIMESTAMP WITH TIME ZONE column) is not worth it: ok is
// false, and so it is when sniff_csv fails (Source's own read then says why, as it always did).
func Sniff(ctx context.Context, db *engine.DB, path string, opts *v1.ReadOptions) (s Sniffed, ok bool) {
	s, doubles, ok := sniff(ctx, db, path, opts)
	return s, ok && len(doubles) == 0
}

// SniffAlone is Sniff for a file read alone (not shared with files of its layout): a DOUBLE
// column is kept when the rows the sniffer read hold a value of it that is not an integer,
// as Read keeps it, which it asks of those rows read as text through the sniffed options, with
// no second sniff. A sniff costs as much as an eighth of a COPY of a 1 M-row file, and Read
// after a DESCRIBE sniffed three times (the DESCRIBE, the integer probe, the read). A DOUBLE
// column of integers alone (they are too large for BIGINT) needs Read's DECIMAL: not ok.
func SniffAlone(ctx context.Context, db *engine.DB, path string, opts *v1.ReadOptions) (Sniffed, bool) {
	s, doubles, ok := sniff(ctx, db, path, opts)
	if !ok || len(doubles) == 0 {
		return s, ok
	}
	// The probe's columns are the sniffed ones with the DOUBLEs as text; the prompt must hold
	// the sniffed columns exactly as they are written here, or the file is left to Read.
	var cols, probe []string
	isDouble := map[string]bool{}
	for _, d := range doubles {
		isDouble[d] = true
	}
	for _, c := range s.Cols {
		t := c.Type
		cols = append(cols, engine.Lit(c.Name)+": "+engine.Lit(t))
		if isDouble[c.Name] {
			t = "VARCHAR"
		}
		probe = append(probe, engine.Lit(c.Name)+": "+engine.Lit(t))
	}
	want := "columns={" + strings.Join(cols, ", ") + "}"
	if strings.Count(s.Options, want) != 1 {
		return s, false
	}
	text := "read_csv(" + engine.Lit(path) + ", " + strings.Replace(s.Options, want, "columns={"+strings.Join(probe, ", ")+"}", 1) + ")"
	ints, err := integerColumns(ctx, db, text, doubles)
	if err != nil || len(ints) > 0 {
		return s, false
	}
	return s, true
}

// sniff is what DuckDB's sniffer found of the CSV file at path, and the names of its DOUBLE
// columns; ok is false when it found nothing usable or a column needs Read's zoned reading.
func sniff(ctx context.Context, db *engine.DB, path string, opts *v1.ReadOptions) (s Sniffed, doubles []string, ok bool) {
	delim, header := csvDialect(opts)
	src := csvSource(path, delim, header, "")
	q := "SELECT Columns, Prompt FROM sniff_" + strings.TrimPrefix(src, "read_")
	var cols []any
	var prompt string
	if err := db.QueryRow(ctx, q, &cols, &prompt); err != nil {
		return s, nil, false
	}
	// The prompt is FROM read_csv('<path>', auto_detect=false, ...);
	i, j := strings.Index(prompt, ", auto_detect=false"), strings.LastIndex(prompt, ")")
	if i < 0 || j < i {
		return s, nil, false
	}
	s.Options = prompt[i+2 : j]
	for _, c := range cols {
		m, _ := c.(map[string]any)
		name, _ := m["name"].(string)
		typ, _ := m["type"].(string)
		if name == "" || typ == "" {
			return s, nil, false
		}
		switch strings.ToUpper(typ) {
		case "DOUBLE", "FLOAT":
			doubles = append(doubles, name)
		case "TIMESTAMP WITH TIME ZONE":
			return s, nil, false
		}
		s.Cols = append(s.Cols, engine.Column{Name: name, Type: typ})
	}
	return s, doubles, len(s.Cols) > 0
}

// SniffedSource reads the CSV file at path with the options a Sniff found (of this file or of
// one with the same header line), with no sniffing.
func SniffedSource(path string, s Sniffed) string {
	return "read_csv(" + engine.Lit(path) + ", " + s.Options + ")"
}

// HeaderLine is the first line of the file at path, as it is (its line end included), or
// false if it cannot be read. Files of one layout share it.
func HeaderLine(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || strings.TrimSpace(line) == "" {
		return "", false
	}
	return line, true
}
