package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/controllers/web"
	"github.com/ldp-dev/ldp/internal/redact"
)

// watchOptions are the flags and arguments of the command newWatchCmd builds.
type watchOptions struct {
	args             []string
	resync, debounce time.Duration
	leases           leaseFlags
	format, httpAddr string
	maxWindows       int
	// clock is now, or the instant of the hidden --now (tests pin watch's clock as they pin
	// diff's and tick's).
	clock          func() time.Time
	nowFlag        string
	verbose, quiet bool
}

func (o *watchOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.verbose, o.quiet = chatter(cmd)
	if err := oneOf(cmd, "log-format", o.format, "text", "json"); err != nil {
		return err
	}
	o.clock = now
	if o.nowFlag != "" {
		t, err := parseNow(o.nowFlag)
		if err != nil {
			return usageError(cmd, "%v", err)
		}
		o.clock = func() time.Time { return t }
	}
	return nil
}

func (o *watchOptions) Run(ctx context.Context, s *streams) error {
	out := redact.Writer{W: s.Err}
	opts := &slog.HandlerOptions{}
	if o.quiet {
		opts.Level = slog.LevelWarn
	}
	var h slog.Handler = slog.NewTextHandler(out, opts)
	if o.format == "json" {
		h = slog.NewJSONHandler(out, opts)
	}
	r := runnerFor(s)
	// The runs' own lines (checks, warnings) as the watch's records: JSON lines only under
	// --log-format json.
	r.Log = &logLines{log: slog.New(h), verbose: o.verbose}
	if o.quiet {
		r.Log = io.Discard
	}
	r.Leases = o.leases.options()
	w := &controllers.Watcher{Dir: o.args[0], Runner: r, Resync: o.resync, Debounce: o.debounce,
		MaxWindows: o.maxWindows, Log: slog.New(h), Now: o.clock}
	if o.httpAddr != "" {
		// The status page, its API, /metrics and /healthz beside the controller.
		w.Metrics = controllers.NewMetrics()
		ln, err := web.Listen(o.httpAddr)
		if err != nil {
			return err
		}
		srv := &web.Server{Paths: []string{o.args[0]}, Reconciler: &controllers.Reconciler{Runner: runnerFor(s)}, Metrics: w.Metrics, Now: now, Hosts: web.NamesOf(o.httpAddr)}
		w.Log.Info("serving the status page", "url", "http://"+ln.Addr().String()+"/")
		srv.Now = o.clock // the page plans at the watcher's instant (the hidden --now)
		go web.Serve(ctx, ln, srv.Handler())
	}
	return w.Run(ctx)
}

func newWatchCmd(s *streams) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch DIR",
		Short: "Keep a folder of specs running: reconcile on every change and every minute",
		Long: `Watch DIR and every subfolder that can hold specs (not hidden folders, nor a warehouse's,
which would spend an inotify watch per table, partition and write); on each change to a spec
file (debounced; editors that write a temporary file and rename it work) and every --resync, run what is due and not done,
exactly as ldp schedule tick does and under the same lock, so a tick from cron and a watcher
never both run.

A file that becomes invalid is reported with its positions and does not run; if an earlier
version was valid, that version stays in force until the file is fixed. A deleted file stops
being scheduled; nothing already published is touched.

SIGINT or SIGTERM: the running task finishes, nothing new starts, the lock is released, and
ldp exits 0.`,
		Example: `  ldp watch config/
  ldp watch config/ --log-format json --http 127.0.0.1:9464   # the page, /metrics, /healthz`,
		Args: exactArgs(1, "name the folder to watch, for example: ldp watch config/"),
		RunE: runVerb(o, s),
	}
	o.leases.flags(cmd)
	cmd.Flags().DurationVar(&o.resync, "resync", time.Minute, "reconcile at least this often")
	cmd.Flags().DurationVar(&o.debounce, "debounce", 300*time.Millisecond, "wait this long after a change before reconciling")
	cmd.Flags().StringVar(&o.format, "log-format", "text", "log lines as text or json")
	cmd.Flags().StringVar(&o.httpAddr, "http", "", "serve the status page, its API, Prometheus /metrics and /healthz on this address (127.0.0.1:PORT)")
	cmd.Flags().StringVar(&o.httpAddr, "metrics-addr", "", "the same as --http")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "run at most this many windows per file per reconcile")
	cmd.Flags().StringVar(&o.nowFlag, "now", "", "reconcile as if it were always this time, ISO-8601 (a test seam)")
	cmd.Flags().MarkHidden("now")
	return cmd
}
