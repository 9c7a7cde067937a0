package specs

import (
	"bytes"
	"errors"
	"io/fs"

	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Read reads a Pipeline or a Workflow from a JSON or YAML file, with defaults filled in, without
// validating it (Load validates). Problems are config errors naming the file.
func Read(path string) (v1.Object, error) { return ReadFS(OS, path) }

// ReadFS is Read of the file path of fsys.
func ReadFS(fsys fs.FS, path string) (v1.Object, error) {
	data, err := fs.ReadFile(orOS(fsys), path)
	if err != nil {
		return nil, &ldperr.ConfigError{File: path, Msg: "cannot read spec", Err: err}
	}
	return Decode(data, path)
}

// ReadPipeline reads path and fails unless it holds a Pipeline.
func ReadPipeline(path string) (*v1.Pipeline, error) { return ReadPipelineFS(OS, path) }

// ReadPipelineFS is ReadPipeline of the file path of fsys.
func ReadPipelineFS(fsys fs.FS, path string) (*v1.Pipeline, error) {
	obj, err := ReadFS(fsys, path)
	return asPipeline(path, obj, err, "is a %s, not a Pipeline (a dataset config)")
}

// LoadPipeline loads path as Load does (checked as ldp validate checks it) and fails unless it
// holds a Pipeline: what a command that takes a dataset config reads.
func LoadPipeline(path string) (*v1.Pipeline, error) {
	obj, err := Load(path)
	return asPipeline(path, obj, err, "is a %s; this command takes a Pipeline (a dataset config)")
}

// asPipeline is obj as a Pipeline, or err, or a config error saying (by format, with the
// object's kind) that path holds something else.
func asPipeline(path string, obj v1.Object, err error, format string) (*v1.Pipeline, error) {
	if err != nil {
		return nil, err
	}
	p, ok := obj.(*v1.Pipeline)
	if !ok {
		return nil, ldperr.Configf(path, format, obj.ObjectKind())
	}
	return p, nil
}

// Decode reads a spec from the bytes of a file: YAML (by path's extension) is turned into
// JSON, then v1.Decode makes the object. path names it in errors and is the base against which
// its relative paths resolve.
func Decode(data []byte, path string) (v1.Object, error) {
	if len(data) > v1.MaxSpecBytes {
		return nil, ldperr.Configf(path, "is %d bytes, larger than the %d-byte limit for spec files", len(data), v1.MaxSpecBytes)
	}
	js, err := ToJSON(data, path)
	if err != nil {
		return nil, err
	}
	obj, err := v1.Decode(js, path)
	var de *v1.DecodeError
	if errors.As(err, &de) {
		return nil, &ldperr.ConfigError{File: path, Msg: de.Msg, Err: de.Err}
	}
	return obj, err
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
	if !v1.IsYAML(path) {
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
