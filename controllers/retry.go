package controllers

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"

	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Retriable reports whether another attempt may fix err: a retriable commit conflict, a
// source file that has not landed, an I/O error, a timeout or a dropped connection. A data
// gate, a config error, an unknown route and a fenced attempt are never retried.
func Retriable(err error) bool {
	if err == nil || ldperr.IsDataGate(err) {
		return false
	}
	var ce *ldperr.ConfigError
	if errors.As(err, &ce) {
		return false
	}
	var r interface{ Retriable() bool }
	if errors.As(err, &r) {
		return r.Retriable()
	}
	var pe *fs.PathError
	var se *os.SyscallError
	var ne net.Error
	return errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}
