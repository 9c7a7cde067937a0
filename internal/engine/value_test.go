package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// TestPrintRendersAsDuckDB: a value of a user's query reads as DuckDB prints it, a STRUCT's
// fields in their declared order (the driver scans it into an unordered Go map), and as JSON
// with nested values as objects and arrays.
func TestPrintRendersAsDuckDB(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cases := []struct{ sql, text, json string }{
		{`{'zip': 75001, 'city': 'Paris', 'it''s': NULL}`, `{'zip': 75001, 'city': Paris, 'it''s': NULL}`, `{"zip":75001,"city":"Paris","it's":null}`},
		{`{'b': {'z': [1, NULL]}, 'a': 2}`, `{'b': {'z': [1, NULL]}, 'a': 2}`, `{"b":{"z":[1,null]},"a":2}`},
		{`[{'q': 1, 'p': 'x'}]`, `[{'q': 1, 'p': x}]`, `[{"q":1,"p":"x"}]`},
		{`[1, 2]::INTEGER[2]`, `[1, 2]`, `[1,2]`},
		{`map([2, 1], ['z', 'y'])`, `{2=z, 1=y}`, `{"2":"z","1":"y"}`},
		{`union_value(k := 'x')`, `x`, `"x"`},
		{`1.50::DECIMAL(10,2)`, `1.50`, `"1.50"`},
		{`INTERVAL 3 HOUR + INTERVAL 2 DAY`, `2 days 03:00:00`, `"2 days 03:00:00"`},
		{`INTERVAL 14 MONTH`, `1 year 2 months`, `"1 year 2 months"`},
		{`INTERVAL 1500 MILLISECOND`, `00:00:01.5`, `"00:00:01.5"`},
		{`'6a582837-384a-4878-9bb7-35b08242e6ab'::UUID`, `6a582837-384a-4878-9bb7-35b08242e6ab`, `"6a582837-384a-4878-9bb7-35b08242e6ab"`},
		{`TIME '01:02:03.5'`, `01:02:03.5`, `"01:02:03.5"`},
		{`TIMESTAMP '2026-01-01 00:00:00'`, `2026-01-01 00:00:00`, `"2026-01-01 00:00:00"`},
		{`DATE '2026-01-02'`, `2026-01-02`, `"2026-01-02"`},
		{`'nan'::DOUBLE`, `NaN`, `"NaN"`},
		{`0.1::DOUBLE`, `0.1`, `0.1`},
		{`-0.05::DECIMAL(10,3)`, `-0.050`, `"-0.050"`},
		{`12::DECIMAL(4,0)`, `12`, `"12"`},
		{`7::HUGEINT`, `7`, `7`},
		{`'x'`, `x`, `"x"`},
		{`true`, `true`, `true`},
	}
	for _, c := range cases {
		_, rows, err := d.Print(ctx, "SELECT "+c.sql+" AS v")
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		v := rows[0][0]
		if got := fmt.Sprint(v); got != c.text {
			t.Errorf("SELECT %s prints %s, want %s", c.sql, got, c.text)
		}
		if b, err := json.Marshal(v); err != nil || string(b) != c.json {
			t.Errorf("SELECT %s in JSON is %s (%v), want %s", c.sql, b, err, c.json)
		}
	}
	if _, rows, _ := d.Print(ctx, "SELECT NULL AS v"); rows[0][0] != nil {
		t.Errorf("NULL is %#v, want nil", rows[0][0])
	}
}
