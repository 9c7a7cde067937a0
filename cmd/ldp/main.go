// Command ldp is the local data platform: it loads files into Apache Iceberg tables one window
// at a time, checks the data before it lands, and publishes each window exactly once.
//
// Every verb lives in its own file as flags -> options -> Validate -> Run, with the output
// streams passed in. Errors are printed once, here in Main, and map to the exit codes of
// docs/cli.md: 0 success, 1 error, 2 changes pending (ldp diff), 3 a data gate held data back.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/initgc"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/internal/redact"
)

func main() { os.Exit(Main()) }

// Package main's init runs after every package it links: the collector, off while they
// initialised (package initgc), is on again for the command (and for this package's tests).
func init() { initgc.Done() }

// profile writes a CPU profile of the whole command to LDP_CPUPROFILE when it is set: how a
// slow command is looked into (go tool pprof bin/ldp FILE) without rebuilding anything.
func profile() func() {
	path := os.Getenv("LDP_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ldp: LDP_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "ldp: LDP_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// heapProfile writes what the heap holds when the command ends to LDP_MEMPROFILE when it is
// set (go tool pprof -sample_index=inuse_space bin/ldp FILE): how a command that grows is
// looked into.
func heapProfile() {
	path := os.Getenv("LDP_MEMPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err == nil {
		runtime.GC()
		err = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ldp: LDP_MEMPROFILE: %v\n", err)
	}
}

// Main runs ldp with the process's arguments and streams and returns the exit code.
func Main() int {
	defer profile()()
	defer heapProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], &streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv})
}

// streams are what a command reads and writes; tests pass buffers.
type streams struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// args are the command line's arguments (after the program name): what the slim build
	// hands ldp-kube for a verb that needs Kubernetes (kube_slim.go).
	args []string
}

func run(ctx context.Context, args []string, s *streams) int {
	s.args = args
	root := newRootCmd(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	// Events to OpenLineage endpoints go in the background while the command works; the
	// last ones get one timeout to arrive.
	for _, w := range controllers.FlushEvents() {
		fmt.Fprintln(s.Err, "warning: "+redact.String(w))
	}
	if err != nil {
		var silent *ldperr.ExitError
		if !errors.As(err, &silent) {
			fmt.Fprintf(s.Err, "ldp: %s\n", redact.String(err.Error()))
		}
	}
	return exitCode(err)
}
