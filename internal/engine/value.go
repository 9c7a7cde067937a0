package engine

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"
)

// Value is one value of a result printed for a user (ldp query): String is DuckDB's own
// rendering, so a STRUCT reads {'city': Paris, 'zip': 75001} and a list [1, 2], not as the Go
// map and slice the driver scans them into; MarshalJSON gives nested values as JSON objects and
// arrays. The driver scans a STRUCT into a Go map, which has no order, so the column's type
// (its fields in declared order) goes with the value.
type Value struct {
	v any
	t *duckType
}

// Print runs a query and returns its column names and every row, each value a Value (nil for
// NULL). For results small enough to print.
func (d *DB) Print(ctx context.Context, query string) ([]string, [][]any, error) {
	return d.all(ctx, query, true)
}

// all runs a query and reads every row, each value wrapped in a Value when printable says so.
func (d *DB) all(ctx context.Context, query string, printable bool) ([]string, [][]any, error) {
	d.forget() // a user's SQL may be any statement
	rows, err := d.Query(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, nil, err
	}
	cols := make([]string, len(cts))
	types := make([]*duckType, len(cts))
	for i, ct := range cts {
		cols[i], types[i] = ct.Name(), parseType(ct.DatabaseTypeName())
	}
	var all [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if printable && v != nil {
				vals[i] = Value{v: v, t: types[i]}
			}
		}
		all = append(all, vals)
	}
	return cols, all, rows.Err()
}

// duckType is the shape of a DuckDB type as much as printing needs: a STRUCT's or UNION's
// fields in order, a list's element, a MAP's key and value; a scalar's name.
type duckType struct {
	name   string // STRUCT, UNION, LIST, MAP or the scalar's name (DECIMAL for DECIMAL(10,2))
	fields []field
	elem   *duckType // a LIST's element; a MAP's value
	key    *duckType // a MAP's key
}

type field struct {
	name string
	t    *duckType
}

// parseType reads a type as the driver names it: INTEGER[], STRUCT("a" INTEGER, "b" VARCHAR[]),
// MAP(INTEGER, VARCHAR), UNION("k" VARCHAR), INTEGER[3].
func parseType(s string) *duckType {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "]") {
		if i := strings.LastIndexByte(s, '['); i > 0 && !strings.ContainsAny(s[i:], "()\"") {
			return &duckType{name: "LIST", elem: parseType(s[:i])}
		}
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return &duckType{name: s}
	}
	name, inner := s[:open], s[open+1:len(s)-1]
	switch name {
	case "STRUCT", "UNION":
		t := &duckType{name: name}
		for _, part := range splitTop(inner) {
			n, rest := fieldName(part)
			t.fields = append(t.fields, field{name: n, t: parseType(rest)})
		}
		return t
	case "MAP":
		if parts := splitTop(inner); len(parts) == 2 {
			return &duckType{name: name, key: parseType(parts[0]), elem: parseType(parts[1])}
		}
	}
	return &duckType{name: name}
}

// splitTop splits a type's arguments at the commas outside parentheses and quotes.
func splitTop(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// fieldName splits `"name" TYPE` (a doubled quote inside the name is one) or `name TYPE`.
func fieldName(s string) (name, rest string) {
	if strings.HasPrefix(s, `"`) {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] == '"' {
				if i+1 < len(s) && s[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				return b.String(), s[i+1:]
			}
			b.WriteByte(s[i])
		}
		return b.String(), ""
	}
	name, rest, _ = strings.Cut(s, " ")
	return name, rest
}

func (v Value) String() string { return text(v.v, v.t, false) }

// MarshalJSON writes numbers and booleans as JSON's, a STRUCT as an object in its fields'
// order, a list as an array, a MAP as an object keyed by each key's text, and every other
// value (a DECIMAL, so no digit is lost; a time; NaN) as its text.
func (v Value) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	writeJSON(&b, v.v, v.t)
	return []byte(b.String()), nil
}

