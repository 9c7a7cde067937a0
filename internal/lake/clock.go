package lake

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// ClockBehindError is a commit Iceberg refused because this machine's clock is behind the
// table's last commit (stepped back after it, or another writer's clock is ahead): a commit is
// stamped with the local time, and one dated more than a minute before the table's last is
// invalid metadata. iceberg-go takes that time from the system clock and offers no way to
// stamp a commit otherwise, so ldp cannot commit anyway; the commit changed nothing. It is
// retriable: once the clock passes the last commit, the same run goes through.
type ClockBehindError struct {
	Ref Ref
	// Behind is how far the local time was behind the table's last commit; Last is that
	// commit's time.
	Behind time.Duration
	Last   time.Time
	Err    error
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("the clock of this machine is %s behind the last commit to %s (at %s): Iceberg refuses a commit dated more than a minute before the table's last, so nothing was written; check the clock (NTP), or the clock of the machine that made that commit, or wait until %s, then run again",
		e.Behind.Round(time.Second), e.Ref, e.Last.UTC().Format(time.RFC3339), e.Last.Add(-time.Minute).UTC().Format(time.RFC3339))
}

func (e *ClockBehindError) Unwrap() error   { return e.Err }
func (e *ClockBehindError) Retriable() bool { return true }

// timestampRefused matches iceberg-go's refusal of a commit dated before the table's last.
var timestampRefused = regexp.MustCompile(`invalid update timestamp (\d+): before last (?:snapshot|metadata) log entry at (\d+)`)

// clockHint turns iceberg-go's refusal of a commit dated before the table's last into a
// *ClockBehindError that says by how much; other errors pass as they are.
func clockHint(ref Ref, err error) error {
	if err == nil {
		return nil
	}
	m := timestampRefused.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	at, err1 := strconv.ParseInt(m[1], 10, 64)
	last, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil {
		return err
	}
	return &ClockBehindError{Ref: ref, Behind: time.Duration(last-at) * time.Millisecond, Last: time.UnixMilli(last), Err: err}
}
