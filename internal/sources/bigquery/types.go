package bigquery

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// field is a column of a result's schema, as the API gives it.
type field struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	Mode   string  `json:"mode"`
	Fields []field `json:"fields"`
}

// cell is one value of a row in the API's f/v shape: a string, null, a list of cells
// (REPEATED) or a row (RECORD).
type cell struct {
	V json.RawMessage `json:"v"`
}

// UnmappableError names a column whose BigQuery type has no Iceberg type.
type UnmappableError struct{ Column, Type, Hint string }

func (e *UnmappableError) Error() string {
	return fmt.Sprintf("column %s: BigQuery type %s has no Iceberg type; %s", e.Column, e.Type, e.Hint)
}

// Retriable is false: the same query has the same column.
func (e *UnmappableError) Retriable() bool { return false }

func columnsOf(fs []field) ([]Column, error) {
	out := make([]Column, len(fs))
	for i, f := range fs {
		t, err := duckType(f, f.Name)
		if err != nil {
			return nil, err
		}
		out[i] = Column{Name: f.Name, Type: t}
	}
	return out, nil
}

// duckType is the DuckDB type a column is read as, which ldp's Iceberg casts map as the issue
// lists: NUMERIC decimal(38,9), TIMESTAMP timestamptz, DATETIME timestamp, REPEATED list,
// RECORD struct.
func duckType(f field, path string) (string, error) {
	var t string
	switch strings.ToUpper(f.Type) {
	case "STRING", "GEOGRAPHY", "JSON":
		t = "VARCHAR"
	case "INTEGER", "INT64":
		t = "BIGINT"
	case "FLOAT", "FLOAT64":
		t = "DOUBLE"
	case "NUMERIC":
		t = "DECIMAL(38,9)"
	case "BOOLEAN", "BOOL":
		t = "BOOLEAN"
	case "TIMESTAMP":
		t = "TIMESTAMPTZ"
	case "DATETIME":
		t = "TIMESTAMP"
	case "DATE":
		t = "DATE"
	case "TIME":
		t = "TIME"
	case "RECORD", "STRUCT":
		parts := make([]string, len(f.Fields))
		for i, sub := range f.Fields {
			st, err := duckType(sub, path+"."+sub.Name)
			if err != nil {
				return "", err
			}
			parts[i] = strconv.Quote(sub.Name) + " " + st
		}
		t = "STRUCT(" + strings.Join(parts, ", ") + ")"
	case "BIGNUMERIC":
		return "", &UnmappableError{path, f.Type, "an Iceberg decimal holds 38 digits: CAST it to NUMERIC (or STRING) in the query"}
	case "BYTES":
		return "", &UnmappableError{path, f.Type, "select TO_BASE64 of it in the query"}
	default:
		return "", &UnmappableError{path, f.Type, "CAST it to STRING in the query"}
	}
	if strings.EqualFold(f.Mode, "REPEATED") {
		t += "[]"
	}
	return t, nil
}

func record(fs []field, cells []cell) (map[string]any, error) {
	if len(cells) != len(fs) {
		return nil, fmt.Errorf("BigQuery returned a row of %d values for %d columns", len(cells), len(fs))
	}
	row := make(map[string]any, len(fs))
	for i, f := range fs {
		v, err := value(f, cells[i].V)
		if err != nil {
			return nil, err
		}
		row[f.Name] = v
	}
	return row, nil
}

// value turns an f/v value into the JSON value DuckDB reads as the column's type.
func value(f field, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if strings.EqualFold(f.Mode, "REPEATED") {
		var items []cell
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		one := f
		one.Mode = ""
		out := make([]any, len(items))
		for i, it := range items {
			v, err := value(one, it.V)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	if t := strings.ToUpper(f.Type); t == "RECORD" || t == "STRUCT" {
		var r struct{ F []cell }
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		return record(f.Fields, r.F)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("column %s: %w", f.Name, err)
	}
	switch strings.ToUpper(f.Type) {
	case "INTEGER", "INT64", "FLOAT", "FLOAT64":
		if _, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "nN") {
			return json.Number(s), nil
		}
		return s, nil // NaN, Infinity: DuckDB reads the words
	case "BOOLEAN", "BOOL":
		return strings.EqualFold(s, "true"), nil
	case "TIMESTAMP":
		// formatOptions.useInt64Timestamp: microseconds since the epoch.
		us, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("column %s: TIMESTAMP %q is not microseconds since the epoch", f.Name, s)
		}
		return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.999999Z07:00"), nil
	}
	return s, nil
}
