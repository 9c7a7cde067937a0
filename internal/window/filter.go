package window

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/engine"
)

// Filter returns the SQL condition that keeps the rows of w by column, whose DuckDB type is
// colType: a timestamp with a zone compares as an instant, one without as the instant its
// wall-clock time stands for in loc (see Instant: each maps to one window, across clock
// changes too), and a date as a date (which needs a window that starts and ends at local
// midnight).
// A null is in no window.
func Filter(column, colType string, w v1.LogicalWindow, loc *time.Location) (string, error) {
	c := engine.Ident(column)
	t := strings.ToUpper(colType)
	switch {
	case strings.Contains(t, "WITH TIME ZONE"):
		return fmt.Sprintf("(%s >= TIMESTAMPTZ %s AND %s < TIMESTAMPTZ %s)", c,
			engine.Lit(w.Start.UTC().Format("2006-01-02 15:04:05.999999Z07:00")), c,
			engine.Lit(w.End.UTC().Format("2006-01-02 15:04:05.999999Z07:00"))), nil
	case strings.HasPrefix(t, "TIMESTAMP"):
		return wallFilter(c, [2]time.Time{w.Start, w.End}, loc), nil
	case t == "DATE":
		s, e := w.Start.In(loc), w.End.In(loc)
		if !isMidnight(s) || !isMidnight(e) {
			return "", fmt.Errorf("window column %q is a DATE, so the window must start and end at local midnight in %s; %s does not", column, loc, w)
		}
		return fmt.Sprintf("(%s >= DATE %s AND %s < DATE %s)", c, engine.Lit(s.Format("2006-01-02")), c, engine.Lit(e.Format("2006-01-02"))), nil
	}
	return "", fmt.Errorf("window column %q is %s; it must be a DATE or a TIMESTAMP", column, colType)
}

func isMidnight(t time.Time) bool {
	return t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
}
