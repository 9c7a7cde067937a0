package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
)

func newScheduleCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Run a folder of scheduled specs from cron or launchd, with no service",
		Long: `ldp schedule tick DIR runs every window that is due and not done for every scheduled
workflow and dataset config under DIR, and exits; cron or launchd calls it every 5 minutes
(ldp schedule install --print prints the recipe). ldp schedule list DIR shows what is
scheduled, due and missed.`,
	}
	cmd.AddCommand(newTickCmd(s), newListCmd(s), newInstallCmd(s))
	return cmd
}

func parseNow(v string) (time.Time, error) {
	if v == "" {
		return now(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, fmt.Errorf("--now %q: want an ISO-8601 time with an offset, such as 2026-08-05T02:05:00Z", v)
	}
	return t, nil
}

// tickOptions are the flags and arguments of the command newTickCmd builds.
type tickOptions struct {
	args       []string
	now        string
	maxWindows int
	leases     leaseFlags
	json       bool
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *tickOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return nil
}

func (o *tickOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	r := runnerFor(s)
	r.Leases = o.leases.options()
	res, err := r.Tick(ctx, o.args[0], t, o.maxWindows)
	if err != nil {
		return err
	}
	if o.json {
		if err := writeJSON(s.Out, withExitCode{res, outcomeCode(res.Outcome)}); err != nil {
			return err
		}
	}
	if res.Locked != "" {
		fmt.Fprintf(s.Err, "another tick holds %s; nothing to do\n", displayPath(res.Locked))
		return nil
	}
	for _, f := range res.Files {
		for _, p := range f.Problems {
			p.File = displayPath(p.File)
			fmt.Fprintln(s.Err, p.String())
		}
		if f.Error != "" {
			fmt.Fprintf(s.Err, "ldp: %s: %s\n", displayPath(f.File), f.Error)
		}
		if o.json {
			continue
		}
		for _, r := range f.Ran {
			printResult(s, r)
		}
		if f.Waiting > 0 {
			fmt.Fprintf(s.Out, "%s: %d more %s wait for the next tick\n", displayPath(f.File), f.Waiting, plural(f.Waiting, "window", "windows"))
		}
	}
	return outcomeExit(res.Outcome)
}

func newTickCmd(s *streams) *cobra.Command {
	o := &tickOptions{}
	cmd := &cobra.Command{
		Use:   "tick DIR",
		Short: "Run every due window that is not done, for every scheduled file under DIR",
		Long: `For each scheduled file under DIR (a workflow, or a dataset config with a schedule or a
when such as daily), run the windows that are due at now and not done: the latest fire's
window, or with metadata.catchup every fire's window since metadata.start, oldest first, at
most --max-windows per file (the rest wait for the next tick). A window whose last run
failed, was blocked or never finished runs as the next attempt of that run.

A tick holds DIR/.ldp/locks/schedule.lock without waiting: a tick that finds it held prints
which lock and exits 0. An invalid scheduled file is reported and the others still run.

Exit status: 0, 3 when a data gate is the only problem, 1 when a window failed, a file could
not be ticked, or a scheduled file is not valid.`,
		Example: `  ldp schedule tick config/
  ldp schedule tick config/ --now 2026-08-05T02:05:00Z`,
		Args: exactArgs(1, "name the folder of specs, for example: ldp schedule tick config/"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "tick as if it were this time, ISO-8601 (default: now)")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "run at most this many windows per file")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	o.leases.flags(cmd)
	return cmd
}

// listOptions are the flags and arguments of the command newListCmd builds.
type listOptions struct {
	args       []string
	now        string
	maxWindows int
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *listOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return nil
}

func (o *listOptions) Run(ctx context.Context, s *streams) error {
	t, err := parseNow(o.now)
	if err != nil {
		return usageError(o.cmd, "%v", err)
	}
	found, err := controllers.DiscoverScheduled(o.args[0])
	if err != nil {
		return err
	}
	bad := false
	for _, sc := range found {
		if len(sc.Problems) > 0 {
			bad = true
			fmt.Fprintf(s.Out, "%s: not valid\n", displayPath(sc.Path))
			for _, p := range sc.Problems {
				p.File = displayPath(p.File)
				fmt.Fprintln(s.Out, "  "+p.String())
			}
			continue
		}
		if err := listOne(o.cmd, s, sc, t, o.maxWindows); err != nil {
			bad = true
			fmt.Fprintf(s.Out, "  error: %v\n", err)
		}
	}
	if len(found) == 0 {
		fmt.Fprintf(s.Out, "nothing is scheduled under %s\n", displayPath(o.args[0]))
	}
	if bad {
		return failedExit()
	}
	return nil
}

func newListCmd(s *streams) *cobra.Command {
	o := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list DIR",
		Short: "Show what is scheduled under DIR, what is due and what was missed",
		Long: `For each scheduled file: its kind, schedule, time zone, window size and catch-up setting,
the next fire (in UTC and in the spec's time zone, each said), the last window the ledger holds and
how its last run ended, the windows that are due, and the windows that were missed (not done,
and not run by the next tick because catch-up is off), with the command that fills them.
It takes no lock and writes nothing.`,
		Example: `  ldp schedule list config/`,
		Args:    exactArgs(1, "name the folder of specs, for example: ldp schedule list config/"),
		RunE:    runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.now, "now", "", "list as if it were this time, ISO-8601 (default: now)")
	cmd.Flags().IntVar(&o.maxWindows, "max-windows", 1000, "name at most this many missed windows")
	return cmd
}

