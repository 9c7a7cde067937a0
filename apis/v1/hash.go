package v1

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
)

// specHashOmit are the keys that do not change what a run does: labels, where events go, when
// and how often a run is tried, and which branch it publishes to (env: a window published in
// an environment keeps its key when it is promoted to main). window stays, because its column
// changes which rows a run reads.
var specHashOmit = []string{"who", "what", "where", "description"}

// upstream says when a window may run (after its upstream windows), not what its run does.
var specHashOmitMetadata = []string{"docs", "observability", "schedule", "retries", "env", "upstream"}

// SpecHash is the sha256 of the canonical JSON of what the pipeline does: defaults filled in,
// formats upper-case, write modes lower-case, quality in its object form, and local paths
// relative to the spec's folder, so the same meaning hashes the same in JSON and in YAML, in any
// key order, from any checkout folder.
func (p *Pipeline) SpecHash() (string, error) {
	// Defaults are filled in on a deep copy: p may be read by several runs at once.
	raw, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	var c Pipeline
	if err := json.Unmarshal(raw, &c); err != nil {
		return "", err
	}
	c.Default()
	m := &c.Metadata
	m.Source.Path = specRelPath(p.BaseDir, m.Source.Path)
	m.Target.Path = specRelPath(p.BaseDir, m.Target.Path)
	if m.Source.Credentials != nil {
		m.Source.Credentials.Path = specRelPath(p.BaseDir, m.Source.Credentials.Path)
	}
	if m.Target.Catalog != nil {
		m.Target.Catalog.WarehousePath = specRelPath(p.BaseDir, m.Target.Catalog.WarehousePath)
	}
	if raw, err = json.Marshal(c); err != nil {
		return "", err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", err
	}
	for _, k := range specHashOmit {
		delete(doc, k)
	}
	if md, ok := doc["metadata"].(map[string]any); ok {
		for _, k := range specHashOmitMetadata {
			delete(md, k)
		}
		// The delay says when a window may run, not what its run does.
		if w, ok := md["window"].(map[string]any); ok {
			delete(w, "delay")
		}
	}
	return hashCanonical(doc)
}

func hashCanonical(v any) (string, error) {
	b, err := CanonicalJSON(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// specRelPath writes a local path as the spec means it: relative to the spec's folder, with
// forward slashes. URLs (s3://...) and absolute paths outside the folder are kept as written.
func specRelPath(base, p string) string {
	if p == "" || strings.Contains(p, "://") {
		return p
	}
	if filepath.IsAbs(p) && base != "" {
		if absBase, err := filepath.Abs(base); err == nil {
			if rel, err := filepath.Rel(absBase, p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel)
			}
		}
		return filepath.ToSlash(filepath.Clean(p))
	}
	return filepath.ToSlash(filepath.Clean(p))
}
