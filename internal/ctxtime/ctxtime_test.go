package ctxtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/ctxtime"
)

// A wait whose context has ended returns that context's error, not nil, however long it was
// asked to be: a cancelled load must not sleep out its backoff.
func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ctxtime.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
	dl, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	if err := ctxtime.Sleep(dl, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sleep past its deadline = %v, want context.DeadlineExceeded", err)
	}
}

// A wait that runs out while its context lives returns nil.
func TestSleepReturnsNilWhenTheWaitEnds(t *testing.T) {
	if err := ctxtime.Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0) = %v, want nil", err)
	}
}
