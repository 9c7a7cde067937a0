//go:build nokube

package main

// The slim build (make build: -tags nokube) links no Kubernetes package: controllers/kube,
// client-go and controller-runtime are about a fifth of the binary and a quarter of its
// start-up (their package inits), paid by every verb. The verbs that need them run the full
// binary, ldp-kube, which make build writes beside bin/ldp, with the same arguments, streams
// and environment; its exit code is this command's.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ldp-dev/ldp/internal/ldperr"
)

// kubeBinary is the full binary's name, looked for beside the running executable.
const kubeBinary = "ldp-kube"

func runController(ctx context.Context, s *streams, _ *controllerOptions) error {
	return runKube(ctx, s)
}

func exportK8s(s *streams, _ *exportK8sOptions) error { return runKube(context.Background(), s) }

func exportCRDs(s *streams) error { return runKube(context.Background(), s) }

func requestClusterBackfill(ctx context.Context, s *streams, _ *backfillOptions) error {
	return runKube(ctx, s)
}

// runKube runs ldp-kube with this command's arguments. On ctx's end (SIGINT, SIGTERM) the
// child is sent SIGTERM, as a controller stopping expects, and killed if it has not ended 30
// s later.
func runKube(ctx context.Context, s *streams) error {
	path, err := kubeBinaryPath()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, s.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.In, s.Out, s.Err
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	if exit, ok := errors.AsType[*exec.ExitError](err); ok && exit.ExitCode() > 0 {
		// ldp-kube printed its own error.
		return ldperr.Silent(exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil
}

// kubeBinaryPath is ldp-kube beside the running executable (symbolic links resolved, so a
// link to bin/ldp finds bin/ldp-kube).
func kubeBinaryPath() (string, error) {
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return "", fmt.Errorf("finding %s beside this ldp: %w", kubeBinary, err)
	}
	path := filepath.Join(filepath.Dir(self), kubeBinary)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("this ldp is the slim build (-tags nokube), whose Kubernetes verbs run %s, and there is none beside it (%s): "+
			"make build (or make install) writes both; or go install ./cmd/ldp for one full binary", kubeBinary, path)
	}
	return path, nil
}
