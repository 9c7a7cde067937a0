package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// MaxSpecBytes is the largest spec file ldp reads. Discovery passes over larger files, so a
// stray data file in a spec folder is never parsed as a spec.
const MaxSpecBytes = 1 << 20

// Object is a Pipeline or a Workflow.
type Object interface {
	// ObjectKind is KindPipeline or KindWorkflow.
	ObjectKind() string
	// Name is the identifier.
	Name() string
	// File is the path the object was loaded from.
	File() string
}

var (
	_ Object = (*Pipeline)(nil)
	_ Object = (*Workflow)(nil)
)

func (p *Pipeline) ObjectKind() string { return KindPipeline }
func (p *Pipeline) Name() string       { return p.Identifier }
func (p *Pipeline) File() string       { return p.Path }
func (w *Workflow) ObjectKind() string { return KindWorkflow }
func (w *Workflow) Name() string       { return w.Identifier }
func (w *Workflow) File() string       { return w.Path }

// IsYAML reports whether a file name is read as YAML; every other name is read as JSON.
func IsYAML(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml":
		return true
	}
	return false
}

// DecodeError is a spec document that does not decode into an object. The loader
// (internal/specs) turns it into a config error naming the file.
type DecodeError struct {
	Msg string
	Err error
}

func (e *DecodeError) Error() string {
	switch {
	case e.Msg == "":
		return e.Err.Error()
	case e.Err == nil:
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reads a Pipeline or a Workflow from the JSON of a spec document, with defaults filled
// in. path is where the document came from: the base against which its relative paths
// resolve. It checks only what it needs to decode; schemas.Validate reports every problem
// with a position. Reading files and YAML belong to the loader (internal/specs).
func Decode(js []byte, path string) (Object, error) {
	if len(js) > MaxSpecBytes {
		return nil, &DecodeError{Msg: fmt.Sprintf("is %d bytes, larger than the %d-byte limit for spec files", len(js), MaxSpecBytes)}
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, &DecodeError{Msg: "a spec must be a JSON or YAML object", Err: err}
	}
	kind, err := DetectKind(doc)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	base := filepath.Dir(path)
	switch kind {
	case KindWorkflow:
		var w Workflow
		if err := strictDecode(js, &w); err != nil {
			return nil, &DecodeError{Msg: "invalid Workflow (run ldp validate for every problem)", Err: err}
		}
		w.Path, w.BaseDir = path, base
		w.Default()
		return &w, nil
	default:
		var p Pipeline
		if err := strictDecode(js, &p); err != nil {
			return nil, &DecodeError{Msg: "invalid Pipeline (run ldp validate for every problem)", Err: err}
		}
		p.Path, p.BaseDir = path, base
		p.Default()
		return &p, nil
	}
}

func strictDecode(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// DetectKind says which object a decoded spec document holds. A document with no kind is a
// Pipeline when it has metadata.source and metadata.target (the legacy dataset config).
func DetectKind(doc map[string]any) (string, error) {
	if v, ok := doc["apiVersion"]; ok && v != APIVersion {
		return "", fmt.Errorf("unsupported apiVersion %s: this ldp reads %q", quoteAny(v), APIVersion)
	}
	if k, ok := doc["kind"]; ok {
		switch k {
		case KindPipeline, KindWorkflow:
			return k.(string), nil
		}
		return "", fmt.Errorf("unknown kind %s: ldp/v1 has %s", quoteAny(k), strings.Join(Kinds(), " and "))
	}
	if md, ok := doc["metadata"].(map[string]any); ok {
		_, src := md["source"]
		_, tgt := md["target"]
		if src || tgt {
			return KindPipeline, nil
		}
	}
	return "", fmt.Errorf("not an ldp spec: set kind to %s, or give a dataset config metadata.source and metadata.target", strings.Join(Kinds(), " or "))
}

// Kinds lists the kinds of ldp/v1, sorted.
func Kinds() []string {
	k := []string{KindPipeline, KindWorkflow}
	sort.Strings(k)
	return k
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
