package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

// pipelinesOptions are ldp pipelines': it takes none.
type pipelinesOptions struct{}

func (pipelinesOptions) Validate(*cobra.Command, []string) error { return nil }

func (pipelinesOptions) Run(_ context.Context, s *streams) error {
	for _, r := range controllers.Routes() {
		fmt.Fprintln(s.Out, r)
	}
	return nil
}

func newPipelinesCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "pipelines",
		Short: "List the routes a Pipeline can take (source format -> target format)",
		Args:  cobra.NoArgs,
		RunE:  runVerb(pipelinesOptions{}, s),
	}
}
