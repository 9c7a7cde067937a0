package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/ldp-dev/ldp/internal/engine"
	"github.com/ldp-dev/ldp/internal/window"
)

// A batch meets a table that already has its columns: each batch column is written into the
// table's column of the same name, whatever its case (as Spark and Trino resolve names), in
// the table's type. The table's type never wins silently: a value goes in only if the column
// holds it exactly.
//
//   - the same type, or one Iceberg promotes the column to (int to long, float to double, a
//     decimal of more digits): as it is;
//   - a type every value of which the column holds (int to long, int to double, an integer to
//     a decimal or to text, a date to a timestamp): cast;
//   - a timestamp with or without a zone into the other kind: read in the window's zone (a
//     wall-clock time by window.Instant's rule; an instant as its wall clock there), never in
//     DuckDB's session zone;
//   - other numbers (a double into a long, a long into an int, a decimal into a double): cast
//     only if every value reads back as itself (10.0 goes in as 10, 10.49 is refused);
//   - anything else (text into a number, a number with a fraction into text, a boolean...):
//     refused unless the column holds only nulls.
//
// A refusal is a *MismatchError naming the first value that does not fit; nothing is written.

// fit is how a batch column of one DuckDB type goes into a table column of another.
type fit int

const (
	fitAsIs    fit = iota // the same type, or one Iceberg promotes the column to
	fitCast               // every value of the batch's type fits
	fitZone               // a timestamp (or date) read in the window's zone
	fitChecked            // each value must read back as itself
	fitNone               // no value fits (only nulls go in)
)

var decimalType = regexp.MustCompile(`^DECIMAL\((\d+),\s*(\d+)\)$`)

// normType spells a DuckDB type one way.
func normType(t string) string {
	t = strings.ToUpper(strings.TrimSpace(t))
	switch t {
	case "TIMESTAMPTZ":
		return "TIMESTAMP WITH TIME ZONE"
	case "REAL":
		return "FLOAT"
	}
	if m := decimalType.FindStringSubmatch(t); m != nil {
		return "DECIMAL(" + m[1] + "," + m[2] + ")"
	}
	return t
}

// intType is the width and signedness of an integer type (bits 0: not an integer type).
func intType(t string) (bits int, unsigned bool) {
	switch t {
	case "TINYINT":
		return 8, false
	case "SMALLINT":
		return 16, false
	case "INTEGER":
		return 32, false
	case "BIGINT":
		return 64, false
	case "HUGEINT":
		return 128, false
	case "UTINYINT":
		return 8, true
	case "USMALLINT":
		return 16, true
	case "UINTEGER":
		return 32, true
	case "UBIGINT":
		return 64, true
	case "UHUGEINT":
		return 128, true
	}
	return 0, false
}

// intHolds reports whether every value of integer type from is one of integer type to.
func intHolds(from, to string) bool {
	fb, fu := intType(from)
	tb, tu := intType(to)
	switch {
	case fb == 0 || tb == 0, !fu && tu:
		return false
	case fu && !tu:
		return fb < tb
	}
	return fb <= tb
}

// intDigits is how many decimal digits the values of an integer type may have.
func intDigits(t string) int {
	bits, _ := intType(t)
	return map[int]int{8: 3, 16: 5, 32: 10, 64: 20, 128: 39}[bits]
}

func decimalOf(t string) (p, s int, ok bool) {
	m := decimalType.FindStringSubmatch(t)
	if m == nil {
		return 0, 0, false
	}
	p, _ = strconv.Atoi(m[1])
	s, _ = strconv.Atoi(m[2])
	return p, s, true
}

func isNumber(t string) bool {
	_, _, dec := decimalOf(t)
	bits, _ := intType(t)
	return bits > 0 || dec || t == "DOUBLE" || t == "FLOAT"
}

// fitOf says how a batch column of DuckDB type from goes into a table column of DuckDB type to.
func fitOf(from, to string) fit {
	from, to = normType(from), normType(to)
	if from == to {
		return fitAsIs
	}
	fbits, _ := intType(from)
	fd := intDigits(from)
	fp, fs, fdec := decimalOf(from)
	tp, ts, tdec := decimalOf(to)
	switch {
	case from == "BIGINT" && to == "INTEGER", from == "DOUBLE" && to == "FLOAT":
		return fitAsIs // Iceberg promotes the table's column: int to long, float to double
	case fdec && tdec && fs == ts && fp > tp:
		return fitAsIs // a decimal of more digits, the same scale
	case intHolds(from, to), fbits > 0 && fbits <= 32 && to == "DOUBLE", fbits > 0 && fbits <= 16 && to == "FLOAT",
		from == "FLOAT" && to == "DOUBLE", fd > 0 && tdec && fd <= tp-ts, fdec && tdec && ts >= fs && tp-ts >= fp-fs,
		fbits > 0 && to == "VARCHAR", from == "DATE" && to == "TIMESTAMP":
		return fitCast
	case (from == "TIMESTAMP" || from == "DATE") && to == "TIMESTAMP WITH TIME ZONE", from == "TIMESTAMP WITH TIME ZONE" && to == "TIMESTAMP":
		return fitZone
	case isNumber(from) && isNumber(to):
		return fitChecked
	}
	return fitNone
}