func listOne(cmd *cobra.Command, s *streams, sc controllers.Scheduled, t time.Time, maxWindows int) error {
	wf := sc.WF
	st, err := controllers.StatusOf(cmd.Context(), sc, t, maxWindows)
	if err != nil {
		return err
	}
	size := st.Size
	if size == "" {
		size = "(interval between fires)"
	}
	fmt.Fprintf(s.Out, "%s: %s, schedule %q in %s, window %s, catchup %t\n", displayPath(sc.Path), st.Kind, wf.Schedule, wf.Window.Location, size, sc.Catchup)
	if !st.NextFire.IsZero() {
		fmt.Fprintf(s.Out, "  next fire   %s UTC (%s in the spec's zone, %s)\n", st.NextFire.UTC().Format(time.RFC3339), st.NextFire.In(wf.Window.Location).Format("2006-01-02 15:04 MST"), wf.Window.Location)
	}
	if st.LastWindow != "" {
		fmt.Fprintf(s.Out, "  last run    %s %s\n", st.LastWindow, st.LastEnded)
	} else {
		fmt.Fprintln(s.Out, "  last run    none in the ledger")
	}
	if len(st.Due) == 0 {
		fmt.Fprintln(s.Out, "  due         none: every due window is done")
	} else {
		var due []string
		for _, p := range st.Due {
			due = append(due, p.Start+"/"+p.End)
		}
		fmt.Fprintf(s.Out, "  due         %s\n", strings.Join(due, ", "))
	}
	if sc.Catchup {
		return nil
	}
	missed := st.Missed
	if len(missed) == 0 {
		if !sc.Start.IsZero() || st.LastWindow != "" {
			fmt.Fprintln(s.Out, "  missed      none")
		}
		return nil
	}
	fmt.Fprintf(s.Out, "  missed      %d %s, oldest first: %s\n", len(missed), plural(len(missed), "window", "windows"), missed[0].Start+"/"+missed[0].End)
	if wf.Size() != "" {
		fmt.Fprintf(s.Out, "  fill with   ldp backfill %s --from %s --to %s\n", displayPath(sc.Path), missed[0].Start, missed[len(missed)-1].End)
		return nil
	}
	for _, m := range missed {
		fmt.Fprintf(s.Out, "  fill with   ldp workflow run %s --window %s/%s\n", displayPath(sc.Path), m.Start, m.End)
	}
	return nil
}

// installOptions are the flags and arguments of the command newInstallCmd builds.
type installOptions struct {
	args           []string
	print, ldpPath string
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *installOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return nil
}

func (o *installOptions) Run(ctx context.Context, s *streams) error {
	if err := oneOf(o.cmd, "print", o.print, "cron", "launchd", "systemd"); err != nil {
		return err
	}
	dir, err := filepath.Abs(o.args[0])
	if err != nil {
		return err
	}
	bin, err := ldpExecutable(o.ldpPath)
	if err != nil {
		return err
	}
	fmt.Fprint(s.Out, recipe(o.print, bin, dir))
	return nil
}

