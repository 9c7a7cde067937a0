package lake

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Lease is a window held by one ldp process in a shared catalog's PostgreSQL database, so that
// several processes ticking one folder on several machines do not both run it. It expires
// unless renewed: a process that dies loses it, and another takes the window over. Token goes
// up with each new holder (a fencing token, for the events).
type Lease struct {
	c      *Catalog
	Key    string
	Holder string
	Token  int64
	// OnRelease runs after Release (closing what the lease needed).
	OnRelease func()
}

// ErrNoLeases is a catalog that cannot hold leases (only PostgreSQL ones do).
var ErrNoLeases = errors.New("leases need a catalog of type sql on PostgreSQL")

// SupportsLeases reports whether the catalog can hold leases.
func (c *Catalog) SupportsLeases() bool { return c != nil && c.postgres }

// AcquireLease takes key for holder for ttl, if nobody else holds it unexpired. It returns nil
// (and no error) when another process holds it.
func (c *Catalog) AcquireLease(ctx context.Context, key, holder string, ttl time.Duration) (*Lease, error) {
	if !c.SupportsLeases() {
		return nil, ErrNoLeases
	}
	if _, err := c.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ldp_leases (
		lease_key TEXT PRIMARY KEY, holder TEXT NOT NULL, token BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL)`); err != nil {
		// Two processes creating it at once: the loser sees a unique violation; it exists now.
		if _, err2 := c.db.ExecContext(ctx, `SELECT 1 FROM ldp_leases LIMIT 1`); err2 != nil {
			return nil, fmt.Errorf("create the lease table: %w", err)
		}
	}
	var token int64
	err := c.db.QueryRowContext(ctx, `INSERT INTO ldp_leases AS l (lease_key, holder, token, expires_at)
		VALUES ($1, $2, 1, now() + make_interval(secs => $3))
		ON CONFLICT (lease_key) DO UPDATE SET holder = EXCLUDED.holder, token = l.token + 1, expires_at = EXCLUDED.expires_at
		WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder
		RETURNING token`, key, holder, ttl.Seconds()).Scan(&token)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		}
		return nil, fmt.Errorf("take the lease %s: %w", key, err)
	}
	return &Lease{c: c, Key: key, Holder: holder, Token: token}, nil
}

// Renew extends the lease by ttl; it fails when another holder has taken it meanwhile.
func (l *Lease) Renew(ctx context.Context, ttl time.Duration) error {
	res, err := l.c.db.ExecContext(ctx, `UPDATE ldp_leases SET expires_at = now() + make_interval(secs => $1)
		WHERE lease_key = $2 AND holder = $3 AND token = $4`, ttl.Seconds(), l.Key, l.Holder, l.Token)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("lease %s was taken over by another process", l.Key)
	}
	return nil
}

// Release gives the lease up (best effort: an unreleased lease expires).
func (l *Lease) Release(ctx context.Context) {
	l.c.db.ExecContext(ctx, `DELETE FROM ldp_leases WHERE lease_key = $1 AND holder = $2 AND token = $3`, l.Key, l.Holder, l.Token)
	if l.OnRelease != nil {
		l.OnRelease()
	}
}
