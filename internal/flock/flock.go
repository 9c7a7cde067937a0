// Package flock takes exclusive advisory locks on files. The operating system releases a lock
// when its process ends, so a crash or a kill never leaves one behind.
package flock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("lock is held by another process")

// Lock is a held lock; Release gives it up.
type Lock struct {
	f *os.File
}

// Acquire blocks until it holds an exclusive lock on path, creating the file and its folder.
func Acquire(path string) (*Lock, error) {
	return lock(path, syscall.LOCK_EX)
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

// Release gives up the lock. It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