func newInstallCmd(s *streams) *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install --print cron|launchd|systemd DIR",
		Short: "Print the recipe that calls ldp schedule tick every 5 minutes (writes nothing)",
		Long: `Print a recipe with absolute paths: a crontab line (Linux), a launchd property list (macOS:
cron does not run while a Mac sleeps, launchd runs a missed interval when it wakes), or a
systemd user service and timer. Nothing is written to a system location.`,
		Example: `  ldp schedule install --print cron config/ | crontab -
  ldp schedule install --print launchd config/ > ~/Library/LaunchAgents/dev.ldp.schedule.plist
  ldp schedule install --print systemd config/`,
		Args: exactArgs(1, "name the folder of specs, for example: ldp schedule install --print cron config/"),
		RunE: runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.print, "print", "", "the recipe: cron, launchd or systemd")
	cmd.Flags().StringVar(&o.ldpPath, "ldp", "", "the ldp executable (default: this one)")
	return cmd
}

// ldpExecutable is --ldp, else the running executable, else the first ldp on the PATH.
func ldpExecutable(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "ldp" {
		return exe, nil
	}
	if p, err := exec.LookPath("ldp"); err == nil {
		return filepath.Abs(p)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where ldp is: pass --ldp PATH")
	}
	return exe, nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func recipe(kind, bin, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	label := "dev.ldp.schedule." + hex.EncodeToString(sum[:4])
	tick := fmt.Sprintf("mkdir -p %s && %s schedule tick %s", shellQuote(dir+"/.ldp"), shellQuote(bin), shellQuote(dir))
	switch kind {
	case "cron":
		return fmt.Sprintf(`# ldp: run the scheduled specs under %s every 5 minutes (Linux).
# Install with: ldp schedule install --print cron %s | crontab -   (this replaces your crontab;
# to keep it, add this line to the output of crontab -l instead).
*/5 * * * * %s >> %s 2>&1
`, dir, shellQuote(dir), tick, shellQuote(dir+"/.ldp/schedule.log"))
	case "launchd":
		return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!-- ldp: run the scheduled specs under %s every 300 seconds and at load (macOS).
     Load:   launchctl load ~/Library/LaunchAgents/%s.plist
     Unload: launchctl unload ~/Library/LaunchAgents/%s.plist -->
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>%s</string>
  <key>ProgramArguments</key>
  <array><string>/bin/sh</string><string>-c</string><string>%s</string></array>
  <key>StartInterval</key><integer>300</integer>
  <key>RunAtLoad</key><true/>
  <key>StandardOutPath</key><string>~/Library/Logs/%s.log</string>
  <key>StandardErrorPath</key><string>~/Library/Logs/%s.log</string>
</dict>
</plist>
`, dir, label, label, label, xmlEscape(tick), label, label)
	default:
		return fmt.Sprintf(`# ldp: run the scheduled specs under %s every 5 minutes (systemd, as your user).
# Save the two units below in ~/.config/systemd/user/, then:
#   systemctl --user daemon-reload && systemctl --user enable --now %s.timer
# ---- %s.service
[Unit]
Description=ldp schedule tick %s

[Service]
Type=oneshot
ExecStart=/bin/sh -c %s

# ---- %s.timer
[Unit]
Description=Run ldp schedule tick %s every 5 minutes

[Timer]
OnBootSec=1min
OnUnitActiveSec=5min
Persistent=true

[Install]
WantedBy=timers.target
`, dir, label, label, dir, shellQuote(tick+" >> "+shellQuote(dir+"/.ldp/schedule.log")+" 2>&1"), label, dir)
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// leaseFlags are --leases and --lease-ttl, shared by ldp schedule tick and ldp watch.
type leaseFlags struct {
	on  bool
	ttl time.Duration
}

func (f *leaseFlags) flags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "leases", false, "divide windows with other ldp processes (on other machines) by a lease per window in the workflows' PostgreSQL catalog, instead of the folder's lock")
	cmd.Flags().DurationVar(&f.ttl, "lease-ttl", 30*time.Second, "how long a window's lease outlives a process that stopped renewing it")
}

func (f *leaseFlags) options() *controllers.LeaseOptions {
	if !f.on {
		return nil
	}
	host, _ := os.Hostname()
	return &controllers.LeaseOptions{Holder: fmt.Sprintf("%s:%d", host, os.Getpid()), TTL: f.ttl}
}
