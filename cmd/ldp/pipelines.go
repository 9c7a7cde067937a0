package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

func newPipelinesCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "pipelines",
		Short: "List the routes a Pipeline can take (source format -> target format)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, r := range controllers.Routes() {
				fmt.Fprintln(s.Out, r)
			}
			return nil
		},
	}
}
