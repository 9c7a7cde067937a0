package v1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"

	"github.com/ldp-dev/ldp/internal/ldperr"
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

// Load reads a Pipeline or a Workflow from a JSON or YAML file, with defaults filled in.
// It checks only what it needs to decode; schemas.Validate reports every problem with a position.
func Load(path string) (Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ldperr.ConfigError{File: path, Msg: "cannot read spec", Err: err}
	}
	return Decode(data, path)
}

// LoadPipeline loads path and fails unless it holds a Pipeline.
func LoadPipeline(path string) (*Pipeline, error) {
	obj, err := Load(path)
	if err != nil {
		return nil, err
	}
	p, ok := obj.(*Pipeline)
	if !ok {
		return nil, ldperr.Configf(path, "is a %s, not a Pipeline (a dataset config)", obj.ObjectKind())
	}
	return p, nil
}

// Decode reads a spec from data; path names it in errors, decides JSON or YAML by its extension,
// and is the base against which the spec's relative paths resolve.
func Decode(data []byte, path string) (Object, error) {
	if len(data) > MaxSpecBytes {
		return nil, ldperr.Configf(path, "is %d bytes, larger than the %d-byte limit for spec files", len(data), MaxSpecBytes)
	}
	js, err := ToJSON(data, path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, &ldperr.ConfigError{File: path, Msg: "a spec must be a JSON or YAML object", Err: err}
	}
	kind, err := DetectKind(doc)
	if err != nil {
		return nil, &ldperr.ConfigError{File: path, Err: err}
	}
	base := filepath.Dir(path)
	switch kind {
	case KindWorkflow:
		var w Workflow
		if err := strictDecode(js, &w); err != nil {
			return nil, &ldperr.ConfigError{File: path, Msg: "invalid Workflow (run ldp validate for every problem)", Err: err}
		}
		w.Path, w.BaseDir = path, base
		w.Default()
		return &w, nil
	default:
		var p Pipeline
		if err := strictDecode(js, &p); err != nil {
			return nil, &ldperr.ConfigError{File: path, Msg: "invalid Pipeline (run ldp validate for every problem)", Err: err}
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

// ToJSON turns the bytes of a spec file into JSON: YAML is converted, JSON is passed through.
//
// YAML is read with CUE's decoder, the one package schemas validates with, so that a value
// means the same to both: it follows YAML 1.2, where yes, no and on stay strings (a YAML 1.1
// reader would turn accepted_values: [yes, no] into booleans after validation passed).
func ToJSON(data []byte, path string) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte-order mark is not content
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ldperr.Configf(path, "is empty")
	}
	if !IsYAML(path) {
		return data, nil
	}
	f, err := cueyaml.Extract(path, data)
	if err != nil {
		return nil, &ldperr.ConfigError{File: path, Msg: "invalid YAML", Err: err}
	}
	v := cuecontext.New().BuildFile(f)
	js, err := v.MarshalJSON()
	if err != nil {
		return nil, &ldperr.ConfigError{File: path, Msg: "invalid YAML", Err: err}
	}
	return js, nil
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
