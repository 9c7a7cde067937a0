package lake

import (
	"errors"
	"strings"
	"testing"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// TestBatchTypesMeetTheTable: each kind of type change between a batch and the table's column,
// written for real. A wider int promotes the column; values that read back as themselves go
// in cast; a fraction into a long, a long past 2^53 into a double and text into a number are
// refused naming the value, with the table unchanged; a column of nulls goes in whatever its type.
func TestBatchTypesMeetTheTable(t *testing.T) {
	f := newFixture(t)
	f.batch(t, "id, n, d, x", "(1::INTEGER, 1::INTEGER, 1.5::DOUBLE, 1::BIGINT)")
	f.write(t, WriteOptions{Mode: v1.WriteAppend})
	steps := []struct {
		cols, values, refused string
	}{
		{"id, n", "(2::INTEGER, 3000000000::BIGINT)", ""},                      // long into int: promoted
		{"id, n, d", "(3::INTEGER, 4.0::DOUBLE, 7::INTEGER)", ""},              // 4.0 fits a long; int into double
		{"id, n", "(4::INTEGER, 10.49::DOUBLE)", `"n" holds "10.49" (DOUBLE)`}, // rounding refused
		{"id, d", "(5::INTEGER, 9007199254740993::BIGINT)", `"d" holds "9007199254740993" (BIGINT)`},
		{"id, x", "(6::INTEGER, '02134')", `"x" holds "02134" (VARCHAR)`}, // text never becomes a number
		{"id, x", "(7::INTEGER, '7')", `"x" holds "7" (VARCHAR)`},         // not even text that reads back
		{"id, x", "(8::INTEGER, NULL::VARCHAR)", ""},                      // a column of nulls
	}
	for _, s := range steps {
		f.batch(t, s.cols, s.values)
		_, err := f.cat.Write(f.ctx, f.db, "batch", f.ref, WriteOptions{Mode: v1.WriteAppend})
		var me *MismatchError
		switch {
		case s.refused == "" && err != nil:
			t.Errorf("%s: %v", s.values, err)
		case s.refused != "" && (!errors.As(err, &me) || !strings.Contains(err.Error(), s.refused)):
			t.Errorf("%s: %v, want a refusal saying %s", s.values, err, s.refused)
		}
	}
	if got := f.query(t, "SELECT list(id ORDER BY id), list(n ORDER BY id), list(d ORDER BY id), list(x ORDER BY id), typeof(any_value(n)) FROM rides"); got[0] != "[1 2 3 8]|[1 3000000000 4 <nil>]|[1.5 <nil> 7 <nil>]|[1 <nil> <nil> <nil>]|BIGINT" {
		t.Errorf("rows %v", got)
	}
}

func TestFitOf(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     fit
	}{
		{"BIGINT", "BIGINT", fitAsIs}, {"BIGINT", "INTEGER", fitAsIs}, {"DECIMAL(12,2)", "DECIMAL(10,2)", fitAsIs},
		{"INTEGER", "BIGINT", fitCast}, {"INTEGER", "DOUBLE", fitCast}, {"BIGINT", "DECIMAL(38,0)", fitCast},
		{"BIGINT", "DECIMAL(18,0)", fitChecked}, {"DECIMAL(10,2)", "DECIMAL(12,3)", fitCast}, {"BIGINT", "VARCHAR", fitCast},
		{"DATE", "TIMESTAMP", fitCast}, {"TIMESTAMP", "TIMESTAMPTZ", fitZone}, {"TIMESTAMP WITH TIME ZONE", "TIMESTAMP", fitZone},
		{"DOUBLE", "BIGINT", fitChecked}, {"BIGINT", "DOUBLE", fitChecked}, {"DECIMAL(10,2)", "BIGINT", fitChecked},
		{"UBIGINT", "BIGINT", fitChecked}, {"VARCHAR", "BIGINT", fitNone}, {"DOUBLE", "VARCHAR", fitNone}, {"BOOLEAN", "INTEGER", fitNone},
	} {
		if got := fitOf(c.from, c.to); got != c.want {
			t.Errorf("fitOf(%s, %s) = %d, want %d", c.from, c.to, got, c.want)
		}
	}
}
