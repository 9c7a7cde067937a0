package main

import (
	"encoding/json"
	"fmt"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/ldperr"
)

// Exit codes are decided here, and only here, from typed results (docs/cli.md): 0 success, 1
// an error or a failed run, 2 ldp diff has changes to apply, 3 a data gate held data back.
// Controllers return outcomes and errors, never exit codes.

// exitCode is the exit code of a command that ended with err: an error's own code (a data
// gate is 3, a silent exit carries its code), else 0.
func exitCode(err error) int { return ldperr.ExitCode(err) }

// outcomeCode is the exit code of an outcome: failed 1, blocked 3, else 0.
func outcomeCode(o v1.Outcome) int {
	switch o {
	case v1.Failed:
		return ldperr.ExitFailed
	case v1.Blocked:
		return ldperr.ExitDataGate
	}
	return ldperr.ExitOK
}

// outcomeExit is the error a command returns to exit with outcome's code, printing nothing
// more (the command printed what happened); nil for success.
func outcomeExit(o v1.Outcome) error {
	if c := outcomeCode(o); c != ldperr.ExitOK {
		return ldperr.Silent(c)
	}
	return nil
}

// changesExit is ldp diff's exit when windows would run.
func changesExit(pending int) error {
	if pending > 0 {
		return ldperr.Silent(ldperr.ExitChanges)
	}
	return nil
}

// failedExit exits 1 without printing more: the command printed what failed.
func failedExit() error { return ldperr.Silent(ldperr.ExitFailed) }

// withExitCode is a result printed as JSON with the exit code the command ends with, as the
// JSON of ldp backfill and ldp schedule tick has always carried.
type withExitCode struct {
	Result   any `json:"-"`
	ExitCode int `json:"exit_code"`
}

// MarshalJSON writes the result's fields and exit_code beside them.
func (w withExitCode) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(w.Result)
	if err != nil || len(b) < 2 || b[0] != '{' {
		return b, err
	}
	sep := ","
	if string(b) == "{}" {
		sep = ""
	}
	return []byte(fmt.Sprintf("%s%s\"exit_code\":%d}", b[:len(b)-1], sep, w.ExitCode)), nil
}
