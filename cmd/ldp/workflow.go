package main

import (
	"github.com/spf13/cobra"
)

func newWorkflowCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Plan or run one window of a workflow",
	}
	cmd.AddCommand(newWorkflowPlanCmd(s), newWorkflowRunCmd(s))
	return cmd
}
