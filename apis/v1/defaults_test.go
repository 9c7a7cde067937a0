package v1

import "testing"

// pyiceberg's warehouse is a URI: its path is unescaped once, as a URI's is, so an escaped
// folder name is the folder and not a folder named with the escapes.
func TestWarehouseURIUnescapedOnce(t *testing.T) {
	for uri, want := range map[string]string{
		"file:///srv/my%20specs%20%232%20%2541%20jos%C3%A9/wh": "/srv/my specs #2 %41 josé/wh",
		"file:///srv/wh":        "/srv/wh",
		"file:wh":               "wh",
		"s3://lake/my specs/wh": "s3://lake/my specs/wh",
	} {
		p := Pipeline{Metadata: PipelineMetadata{Target: Target{Catalog: &Catalog{Identifier: "shop", Type: "sql", Warehouse: uri}}}}
		p.Default()
		if got := p.Metadata.Target.Catalog.WarehousePath; got != want {
			t.Errorf("warehouse %q: warehouse_path %q, want %q", uri, got, want)
		}
	}
}
