package bigquery

import (
	"context"
	"time"
)

// SetPause replaces the pause between requests for one test; the returned func restores it.
func SetPause(f func(context.Context, time.Duration) error) (restore func()) {
	was := pause
	pause = f
	return func() { pause = was }
}
