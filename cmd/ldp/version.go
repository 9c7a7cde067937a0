package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// versionInfo is what ldp version says: ldp's own version and commit, and the versions of
// what it is built with.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Go        string `json:"go"`
	Platform  string `json:"platform"`
	DuckDB    string `json:"duckdb"`
	IcebergGo string `json:"iceberg_go"`
}

// versionOptions are ldp version's.
type versionOptions struct {
	out output
}

func (o *versionOptions) Validate(cmd *cobra.Command, _ []string) error {
	return o.out.validate(cmd)
}

func (o *versionOptions) Run(_ context.Context, s *streams) error {
	v := versionInfo{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, DuckDB: controllers.DuckDBVersion()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/apache/iceberg-go" {
				v.IcebergGo = d.Version
			}
		}
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" {
				v.Commit = st.Value
			}
		}
	}
	if o.out.JSON() {
		return writeJSON(s.Out, v)
	}
	fmt.Fprintf(s.Out, "ldp        %s\n", v.Version)
	if v.Commit != "" {
		fmt.Fprintf(s.Out, "commit     %s\n", v.Commit)
	}
	fmt.Fprintf(s.Out, "go         %s %s\n", v.Go, v.Platform)
	fmt.Fprintf(s.Out, "duckdb     %s\n", v.DuckDB)
	fmt.Fprintf(s.Out, "iceberg-go %s\n", v.IcebergGo)
	return nil
}

func newVersionCmd(s *streams) *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ldp's version, its commit, and the versions of Go, DuckDB and iceberg-go it is built with",
		Example: `  ldp version
  ldp version -o json | jq -r .duckdb`,
		Args: cobra.NoArgs,
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, false)
	return cmd
}
