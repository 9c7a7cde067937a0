package v1

import (
	"net/url"
	"strings"
	"time"
)

// Defaults of the spec, in one place so that the schema docs, the hash and the runner agree.
const (
	DefaultWriteMode     = WriteAppend
	DefaultOnFailure     = "fail"
	DefaultTimezone      = "UTC"
	DefaultWarehousePath = "warehouse"
	DefaultDbtCommand    = "build"
)

// DefaultLockTimeout is how long a write waits for its table's lock before it gives up with a
// retriable error (ldp run --lock-timeout says it as its default).
const DefaultLockTimeout = 5 * time.Minute

// DbtConfigFile is the file in a dbt project that tells ldp how to run it (the DuckDB file,
// the catalog and the sources): a spec file a dbt task's project holds beside dbt's own.
const DbtConfigFile = "ldp_dbt.json"

// Default fills in every default and puts enumerations in their canonical case, so that two
// specs that mean the same thing are equal.
func (p *Pipeline) Default() {
	if p.APIVersion == "" {
		p.APIVersion = APIVersion
	}
	if p.Kind == "" {
		p.Kind = KindPipeline
	}
	m := &p.Metadata
	m.Source.Format = ParseFormat(string(m.Source.Format))
	m.Source.Engine = strings.ToUpper(m.Source.Engine)
	m.Target.Format = ParseFormat(string(m.Target.Format))
	m.Target.WriteMode = ParseWriteMode(string(m.Target.WriteMode))
	if m.Target.WriteMode == "" {
		m.Target.WriteMode = DefaultWriteMode
	}
	for _, c := range []*Catalog{m.Target.Catalog, m.Source.Catalog} {
		if c != nil && c.Type == CatalogSQL && c.WarehousePath == "" && c.Warehouse != "" {
			// pyiceberg's name for a sql catalog's warehouse: a URI (file:///..., s3://...).
			c.WarehousePath, c.Warehouse = warehouseFromURI(c.Warehouse), ""
		}
	}
	if c := m.Target.Catalog; c != nil && c.WarehousePath == "" {
		c.WarehousePath = DefaultWarehousePath
	}
	for i := range m.Target.PartitionBy {
		m.Target.PartitionBy[i].Transform = strings.ToLower(m.Target.PartitionBy[i].Transform)
	}
	if m.Quality != nil && m.Quality.OnFailure == "" {
		m.Quality.OnFailure = DefaultOnFailure
	}
	m.Window.normalize()
}

// Default fills in every default of a Workflow.
func (w *Workflow) Default() {
	if w.APIVersion == "" {
		w.APIVersion = APIVersion
	}
	w.Metadata.Window.normalize()
	for i := range w.Tasks {
		if d := w.Tasks[i].Dbt; d != nil && d.Command == "" {
			d.Command = DefaultDbtCommand
		}
	}
}

func (w *Window) normalize() {
	if w == nil || w.None {
		return
	}
	w.Size = strings.ToLower(w.Size)
	if w.Timezone == "" {
		w.Timezone = DefaultTimezone
	}
	// The defaults are stored as "": a spec written before these fields hashes as it did.
	if w.NullRows == NullRowsFail {
		w.NullRows = ""
	}
	if w.OutsideRows == OutsideRowsLeave {
		w.OutsideRows = ""
	}
}

// Windowed reports whether the pipeline declares a window object (not absent, not "none").
func (p *Pipeline) Windowed() bool {
	return p.Metadata.Window != nil && !p.Metadata.Window.None
}

// IsIceberg reports whether the pipeline writes to an Iceberg table.
func (p *Pipeline) IsIceberg() bool { return p.Metadata.Target.Format == FormatIceberg }

// warehouseFromURI is the folder of a pyiceberg warehouse URI, unescaped once as the URI it
// is: file:///srv/my%20specs is the folder "my specs" (it became a folder "my%20specs"). An
// object store's location stays as written.
func warehouseFromURI(uri string) string {
	if !strings.HasPrefix(uri, "file:") {
		return uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		return strings.TrimPrefix(uri, "file://")
	}
	if u.Opaque != "" { // file:relative/path
		if p, err := url.PathUnescape(u.Opaque); err == nil {
			return p
		}
		return u.Opaque
	}
	return u.Path
}
