package lake

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/testpg"
)

// TestStalledPostgresConnection: the catalog's server, and the backend of a connection the
// catalog holds open, are stopped (SIGSTOP), as a server that hangs or a half-open connection
// is. A load ends within the bound the uri's statement_timeout sets (plus a little) with an
// error saying what to check, and a load whose context ends (a SIGTERM) returns at once. It
// waited for as long as the server was stopped.
func TestStalledPostgresConnection(t *testing.T) {
	pg := testpg.Start(t)
	uri := pg.URI
	ctx := context.Background()
	cat, err := Open(ctx, &v1.Catalog{Type: "sql", URI: uri + "&statement_timeout=2s&connect_timeout=3", Identifier: "lake", WarehousePath: "warehouse"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	ref := Ref{Namespace: "lake", Name: "rides"}
	if _, err := cat.Load(ctx, ref); err == nil || !strings.Contains(err.Error(), "does not exist yet") {
		t.Fatalf("load of a table not made yet: %v", err)
	}
	pg.Signal(t, syscall.SIGSTOP)
	t.Cleanup(func() { pg.Signal(t, syscall.SIGCONT) }) // before the cluster's stop

	load := func(ctx context.Context) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := cat.Load(ctx, ref)
			done <- err
		}()
		return done
	}
	select {
	case err := <-load(ctx):
		if err == nil || !strings.Contains(err.Error(), "the server did not answer in time") || !strings.Contains(err.Error(), "check that it is running and reachable") {
			t.Fatalf("load from a stopped server: %v, want an error saying what to check", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("a load from a stopped server still waits after 90 s")
	}

	cctx, cancel := context.WithCancel(ctx)
	done := load(cctx)
	time.Sleep(500 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a load from a stopped server whose context ended succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a load from a stopped server did not end with its context")
	}
}

func TestPostgresDurations(t *testing.T) {
	for v, want := range map[string]time.Duration{"60s": time.Minute, "1500": 1500 * time.Millisecond, "1.5": 1500 * time.Microsecond, "2 min": 2 * time.Minute, "250ms": 250 * time.Millisecond, "1h": time.Hour, "0": 0} {
		if got, ok := pgDuration(v); !ok || got != want {
			t.Errorf("pgDuration(%q) = %s %v, want %s", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "soon", "5 fortnights"} {
		if got, ok := pgDuration(v); ok {
			t.Errorf("pgDuration(%q) = %s, want not a duration", v, got)
		}
	}
}
