package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

// now is the CLI's clock; shortcuts such as yesterday count from it.
var now = time.Now

// parseWindow reads a --window value in the spec's time zone.
func parseWindow(p *v1.Pipeline, s string) (v1.LogicalWindow, error) {
	loc, err := controllers.PipelineLocation(p)
	if err != nil {
		return v1.LogicalWindow{}, err
	}
	return controllers.ParseWindow(s, loc, now())
}

// inZone writes instants (RFC 3339, as the plans hold them) in loc, to print beside their UTC:
// "" when loc is UTC, else "  (2026-10-25 00:00 CEST to 2026-10-26 00:00 CET, Europe/Paris)".
func inZone(loc *time.Location, instants ...string) string {
	if loc == nil || loc.String() == "UTC" {
		return ""
	}
	var local []string
	for _, s := range instants {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return ""
		}
		local = append(local, t.In(loc).Format("2006-01-02 15:04 MST"))
	}
	return "  (" + strings.Join(local, " to ") + ", " + loc.String() + ")"
}

func describeWindow(p *v1.Pipeline, w v1.LogicalWindow) string {
	loc, _ := controllers.PipelineLocation(p)
	return controllers.DescribeWindow(w, loc)
}

// faultHook is a test seam for the process-level tests of the exactly-once protocol:
// LDP_FAULT=POINT:ACTION stops (SIGSTOP) or kills (SIGKILL) this process when the publish
// reaches POINT ("extracted", "staged", "indexed" (the key index file written, not yet committed) or "published"). It is unset in production, where it does nothing.
func faultHook(getenv func(string) string) func(string) {
	spec := getenv("LDP_FAULT")
	if spec == "" {
		return nil
	}
	return func(point string) {
		var sig syscall.Signal
		switch spec {
		case point + ":stop":
			sig = syscall.SIGSTOP
		case point + ":kill":
			sig = syscall.SIGKILL
		default:
			return
		}
		// Signal this very thread: a signal to the process goes to any of its threads, and
		// this one could run on past the fault point before the stop reached it (seen under
		// load: the "stopped after staging" process had published).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
	}
}
