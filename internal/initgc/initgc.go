// Package initgc keeps the garbage collector off while the packages ldp links initialise.
//
// Their inits allocate some 8 MB (Kubernetes' API scheme, CUE, Arrow, iceberg-go's Avro
// schemas), which the collector's first goal of 4 MB met three times before main: a fifth of
// ldp --version's CPU. Importing this package from main turns collection off in an init that
// runs early (it imports almost nothing, so it is ready before most of the program); main's
// own init, which runs after every other package's, turns it back on with Done. Go
// initialises ready packages in the order of their import paths, so a few that sort before
// github.com/ldp-dev (about 1 MB) still run before this one, with the collector on.
//
// Tune is the one other place ldp sets the collector: a command that makes much short-lived
// garbage raises its percent. A GOGC the user set wins over both.
package initgc

import (
	"os"
	"runtime/debug"
)

// userSet is whether the user set GOGC: the runtime applied it before any init, and it is
// theirs, so neither this package's init nor Tune changes it.
var userSet = func() bool { _, set := os.LookupEnv("GOGC"); return set }()

// off is set when the init turned collection off, so Done restores only what it changed.
var off bool

func init() {
	if !userSet {
		debug.SetGCPercent(-1)
		off = true
	}
}

// Done turns collection back on at the runtime's default (GOGC unset is 100).
func Done() {
	if off {
		off = false
		debug.SetGCPercent(100)
	}
}

// Tune sets the collector's percent for a command whose heap is mostly short-lived garbage
// (a backfill's windows), trading memory for fewer collections, unless the user set GOGC.
func Tune(percent int) {
	if !userSet {
		debug.SetGCPercent(percent)
	}
}
