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

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/internal/shell"
)

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

func recipe(kind, bin, dir string) string {
	sum := sha256.Sum256([]byte(dir))
	label := "dev.ldp.schedule." + hex.EncodeToString(sum[:4])
	tick := fmt.Sprintf("mkdir -p %s && %s schedule tick %s", shell.Quote(dir+"/.ldp"), shell.Quote(bin), shell.Quote(dir))
	switch kind {
	case "cron":
		return fmt.Sprintf(`# ldp: run the scheduled specs under %s every 5 minutes (Linux).
# Install with: ldp schedule install --print cron %s | crontab -   (this replaces your crontab;
# to keep it, add this line to the output of crontab -l instead).
*/5 * * * * %s >> %s 2>&1
`, dir, shell.Quote(dir), tick, shell.Quote(dir+"/.ldp/schedule.log"))
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
`, dir, label, label, dir, shell.Quote(tick+" >> "+shell.Quote(dir+"/.ldp/schedule.log")+" 2>&1"), label, dir)
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// leaseFlags are --leases and --lease-ttl, shared by ldp schedule tick and ldp watch.
