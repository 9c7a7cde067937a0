package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func TestTryLockSeesAHeldLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "locks", "a.lock")
	l, err := Wait(context.Background(), p, WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions, so a second open in this process
	// conflicts just as another process would.
	if _, err := TryLock(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("TryLock on a held lock = %v, want ErrLocked", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := TryLock(p)
	if err != nil {
		t.Fatalf("TryLock after release: %v", err)
	}
	l2.Release()
	l2.Release()
}