// text renders v as DuckDB does; nested says v is inside a STRUCT, list or MAP, where NULL
// reads NULL and a string is left unquoted, as DuckDB prints them.
func text(v any, t *duckType, nested bool) string {
	if v == nil {
		return "NULL"
	}
	if t == nil {
		t = &duckType{}
	}
	switch x := v.(type) {
	case map[string]any:
		if t.name != "STRUCT" {
			break // a JSON column's object
		}
		parts := make([]string, 0, len(t.fields))
		for _, f := range t.fields {
			parts = append(parts, "'"+strings.ReplaceAll(f.name, "'", "''")+"': "+text(x[f.name], f.t, true))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = text(e, t.elem, true)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		parts := make([]string, len(keys))
		for i := range keys {
			parts[i] = text(keys[i], t.key, true) + "=" + text(vals[i], t.elem, true)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case duckdb.Union:
		for _, f := range t.fields {
			if f.name == x.Tag {
				return text(x.Value, f.t, nested)
			}
		}
		return text(x.Value, nil, nested)
	case duckdb.Interval:
		return interval(x)
	case duckdb.Decimal:
		return decimal(x)
	case time.Time:
		if t.name == "TIME" {
			return strings.TrimSuffix(x.Format("15:04:05.999999"), ".")
		}
		if t.name == "DATE" || t.name == "" && x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.UTC().Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case []byte:
		if t.name == "UUID" && len(x) == 16 {
			return uuid.UUID(x).String()
		}
		return hex.EncodeToString(x)
	case *big.Int:
		return x.String()
	}
	if m, ok := v.(map[string]any); ok {
		b, _ := json.Marshal(m)
		return string(b)
	}
	return fmt.Sprint(v)
}

func writeJSON(b *strings.Builder, v any, t *duckType) {
	if t == nil {
		t = &duckType{}
	}
	quote := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
		return
	case bool, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64:
		fmt.Fprint(b, x)
		return
	case *big.Int:
		b.WriteString(x.String())
		return
	case float64, float32:
		f := x.(float64)
		if f32, ok := x.(float32); ok {
			f = float64(f32)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			quote(text(v, t, false))
			return
		}
		q, _ := json.Marshal(x)
		b.Write(q)
		return
	case map[string]any:
		if t.name != "STRUCT" {
			q, _ := json.Marshal(x) // a JSON column's object
			b.Write(q)
			return
		}
		b.WriteByte('{')
		for i, f := range t.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			quote(f.name)
			b.WriteString(": ")
			writeJSON(b, x[f.name], f.t)
		}
		b.WriteByte('}')
		return
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, e, t.elem)
		}
		b.WriteByte(']')
		return
	case duckdb.OrderedMap:
		keys, vals := x.Keys(), x.Values()
		b.WriteByte('{')
		for i := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			quote(text(keys[i], t.key, true))
			b.WriteString(": ")
			writeJSON(b, vals[i], t.elem)
		}
		b.WriteByte('}')
		return
	case duckdb.Union:
		for _, f := range t.fields {
			if f.name == x.Tag {
				writeJSON(b, x.Value, f.t)
				return
			}
		}
		writeJSON(b, x.Value, nil)
		return
	}
	quote(text(v, t, false))
}

// decimal renders a DECIMAL with its scale's digits, as DuckDB does (1.50 for DECIMAL(10,2)).
func decimal(d duckdb.Decimal) string {
	if d.Value == nil {
		return "0"
	}
	digits := new(big.Int).Abs(d.Value).String()
	sign := ""
	if d.Value.Sign() < 0 {
		sign = "-"
	}
	scale := int(d.Scale)
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
}

// interval renders an INTERVAL as DuckDB does: 1 year 2 months 3 days 04:05:06.5.
func interval(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, one string) {
		if n != 0 {
			s := one
			if n != 1 && n != -1 {
				s += "s"
			}
			parts = append(parts, strconv.FormatInt(n, 10)+" "+s)
		}
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if us := iv.Micros; us != 0 || len(parts) == 0 {
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, us/3_600_000_000, us/60_000_000%60, us/1_000_000%60)
		if frac := us % 1_000_000; frac != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}
