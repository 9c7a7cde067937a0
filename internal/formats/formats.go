// Package formats reads and writes the file formats of sources and targets (CSV, Parquet and
// JSON) through DuckDB: a source is a table expression DuckDB reads, and a file target is
// written to a temporary file in the same folder and renamed into place, so a reader never
// sees half a file.
package formats

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Source returns the DuckDB table expression that reads a file source at path (already
// resolved against the spec's folder). A missing file is an error naming the path.
func Source(format v1.Format, path string, opts *v1.ReadOptions) (string, error) {
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return "", &SourceMissingError{Path: path}
		}
		return "", fmt.Errorf("source %s: %w", path, err)
	}
	switch format {
	case v1.FormatCSV:
		// The dialect is fixed (comma, double quotes, header on the first line) and only the
		// types are inferred. Left to guess, DuckDB's sniffer "repairs" a file with a ragged
		// row: it reads it as one wide column, or skips lines until the ragged row becomes the
		// header; and it sniffs the quote from the first 20,480 rows only, so a file whose
		// first quoted field comes later was read with no quote at all.
		delim, header := csvDialect(opts)
		return csvSource(path, delim, header, ""), nil
	case v1.FormatParquet:
		return "read_parquet(" + engine.Lit(path) + ")", nil
	case v1.FormatJSON:
		// format 'auto' reads a JSON array or newline-delimited JSON.
		return "read_json(" + engine.Lit(path) + ", format = 'auto')", nil
	}
	return "", ldperr.Configf("", "cannot read a %s source from a file", format)
}

// SourceMissingError is a source file that is not there (yet). It is an I/O error: a retry may
// find the file landed.
type SourceMissingError struct{ Path string }

func (e *SourceMissingError) Error() string {
	return fmt.Sprintf("source file %s does not exist", e.Path)
}

// Retriable marks a missing source as worth another attempt.
func (e *SourceMissingError) Retriable() bool { return true }

var csvLine = regexp.MustCompile(`(?s)CSV Error on Line: (\d+)(.*)`)

// ReadError rewrites DuckDB's error for a source that could not be read so that it names the
// file and the line, and never echoes the row itself (it may hold personal data).
func ReadError(format v1.Format, path string, opts *v1.ReadOptions, err error) error {
	msg := err.Error()
	if format == v1.FormatCSV && strings.Contains(msg, "Error when sniffing file") {
		// The sniffer fails on a ragged row inside its sample without saying where: find it.
		if line, detail, ok := locateCSVError(path, opts); ok {
			return &ReadFailedError{Path: path, Line: strconv.Itoa(line), Msg: "malformed CSV row: " + detail + moreRagged(path, opts, line), Err: err}
		}
	}
	if m := csvLine.FindStringSubmatch(msg); m != nil {
		if c := csvConvert.FindStringSubmatch(m[2]); c != nil {
			return fmt.Errorf("read %w", convertError(path, m[1], c, strings.Contains(m[2], "auto-detected")))
		}
		var keep []string
		for _, l := range strings.Split(m[2], "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "Original Line") || strings.HasPrefix(l, "Possible fixes") || strings.HasPrefix(l, "* ") {
				continue
			}
			keep = append(keep, l)
		}
		detail := strings.Join(keep, "; ")
		if detail != "" {
			detail = ": " + detail
		}
		first, _ := strconv.Atoi(m[1])
		return &ReadFailedError{Path: path, Line: m[1], Msg: "malformed CSV row" + detail + moreRagged(path, opts, first), Err: err}
	}
	return &ReadFailedError{Path: path, Msg: firstLine(msg), Err: err}
}

// csvConvert is DuckDB's CSV reader's message about a value its column's type cannot hold:
// the column, the value, the type, and where the type came from.
var csvConvert = regexp.MustCompile(`(?s)Error when converting column "((?:[^"]|"")*)"\. Could not convert string "((?:[^"]|"")*)" to '([^']*)'`)

// convertError is a CSV value its column's type cannot hold, as a DataError: file, line,
// column, type and where the type came from are public, the value is for the terminal only.
func convertError(path, line string, m []string, sniffed bool) error {
	n, _ := strconv.ParseInt(line, 10, 64)
	typ := m[3]
	why := "ldp set for it"
	if sniffed {
		why = fmt.Sprintf("DuckDB detected from the file's first %d rows", sniffRows)
	}
	return &ldperr.DataError{
		File:   path,
		Line:   n,
		Column: strings.ReplaceAll(m[1], `""`, `"`),
		Value:  strings.ReplaceAll(m[2], `""`, `"`),
		Msg:    fmt.Sprintf("is not a %s, the column's type, which %s: correct the value, or leave it empty for NULL", typ, why),
	}
}

