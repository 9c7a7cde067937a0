package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/ldp-dev/ldp/internal/initgc"
)

// TestInitsDoNotCollect: the packages ldp links allocate some 8 MB while they initialise,
// which the collector's first goal of 4 MB met three times before main ran, a fifth of ldp
// --version's CPU. Package initgc keeps the collector off from its own init until main's.
// This test binary links what ldp links and ran those inits; the runtime's count of finished
// collections, read by initgc at its init and at main's (initgc.Done), says how many ran
// between them: those initgc failed to prevent.
//
// Packages initialised before initgc are not counted: Go initialises ready packages in the
// order of their import paths, so some that sort before github.com/ldp-dev (apd, inflection:
// about 1 MB) run first whatever initgc imports, and whether they meet the first goal depends
// on the machine. The count was read from GODEBUG=gctrace's lines before, which failed on a
// loaded machine: a collection under way at initgc's init can print its line after the init's.
func TestInitsDoNotCollect(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: the runtime runs the collector as it says, and initgc leaves it")
	}
	if n := initgc.CollectedWhileOff(); n != 0 {
		t.Errorf("the collector ran %d times between the inits of initgc and of main (initgc keeps it off until main's init)", n)
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
