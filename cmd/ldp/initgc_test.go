package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// TestInitsDoNotCollect: the packages ldp links allocate some 8 MB while they initialise,
// which the collector's first goal of 4 MB met three times before main ran, a fifth of ldp
// --version's CPU. Package initgc keeps the collector off until main's init. This test binary
// links what ldp links; GODEBUG=gctrace=1 prints a line for each collection and inittrace=1
// one for each package's init, in the order they happen, so the collections before the
// init of package main (this package, which turns the collector on) are those of the inits.
func TestInitsDoNotCollect(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GODEBUG=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1,inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("re-running the test binary with GODEBUG=gctrace=1,inittrace=1: %v\n%s", err, stderr.Bytes())
	}
	out, _, found := strings.Cut(stderr.String(), "\ninit github.com/ldp-dev/ldp/cmd/ldp @")
	if !found {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line of this package:\n%s", stderr.Bytes())
	}
	if gcs := regexp.MustCompile(`(?m)^gc \d+ @.*$`).FindAllString(out, -1); len(gcs) > 0 {
		t.Errorf("the collector ran %d times while the packages initialised (package initgc keeps it off until main's init):\n%s",
			len(gcs), strings.Join(gcs, "\n"))
	}
}

// TestCollectorOnAfterInit: main's init turns the collector back on, so a command (and this
// test binary) collects as GOGC says.
func TestCollectorOnAfterInit(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: the runtime runs the collector as it says")
	}
	was := debug.SetGCPercent(100)
	debug.SetGCPercent(was)
	if was != 100 {
		t.Errorf("the collector's percent after the inits is %d, want 100 (GOGC unset): initgc.Done was not called", was)
	}
}
