package quality

import (
	"regexp"
	"strings"
)

var decimalRe = regexp.MustCompile(`^DECIMAL\((\d+),\s*(\d+)\)$`)

// ArrowType names a DuckDB type as pyarrow prints it, the names the contract's schema check
// uses: BIGINT is int64, VARCHAR is string, TIMESTAMP is timestamp[us].
func ArrowType(duckType string) string {
	t := strings.ToUpper(strings.TrimSpace(duckType))
	switch t {
	case "BIGINT":
		return "int64"
	case "INTEGER":
		return "int32"
	case "SMALLINT":
		return "int16"
	case "TINYINT":
		return "int8"
	case "UBIGINT":
		return "uint64"
	case "UINTEGER":
		return "uint32"
	case "USMALLINT":
		return "uint16"
	case "UTINYINT":
		return "uint8"
	case "DOUBLE":
		return "double"
	case "FLOAT", "REAL":
		return "float"
	case "VARCHAR":
		return "string"
	case "BOOLEAN":
		return "bool"
	case "DATE":
		return "date32[day]"
	case "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMP_MS", "TIMESTAMP_S":
		return "timestamp[us]"
	case "TIMESTAMP WITH TIME ZONE":
		return "timestamp[us, tz=UTC]"
	case "TIME":
		return "time64[us]"
	case "BLOB":
		return "binary"
	}
	if m := decimalRe.FindStringSubmatch(t); m != nil {
		return "decimal128(" + m[1] + ", " + m[2] + ")"
	}
	return strings.ToLower(t)
}

// NormalizeType reads the names a user may write for a type (pyarrow's, SQL's, Iceberg's) as
// ArrowType spells them.
func NormalizeType(name string) string {
	n := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), " ", ""))
	switch n {
	case "int64", "bigint", "long", "int8b":
		return "int64"
	case "int32", "int", "integer":
		return "int32"
	case "int16", "smallint":
		return "int16"
	case "int8", "tinyint":
		return "int8"
	case "double", "float64", "float8":
		return "double"
	case "float", "float32", "real", "float4":
		return "float"
	case "string", "utf8", "large_string", "large_utf8", "varchar", "str", "text":
		return "string"
	case "bool", "boolean":
		return "bool"
	case "date", "date32", "date32[day]":
		return "date32[day]"
	case "timestamp", "timestamp[us]", "timestamp[ns]", "timestamp[ms]", "timestamp[s]":
		return "timestamp[us]"
	case "timestamptz", "timestamp[us,tz=utc]", "timestamp[ns,tz=utc]", "timestamp[us,tz=etc/utc]":
		return "timestamp[us, tz=UTC]"
	case "binary", "blob", "bytes":
		return "binary"
	}
	if strings.HasPrefix(n, "decimal") {
		return ArrowType(strings.ToUpper(strings.Replace(strings.Replace(n, "decimal128", "decimal", 1), ",", ", ", 1)))
	}
	return n
}
