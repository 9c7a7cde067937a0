package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether w is a terminal (progress bars only go there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progress redraws one line on a terminal: a bar, windows done, outcome counts and an ETA.
// Everything else meant for the terminal goes through above that line, never onto it.
type progress struct {
	w      io.Writer
	start  time.Time
	counts map[string]int
	mu     sync.Mutex
	// bar is the line last drawn ("" before the first and after the last update).
	bar     string
	partial []byte
	// checks passes check lines above the bar too (-v).
	checks bool
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, start: time.Now(), counts: map[string]int{}}
}

func (p *progress) update(done, total int, outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[outcome]++
	const width = 24
	filled := width * done / max(total, 1)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p.counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", p.counts[k], k))
	}
	eta := ""
	if done < total && done > 0 {
		left := time.Duration(float64(time.Since(p.start)) / float64(done) * float64(total-done))
		eta = " ETA " + left.Round(time.Second).String()
	}
	p.bar = fmt.Sprintf("[%s%s] %d/%d %s%s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total, strings.Join(parts, ", "), eta)
	fmt.Fprintf(p.w, "\r%s\x1b[K", p.bar)
	if done == total {
		fmt.Fprintln(p.w)
		p.bar = ""
	}
}

// above prints a whole line above the bar: the bar's line is cleared, the line written, and
// the bar drawn again under it.
func (p *progress) above(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.aboveLocked(line)
}

func (p *progress) aboveLocked(line string) {
	if p.bar == "" {
		fmt.Fprintln(p.w, line)
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s\n%s\x1b[K", line, p.bar)
}

// Write takes log lines (a run's check lines and warnings) for the terminal the bar is on: a
// check line is left out unless -v, as the window's own line says what failed; any other line
// goes above the bar.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.partial[:i])
		p.partial = p.partial[i+1:]
		if p.checks || !isCheckLine(line) {
			p.aboveLocked(line)
		}
	}
}

// isCheckLine says whether a log line is a quality check's verdict, which the per-window line
// of a failed window sums up.
func isCheckLine(line string) bool {
	if _, rest, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(rest, "check ") {
		return true // prefixed with its window
	}
	return strings.HasPrefix(line, "check ")
}
