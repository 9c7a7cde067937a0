// Package shell writes the commands ldp prints for people to paste (ldp status's backfill,
// the page's "run it again", ldp schedule list's fill, the schedule recipes): every word is
// quoted for a POSIX shell, so a spec named o$(id>PWNED).json is pasted as a name and never
// runs anything (issue 33, point 11).
package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Quote is s as one word of a POSIX shell: unchanged when no character of it means anything
// to the shell, else quoted.
func Quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangPOSIX)
	// An interactive bash expands ! in history even within double quotes: single quotes only.
	if err != nil || strings.ContainsRune(s, '!') {
		// POSIX has no escapes for a control character (a newline in a name): single quotes
		// keep every byte but NUL, which no file name holds.
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return q
}

// Command is words as one line of a POSIX shell, each word quoted.
func Command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}
