package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The bounds of a PostgreSQL catalog's connections, where its uri sets none: a server that is
// stopped (SIGSTOP), overloaded or behind a half-open connection accepts the TCP connection
// and then never answers, and pgconn waited in its TLS start for as long as it took (11
// minutes in one try, deaf to SIGTERM).
const (
	// pgConnectTimeout bounds a connection's start, TLS included (seconds, as libpq's
	// connect_timeout).
	pgConnectTimeout = "10"
	// pgStatementTimeout and pgLockTimeout are the server's bounds of a statement and of a
	// wait for a row lock (a catalog commit holds one for a moment).
	pgStatementTimeout = "60s"
	pgLockTimeout      = "30s"
	// pgAnswerSlack is how much longer than the statement timeout ldp waits for any answer of
	// the server before it takes the connection for dead: a stopped server cannot enforce its
	// own statement_timeout.
	pgAnswerSlack = 10 * time.Second
)

// pgOpener opens the PostgreSQL database at uri with ldp's bounds where the uri sets none:
// connect_timeout, statement_timeout and lock_timeout (any of them in the uri wins), and a
// bound on every wait for the server's answer of the statement timeout and pgAnswerSlack.
func pgOpener(uri string) (func() (*sql.DB, error), error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if !q.Has("connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		q.Set("connect_timeout", pgConnectTimeout)
	}
	if !q.Has("statement_timeout") {
		q.Set("statement_timeout", pgStatementTimeout)
	}
	if !q.Has("lock_timeout") {
		q.Set("lock_timeout", pgLockTimeout)
	}
	u.RawQuery = q.Encode()
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return nil, err
	}
	answer := time.Duration(0)
	if st, ok := pgDuration(cfg.RuntimeParams["statement_timeout"]); ok && st > 0 {
		answer = st + pgAnswerSlack
	}
	if dial := cfg.DialFunc; answer > 0 && dial != nil {
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &answerBound{Conn: c, bound: answer}, nil
		}
	}
	return func() (*sql.DB, error) { return stdlib.OpenDB(*cfg), nil }, nil
}

// pgDuration reads a PostgreSQL time setting: a number of milliseconds, or a number with a unit
// (ms, s, min, h, d).
func pgDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(ms) * time.Millisecond, true
	}
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(v)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v[:i]), 64)
	if err != nil {
		return 0, false
	}
	unit := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[strings.TrimSpace(v[i:])]
	if unit == 0 {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}

// answerBound is a connection on which every read gives up after bound: the server's answer
// to a statement comes within its statement timeout, or the server is stopped or gone (a
// half-open connection, which no keepalive detects while the peer's kernel still answers).
// pgconn sets its own deadlines to cancel a statement (its context ended); the earlier of
// both applies, set under one lock so that a cancel is never undone by the next read.
type answerBound struct {
	net.Conn
	bound time.Duration
	mu    sync.Mutex
	// theirs is the deadline pgconn set last (zero: none).
	theirs time.Time
}

func (c *answerBound) Read(p []byte) (int, error) {
	c.mu.Lock()
	d := time.Now().Add(c.bound)
	if !c.theirs.IsZero() && c.theirs.Before(d) {
		d = c.theirs
	}
	err := c.Conn.SetReadDeadline(d)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *answerBound) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.theirs = t
	return c.Conn.SetDeadline(t)
}

func (c *answerBound) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.theirs = t
	return c.Conn.SetReadDeadline(t)
}

// stallHint says what to check when the catalog's PostgreSQL server did not answer in time, or
// the wait for it was ended; other errors pass as they are.
func stallHint(err error) error {
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: stopped while waiting for the catalog's server", err)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || strings.Contains(err.Error(), "timeout"):
		return fmt.Errorf("%w: the server did not answer in time (within connect_timeout, %ss unless the uri sets it, to connect; statement_timeout, %s unless set, and %s more for any answer): check that it is running and reachable, not stopped, overloaded or behind a broken connection; connect_timeout, statement_timeout and lock_timeout in the uri set the bounds",
			err, pgConnectTimeout, pgStatementTimeout, pgAnswerSlack)
	}
	return err
}