// ReadFailedError is a source file that could not be read.
type ReadFailedError struct {
	Path string
	Line string
	Msg  string
	Err  error
}

func (e *ReadFailedError) Error() string {
	if e.Line != "" {
		return fmt.Sprintf("read %s:%s: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("read %s: %s", e.Path, e.Msg)
}

func (e *ReadFailedError) Unwrap() error { return e.Err }

// maxRagged is how many malformed rows an error names.
const maxRagged = 10

// moreRagged names the other rows with a wrong number of fields, after the line first, up to
// maxRagged in all: a ragged file is fixed in one pass, not one row a run.
func moreRagged(path string, opts *v1.ReadOptions, first int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := csvReader(f, opts)
	var lines []string
	more := false
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if !errors.As(err, &pe) {
			if err != nil {
				break
			}
			continue
		}
		if !errors.Is(pe.Err, csv.ErrFieldCount) {
			break // a quote error: the rest of the file cannot be told apart
		}
		if pe.Line == first {
			continue
		}
		if len(lines) == maxRagged-1 {
			more = true
			break
		}
		lines = append(lines, strconv.Itoa(pe.Line))
	}
	if len(lines) == 0 {
		return ""
	}
	s := "; lines " + strings.Join(lines, ", ") + " have a wrong number of fields too"
	if more {
		s += " (and more)"
	}
	return s
}

// csvReader reads a CSV source in its dialect, strictly (no lazy quotes): a record whose
// number of fields differs from the header's is an ErrFieldCount, and reading goes on after it.
func csvReader(f io.Reader, opts *v1.ReadOptions) *csv.Reader {
	r := csv.NewReader(f)
	r.FieldsPerRecord = 0
	if delim, _ := csvDialect(opts); delim != "" {
		r.Comma = []rune(delim)[0]
	}
	return r
}

// locateCSVError finds the first row whose number of fields differs from the header's.
func locateCSVError(path string, opts *v1.ReadOptions) (int, string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", false
	}
	defer f.Close()
	r := csvReader(f, opts)
	for {
		_, err := r.Read()
		if err == io.EOF {
			return 0, "", false
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			switch {
			case errors.Is(pe.Err, csv.ErrFieldCount):
				return pe.Line, "wrong number of fields", true
			case errors.Is(pe.Err, csv.ErrQuote) && pe.Line > pe.StartLine:
				// A quote opened and never closed runs to the end of the file: name where it opened.
				return pe.StartLine, `a quoted field opened here is never closed (a " is missing)`, true
			case errors.Is(pe.Err, csv.ErrQuote), errors.Is(pe.Err, csv.ErrBareQuote):
				return pe.Line, `a " inside a field that is not quoted; quote the field and double the " inside it`, true
			}
			return pe.Line, pe.Err.Error(), true
		}
		if err != nil {
			return 0, "", false
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// WriteFile writes the rows of query to path as CSV or Parquet, atomically: into a temporary
// file beside it, then renamed over it. It returns the rows written.
func WriteFile(ctx context.Context, db *engine.DB, query string, format v1.Format, path string) (int64, error) {
	var opts string
	switch format {
	case v1.FormatCSV:
		opts = "FORMAT csv, HEADER true"
	case v1.FormatParquet:
		opts = "FORMAT parquet, COMPRESSION zstd"
	default:
		return 0, ldperr.Configf("", "cannot write a %s file", format)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(path)+".ldp-tmp-"+randomHex(6))
	n, err := db.ExecCount(ctx, fmt.Sprintf("COPY (%s) TO %s (%s)", query, engine.Lit(tmp), opts))
	if err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// csvSource is read_csv of path in ldp's pinned dialect, with extra (", types = {...}") appended.
func csvSource(path, delim string, header bool, extra string) string {
	return fmt.Sprintf(`read_csv(%s, delim = %s, header = %t, skip = 0, quote = '"', escape = '"', strict_mode = true%s)`, engine.Lit(path), engine.Lit(delim), header, extra)
}
