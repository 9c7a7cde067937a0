// Package ldperr holds the typed errors that callers must tell apart, and the exit code each one
// maps to. It is a leaf: every layer may import it, and it imports nothing of ldp.
package ldperr

import (
	"errors"
	"fmt"
)

// Exit codes shared by every command (see docs/cli.md).
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitChanges  = 2 // ldp diff only: something would run
	ExitDataGate = 3
)

// ConfigError is a problem with a spec or a flag: retrying cannot fix it.
type ConfigError struct {
	// File is the spec the problem is in, when there is one.
	File string
	Msg  string
	Err  error
}

func (e *ConfigError) Error() string {
	msg := e.Msg
	if e.Err != nil {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	if e.File != "" {
		return e.File + ": " + msg
	}
	return msg
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Configf returns a ConfigError about file with a formatted message.
func Configf(file, format string, args ...any) error {
	return &ConfigError{File: file, Msg: fmt.Sprintf(format, args...)}
}

// ExitError carries an exit code through a command's error return without printing anything:
// the command has already said what happened.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Silent returns an error that makes the command exit with code and print nothing more.
func Silent(code int) error { return &ExitError{Code: code} }

// DataGate is implemented by errors that mean "a quality check held the data back": nothing
// is broken, the data is. They exit with 3 and are never retried.
type DataGate interface {
	error
	DataGate() bool
}

// IsDataGate reports whether err is (or wraps) a data gate.
func IsDataGate(err error) bool {
	var g DataGate
	return errors.As(err, &g) && g.DataGate()
}

// ExitCode maps an error to the exit code of the command that returned it.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if IsDataGate(err) {
		return ExitDataGate
	}
	return ExitFailed
}
