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
	"runtime/metrics"
)

// userSet is whether the user set GOGC: the runtime applied it before any init, and it is
// theirs, so neither this package's init nor Tune changes it.
var userSet = func() bool { _, set := os.LookupEnv("GOGC"); return set }()

// off is set when the init turned collection off, so Done restores only what it changed.
var off bool

// atOff is the count of finished collections when the init turned collection off, and
// whileOff the collections that finished between then and Done: a test's measure of this
// package's purpose, read from the runtime's own counter rather than from GODEBUG's trace,
// whose lines a collection under way at the init can print after the init's line.
var atOff, whileOff uint64

// cycles is the number of collections the runtime has finished.
func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func init() {
	if !userSet {
		// SetGCPercent(-1) waits for a collection under way to finish, so atOff counts it.
		debug.SetGCPercent(-1)
		off = true
	}
	atOff = cycles()
}

// Done turns collection back on at the runtime's default (GOGC unset is 100).
func Done() {
	whileOff = cycles() - atOff
	if off {
		off = false
		debug.SetGCPercent(100)
	}
}

// CollectedWhileOff is the number of collections that finished while the init's setting held,
// between this package's init and Done (zero unless something forced one, or GOGC was set).
func CollectedWhileOff() uint64 { return whileOff }

// Tune sets the collector's percent for a command whose heap is mostly short-lived garbage
// (a backfill's windows), trading memory for fewer collections, unless the user set GOGC. The
// func it returns puts back the percent before it, so the setting ends with the command (a
// process that runs several, a test binary, does not keep it).
func Tune(percent int) (restore func()) {
	if userSet {
		return func() {}
	}
	was := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(was) }
}
