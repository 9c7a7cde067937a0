package kube

import (
	"io"

	"sigs.k8s.io/yaml"
)

// WriteYAML writes each object as a YAML document, as kubectl apply -f reads a stream.
func WriteYAML[T any](w io.Writer, objs []T) error {
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
