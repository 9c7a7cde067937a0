package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestInitsDoNotCollect: the packages ldp links allocate some 8 MB while they initialise,
// which the collector's first goal of 4 MB met three times before main ran, a fifth of ldp
// --version's CPU. Package initgc keeps the collector off from its own init until main's.
// This test binary links what ldp links; GODEBUG=gctrace=1 prints a line for each collection
// and inittrace=1 one for each package's init, in the order they happen, so the collections
// between the init lines of initgc and of package main (this package, which turns the
// collector on) are those initgc failed to prevent.
//
// Packages initialised before initgc are not counted: Go initialises ready packages in the
// order of their import paths, so some that sort before github.com/ldp-dev (apd, inflection:
// about 1 MB) run first whatever initgc imports, and whether they meet the first goal depends
// on the machine (CI's did once). A collection that is under way when initgc runs finishes
// inside its SetGCPercent, but its line may be printed after initgc's: a collection is counted
// only if it started (its @) after initgc's init did (both are times since the runtime began).
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
	_, afterOff, found := strings.Cut(stderr.String(), "\ninit github.com/ldp-dev/ldp/internal/initgc @")
	if !found {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line of package initgc:\n%s", stderr.Bytes())
	}
	between, _, found := strings.Cut(afterOff, "\ninit github.com/ldp-dev/ldp/cmd/ldp @")
	if !found {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line of this package after initgc's:\n%s", stderr.Bytes())
	}
	offAt, _, _ := strings.Cut(afterOff, " ms")
	off, err := strconv.ParseFloat(offAt, 64)
	if err != nil {
		t.Fatalf("initgc's init line %q: %v", afterOff[:min(len(afterOff), 80)], err)
	}
	var gcs []string
	for _, m := range regexp.MustCompile(`(?m)^gc \d+ @([0-9.]+)s.*$`).FindAllStringSubmatch(between, -1) {
		if at, err := strconv.ParseFloat(m[1], 64); err != nil || at*1000 >= off {
			gcs = append(gcs, m[0])
		}
	}
	if len(gcs) > 0 {
		t.Errorf("the collector ran %d times between the inits of initgc and of main (initgc keeps it off until main's init):\n%s",
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
