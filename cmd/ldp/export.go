package main

import (
	"context"

	"github.com/spf13/cobra"
)

// exportK8sOptions are ldp export k8s's.
type exportK8sOptions struct {
	paths     []string
	namespace string
}

func (o *exportK8sOptions) Validate(_ *cobra.Command, args []string) error {
	o.paths = args
	return nil
}

func (o *exportK8sOptions) Run(_ context.Context, s *streams) error { return exportK8s(s, o) }

// exportCRDsOptions are ldp export crds's.
type exportCRDsOptions struct{}

func (o *exportCRDsOptions) Validate(*cobra.Command, []string) error { return nil }

func (o *exportCRDsOptions) Run(_ context.Context, s *streams) error { return exportCRDs(s) }

func newExportCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write ldp's specs in another system's form (Kubernetes objects)",
	}
	k := &exportK8sOptions{}
	k8sCmd := &cobra.Command{
		Use:   "k8s FILE|DIR...",
		Short: "Turn ldp/v1 spec files into Pipeline and Workflow objects for kubectl apply -f",
		Long: `Write a Pipeline object (ldp.dev/v1) for each dataset config and a Workflow object for each
workflow file found as ldp diff finds them, as YAML documents on stdout. The spec of each is
the body of its file. Names are the identifiers made Kubernetes names (daily_orders becomes
daily-orders; the identifier, which the idempotency keys are made of, stays in
spec.identifier), and a workflow's task names the Pipeline object of the dataset config it
named. Paths in a spec (a source file, a warehouse folder) are kept as written: on a cluster
they must be object-store locations or paths the Jobs' image holds. A catalog no pod can share
(a local catalog, a sql catalog on a SQLite file or a warehouse folder) is exported with a
warning: ldp controller's webhook refuses it.`,
		Example: `  ldp export k8s config/ > ldp-objects.yaml && kubectl apply -f ldp-objects.yaml
  ldp export k8s workflow.json -n shop | kubectl apply -f -`,
		Args: cobra.MinimumNArgs(1),
		RunE: runVerb(k, s),
	}
	k8sCmd.Flags().StringVarP(&k.namespace, "namespace", "n", "", "the namespace to put the objects in (default: kubectl's)")
	crds := &cobra.Command{
		Use:     "crds",
		Short:   "Print the CustomResourceDefinitions of Pipeline and Workflow (config/crd holds them)",
		Example: `  ldp export crds | kubectl apply -f -`,
		Args:    cobra.NoArgs,
		RunE:    runVerb(&exportCRDsOptions{}, s),
	}
	cmd.AddCommand(k8sCmd, crds)
	return cmd
}
