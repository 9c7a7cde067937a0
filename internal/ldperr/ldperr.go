// Package ldperr holds the typed errors that callers must tell apart, and the exit code each one
// maps to. It is a leaf: every layer may import it, and it imports nothing of ldp.
package ldperr

import (
	"errors"
	"fmt"
	"strings"
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

// Publicer is implemented by errors whose message may quote a row's values (a value that does
// not fit its column, DuckDB's conversion errors): Public is the message without them. The
// terminal of the user who ran the command shows Error; events, OpenLineage and the status
// page, which others read, show Public (docs/ledger.md: never a row's values).
type Publicer interface {
	error
	Public() string
}

// Public is err's message fit for an event: the message of every error in its chain that may
// quote data is replaced by its public part.
func Public(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var walk func(error) bool
	// walk replaces each Publicer's message in msg; it reports false when one's message is not
	// in msg as written (a wrapper that rephrased it), and then nothing of msg is safe.
	walk = func(e error) bool {
		if p, ok := e.(Publicer); ok {
			full := p.Error()
			if !strings.Contains(msg, full) {
				return false
			}
			msg = strings.ReplaceAll(msg, full, p.Public())
			return true
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if inner := u.Unwrap(); inner != nil {
				return walk(inner)
			}
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if !walk(inner) {
					return false
				}
			}
		}
		return true
	}
	if !walk(err) {
		var p Publicer
		errors.As(err, &p)
		return p.Public()
	}
	return msg
}

// DataError is a row's value that ldp refuses: where it is (file, line, column) and what is
// wrong with it (the types, the fix) are public; the value is private, for the terminal only.
type DataError struct {
	File   string
	Line   int64 // 0 when the reader does not know it
	Column string
	// Msg says what is wrong and what to do, naming no value; it follows `value "X"` in
	// Error and "a value" in Public: "is not a whole number, and the table's column is long".
	Msg   string
	Value string
}

func (e *DataError) where() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "column %q", e.Column)
	return b.String()
}

func (e *DataError) Error() string { return fmt.Sprintf("%s: value %q %s", e.where(), e.Value, e.Msg) }

// Public is the error without the value.
func (e *DataError) Public() string { return e.where() + ": a value " + e.Msg }
