package v1

import (
	"encoding/json"
	"testing"
)

// TestVocabulariesParseOnce: a target decoded from JSON holds its format and write mode in
// their canonical case, whatever case the spec wrote, so the code compares them with ==; a
// catalog's type stays as written (the schema is case-sensitive there) and "" is local.
func TestVocabulariesParseOnce(t *testing.T) {
	var tg Target
	if err := json.Unmarshal([]byte(`{"name": "o", "format": "Iceberg", "write_mode": "UPSERT", "catalog": {"identifier": "c"}}`), &tg); err != nil {
		t.Fatal(err)
	}
	if tg.Format != FormatIceberg || tg.WriteMode != WriteUpsert {
		t.Errorf("format, write_mode = %q, %q; want ICEBERG, upsert", tg.Format, tg.WriteMode)
	}
	if got := tg.Catalog.Type.Resolved(); got != CatalogLocal {
		t.Errorf("a catalog with no type resolves to %q, want local", got)
	}
	out, err := json.Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"o","format":"ICEBERG","catalog":{"identifier":"c"},"write_mode":"upsert"}`; string(out) != want {
		t.Errorf("marshal = %s, want %s", out, want)
	}
	if err := json.Unmarshal([]byte(`{"name": "o", "format": 1}`), &tg); err == nil {
		t.Error("a format that is not a string decoded")
	}
}

func TestIsPostgresURI(t *testing.T) {
	for uri, want := range map[string]bool{
		"postgres://ldp@db:5432/ldp":   true,
		"postgresql://ldp@db:5432/ldp": true,
		"/data/catalog.db":             false,
		"file:/data/catalog.db":        false,
		"warehouse/postgres.db":        false,
		"":                             false,
	} {
		if got := IsPostgresURI(uri); got != want {
			t.Errorf("IsPostgresURI(%q) = %v, want %v", uri, got, want)
		}
	}
}
