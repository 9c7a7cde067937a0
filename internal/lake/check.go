package lake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/ldp-dev/ldp/internal/redact"
)

// Step is one step of a catalog check: what was tried, and the error in plain words if it
// failed.
type Step struct {
	What  string `json:"step"`
	Error string `json:"error,omitempty"`
}

// Check connects to the catalog (done by Open), lists its namespaces, and creates and drops a
// scratch table in namespace ns: what ldp needs of a catalog. It stops at the first failure.
func (c *Catalog) Check(ctx context.Context, ns string) []Step {
	var steps []Step
	do := func(what string, f func() error) bool {
		s := Step{What: what}
		if err := storageHint(f()); err != nil {
			s.Error = redact.String(err.Error())
		}
		steps = append(steps, s)
		return s.Error == ""
	}
	var names []string
	if !do("list namespaces", func() error {
		list, err := c.cat.ListNamespaces(ctx, nil)
		for _, n := range list {
			names = append(names, strings.Join(n, "."))
		}
		return err
	}) {
		return steps
	}
	steps[len(steps)-1].What = fmt.Sprintf("list namespaces (%d: %s)", len(names), strings.Join(names, ", "))
	if !do("create namespace "+ns+" if missing", func() error { return c.ensureNamespace(ctx, ns) }) {
		return steps
	}
	ref := Ref{Namespace: ns, Name: fmt.Sprintf("ldp_catalog_check_%d", rand.Int64N(1e9))}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	if !do("create scratch table "+ref.String(), func() error {
		_, err := c.cat.CreateTable(ctx, ref.ident(), sc)
		return err
	}) {
		return steps
	}
	do("drop scratch table "+ref.String(), func() error { return c.cat.DropTable(ctx, ref.ident()) })
	return steps
}
