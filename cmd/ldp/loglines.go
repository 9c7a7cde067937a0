package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// logLines takes a run's log lines (check verdicts, warnings, retries) for a backfill or a
// watch, which run many windows: a passed check is left out unless verbose, as a window's own
// line says what failed; each line is written whole; and with a logger each line becomes one
// of its records, so --log-format json prints nothing but JSON lines.
type logLines struct {
	w       io.Writer
	log     *slog.Logger
	verbose bool

	mu      sync.Mutex
	partial []byte
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		if err := l.line(line); err != nil {
			return len(b), err
		}
	}
}

// windowPrefix is the window a backfill's line begins with; checkLine a check's verdict.
var (
	windowPrefix = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT[^ /]+/\d{4}-\d\d-\d\dT[^ /:]+(?::\d\d)*Z?): (.*)$`)
	checkLine    = regexp.MustCompile(`^check (.+?): (passed|FAILED): (.*)$`)
)

func (l *logLines) line(line string) error {
	window, rest := "", line
	if m := windowPrefix.FindStringSubmatch(line); m != nil {
		window, rest = m[1], m[2]
	}
	check := checkLine.FindStringSubmatch(rest)
	if check != nil && check[2] == "passed" && !l.verbose {
		return nil
	}
	if l.log == nil {
		_, err := io.WriteString(l.w, line+"\n")
		return err
	}
	var attrs []any
	if window != "" {
		attrs = append(attrs, "window", window)
	}
	switch {
	case check != nil:
		level := slog.LevelInfo
		if check[2] == "FAILED" {
			level = slog.LevelWarn
		}
		l.log.Log(context.Background(), level, "check", append(attrs, "check", check[1], "passed", check[2] == "passed", "details", check[3])...)
	case strings.HasPrefix(rest, "warning: "):
		l.log.Warn(strings.TrimPrefix(rest, "warning: "), attrs...)
	default:
		l.log.Info(rest, attrs...)
	}
	return nil
}
