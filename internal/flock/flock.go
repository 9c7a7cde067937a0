// Package flock takes exclusive advisory locks on files. The operating system releases a lock
// when its process ends, so a crash or a kill never leaves one behind.
package flock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("lock is held by another process")

// ErrSuperseded is returned by Wait when the caller's Supersedes said the holder no longer
// counts: the caller goes on without the lock.
var ErrSuperseded = errors.New("the holder of the lock is superseded")

// Lock is a held lock; Release gives it up.
type Lock struct {
	f *os.File
}

// TryLock takes the lock if it is free and returns ErrLocked at once if it is not.
func TryLock(path string) (*Lock, error) {
	return lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

func lock(path string, how int) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// WaitOptions bound a wait for a lock and say how it goes.
type WaitOptions struct {
	// Timeout ends the wait with a *TimeoutError; 0 waits until the context ends.
	Timeout time.Duration
	// Owner is written into the lock file once it is held, so a waiter can say who holds it
	// (a process id, a host, a run id and attempt).
	Owner string
	// Waiting, if set, is called every Every (default 5 s) while the lock is held by another,
	// with what the holder wrote and how long the wait has lasted.
	Waiting func(holder string, waited time.Duration)
	Every   time.Duration
	// Supersedes, if set, is asked about each holder the wait sees (what it wrote): true ends
	// the wait at once, without the lock, with ErrSuperseded. A newer attempt of a run that
	// fences its older one uses it not to wait for a holder that can no longer publish.
	Supersedes func(holder string) bool
	// poll is how often the lock is tried (default 100 ms); a test seam.
	poll time.Duration
}

// TimeoutError is a wait for a lock that ran out of time. Another attempt may find it free.
type TimeoutError struct {
	Path   string
	Holder string
	Waited time.Duration
}

func (e *TimeoutError) Error() string {
	holder := "another process"
	if e.Holder != "" {
		holder = e.Holder
	}
	return fmt.Sprintf("waited %s for the lock %s, held by %s: if that process is stopped or hung, end it (or resume it with kill -CONT), then run again; --lock-timeout sets how long to wait", e.Waited.Round(time.Second), e.Path, holder)
}

// Retriable marks a lock wait that timed out as worth another attempt.
func (e *TimeoutError) Retriable() bool { return true }

// Wait takes the lock on path, waiting while another process holds it until ctx ends (its
// error is returned: a SIGTERM or SIGINT ends the wait) or o.Timeout passes. The blocking
// flock(2) call cannot be interrupted, so the wait polls.
func Wait(ctx context.Context, path string, o WaitOptions) (*Lock, error) {
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	if o.poll <= 0 {
		o.poll = 100 * time.Millisecond
	}
	start := time.Now()
	next := start.Add(o.Every)
	for {
		l, err := TryLock(path)
		if err == nil {
			if o.Owner != "" {
				l.f.Truncate(0)
				l.f.WriteAt([]byte(o.Owner+"\n"), 0)
			}
			return l, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		if o.Supersedes != nil {
			if h := Holder(path); h != "" && o.Supersedes(h) {
				return nil, fmt.Errorf("%s, held by %s: %w", path, h, ErrSuperseded)
			}
		}
		now := time.Now()
		if o.Timeout > 0 && now.Sub(start) >= o.Timeout {
			return nil, &TimeoutError{Path: path, Holder: Holder(path), Waited: now.Sub(start)}
		}
		if o.Waiting != nil && !now.Before(next) {
			o.Waiting(Holder(path), now.Sub(start))
			next = now.Add(o.Every)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("stopped waiting for the lock %s, held by %s: %w", path, orAnother(Holder(path)), context.Cause(ctx))
		case <-time.After(o.poll):
		}
	}
}

// Holder is what the holder of the lock on path wrote into it ("" when nothing).
func Holder(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return strings.TrimSpace(string(b))
}

func orAnother(holder string) string {
	if holder == "" {
		return "another process"
	}
	return holder
}

// Release gives up the lock. It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
