// Package ctxtime holds waits that end early when their context does: the sources that poll a
// remote service (BigQuery's job results, GitHub's rate limits) wait through it, so a cancelled
// load stops at once instead of sleeping out its backoff. It is a leaf: it imports nothing of
// the project.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d, or less if ctx ends first, when it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