// promoted reports whether the table's column of Iceberg type cur becomes the batch's type
// next by a promotion Iceberg allows.
func promoted(cur, next iceberg.Type) bool {
	c, n := duckType(cur), duckType(next)
	return c != "" && n != "" && normType(c) != normType(n) && fitOf(n, c) == fitAsIs
}

// castTo is the expression that writes expr, of DuckDB type from, into a column of Iceberg type
// to; loc is the zone a timestamp without one is read in.
func castTo(expr, from string, to iceberg.Type, loc *time.Location) string {
	dt := duckType(to)
	if dt == "" {
		return expr
	}
	if fitOf(from, dt) == fitZone {
		if loc == nil {
			loc = time.UTC
		}
		switch normType(from) {
		case "TIMESTAMP WITH TIME ZONE":
			return window.WallSQL(expr, loc)
		case "DATE":
			return window.InstantSQL("CAST("+expr+" AS TIMESTAMP)", loc)
		}
		return window.InstantSQL(expr, loc)
	}
	return "CAST(" + expr + " AS " + dt + ")"
}

// fieldFor is the table's field of name: the one so spelled, else the one whose name differs
// only in case.
func fieldFor(sc *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	if f, ok := sc.FindFieldByName(name); ok {
		return f, true
	}
	return sc.FindFieldByNameCaseInsensitive(name)
}

// columnFor is the batch column that fills the table's field name: the one so spelled, else
// the one whose name differs only in case.
func columnFor(cols []engine.Column, name string) (engine.Column, bool) {
	for _, c := range cols {
		if c.Name == name {
			return c, true
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return engine.Column{}, false
}

// MismatchError is a batch value the table's column cannot hold exactly. Nothing was written.
type MismatchError struct {
	Table Ref
	// Column is the batch's column, Field the table's (they may differ in case).
	Column, Field string
	// Value is the first value that does not fit, as text.
	Value string
	// BatchType is the batch column's DuckDB type, TableType the table column's Iceberg type.
	BatchType, TableType string
	// Where is the source file and line the value was read from, when the caller knows it.
	Where string
}

func (e *MismatchError) Error() string { return e.message(strconv.Quote(e.Value)) }

// Public is the refusal without the value, for events and the ledger (a row's value never
// leaves the terminal): where it is, the column and both types stay.
func (e *MismatchError) Public() string { return e.message("a value") }

func (e *MismatchError) message(value string) string {
	prefix := ""
	if e.Where != "" {
		prefix = "read " + e.Where + ": "
	}
	return fmt.Sprintf("%scolumn %q holds %s (%s), which column %s of table %s (%s) cannot hold exactly: nothing was written, since ldp never rounds a value or reads text as a number. "+
		"Give the column one type for every batch: cast it in metadata.transform.sql (or correct the source), or add a schema check {\"check\": \"schema\", \"columns\": {%q: %q}} to hold such a batch back as a data gate",
		prefix, e.Column, value, e.BatchType, e.Field, e.Table, e.TableType, e.Column, e.TableType)
}

// Retriable is false: the same batch never fits.
func (e *MismatchError) Retriable() bool { return false }

// checkFit refuses a batch whose values the table's columns cannot hold exactly. A column of
// the table's type costs nothing; each other column costs one query that stops at the first
// value that does not fit.
func checkFit(ctx context.Context, db *engine.DB, relation string, tbl *table.Table, ref Ref) error {
	cols, err := db.Columns(ctx, relation)
	if err != nil {
		return err
	}
	sc := tbl.Schema()
	for _, c := range cols {
		f, ok := fieldFor(sc, c.Name)
		if !ok {
			continue // a new column: added in the table's schema with the batch's type
		}
		dt := duckType(f.Type)
		if dt == "" {
			continue // nested: written as it is
		}
		id := engine.Ident(c.Name)
		// A value that does not read back as itself; where no value fits (text into a number),
		// that value first, else any value at all.
		bads := []string{fmt.Sprintf("%[1]s IS NOT NULL AND (TRY_CAST(%[1]s AS %[2]s) IS NULL OR CAST(TRY_CAST(%[1]s AS %[2]s) AS %[3]s) IS DISTINCT FROM %[1]s)", id, dt, c.Type)}
		kind := fitOf(c.Type, dt)
		switch kind {
		case fitAsIs, fitCast, fitZone:
			continue
		case fitNone:
			bads = append(bads, id+" IS NOT NULL")
		}
		for i, bad := range bads {
			var v string
			err := db.QueryRow(ctx, fmt.Sprintf("SELECT CAST(%s AS VARCHAR) FROM %s WHERE %s LIMIT 1", id, relation, bad), &v)
			if errors.Is(err, sql.ErrNoRows) || err != nil && kind == fitNone && i == 0 {
				continue // none of them; or types DuckDB cannot cast between at all
			}
			if err != nil {
				return fmt.Errorf("check the batch's column %q against the table's type: %w", c.Name, err)
			}
			return &MismatchError{Table: ref, Column: c.Name, Field: f.Name, Value: v, BatchType: normType(c.Type), TableType: f.Type.String()}
		}
	}
	return nil
}
