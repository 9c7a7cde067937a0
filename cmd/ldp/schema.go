package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/schemas"
)

// schemaOptions are ldp schema's: which kind to print ("" for either).
type schemaOptions struct {
	kind string
}

func (o *schemaOptions) Validate(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		switch strings.ToLower(args[0]) {
		case "pipeline":
			o.kind = "Pipeline"
		case "workflow":
			o.kind = "Workflow"
		default:
			return usageError(cmd, "unknown kind %q: ldp schema takes pipeline or workflow", args[0])
		}
	}
	return nil
}

func (o *schemaOptions) Run(_ context.Context, s *streams) error {
	b, err := schemas.JSONSchema(o.kind)
	if err != nil {
		return err
	}
	_, err = s.Out.Write(append(b, '\n'))
	return err
}

func newSchemaCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [pipeline|workflow]",
		Short: "Print the JSON Schema of ldp/v1 specs, for editors",
		Long: `Print a JSON Schema (draft 2020-12) of a Pipeline, a Workflow, or (with no argument) of
either. Point your editor at it to get completion and checks while you type; ldp validate
remains the full check (time zones, cron expressions, the task graph).`,
		Example: `  ldp schema > .vscode/ldp.schema.json
  ldp schema pipeline
  ldp schema workflow`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"pipeline", "workflow"},
		RunE:      runVerb(&schemaOptions{}, s),
	}
}
