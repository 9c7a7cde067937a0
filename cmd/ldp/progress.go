package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
)

// isTerminal reports whether w is a terminal (progress bars only go there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progress redraws one line on a terminal: a bar, windows done, outcome counts and an ETA.
type progress struct {
	w      io.Writer
	start  time.Time
	counts map[string]int
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, start: time.Now(), counts: map[string]int{}}
}

func (p *progress) update(done, total int, outcome string) {
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
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s%s\x1b[K", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total, strings.Join(parts, ", "), eta)
	if done == total {
		fmt.Fprintln(p.w)
	}
}
