package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/web"
)

// uiOptions are ldp ui's.
type uiOptions struct {
	paths []string
	addr  string
	env   string
}

func (o *uiOptions) Validate(cmd *cobra.Command, args []string) error {
	o.paths = args
	if len(o.paths) == 0 {
		o.paths = []string{"."}
	}
	return validEnv(cmd, o.env)
}

func (o *uiOptions) Run(ctx context.Context, s *streams) error {
	ln, err := web.Listen(o.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "ldp ui: http://%s/ (read-only; Ctrl-C stops it)\n", ln.Addr())
	srv := &web.Server{Paths: o.paths, Reconciler: &controllers.Reconciler{Runner: runnerFor(s)}, Now: now, Hosts: web.NamesOf(o.addr), Env: o.env}
	return web.Serve(ctx, ln, srv.Handler())
}

func newUICmd(s *streams) *cobra.Command {
	o := &uiOptions{}
	cmd := &cobra.Command{
		Use:   "ui [FILE|DIR...]",
		Short: "Serve a read-only status page: every object's windows by task and state",
		Long: `Serve, on --addr (127.0.0.1 unless told otherwise), a page of the objects under the paths:
for each, a row per task (in run order) and a column per window in its time zone, each cell
published, missing, unfinished, blocked by a data gate, failed, retrying, upstream_failed or
skipped, with a bar of the proportions per object, the next fire, missed windows and invalid
specs with their positions. A cell shows its key, run, attempt, snapshot, rows, checks, error,
the last lines of its run in the ledger, and the command that runs it again. The page polls
/api/status (what ldp status -o json prints) and redraws when it changes. /metrics serves
Prometheus metrics and /healthz answers ok. Nothing on the page writes. With no path, the
current folder.`,
		Example: `  ldp ui
  ldp ui config/
  ldp ui ldp-demo --addr 127.0.0.1:8090
  ldp ui config/ --env dev`,
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8080", "the address to serve on")
	addEnvFlag(cmd, &o.env, "show environment NAME: the windows on its branches and its own runs (see ldp env)")
	return cmd
}
