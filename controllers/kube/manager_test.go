package kube

import (
	"context"
	"testing"
)

// TestPlainMetricsOnlyOnLoopback: metrics without TLS or a token are served on a loopback
// address only; anywhere else RunManager refuses to start, before it reaches the API server.
func TestPlainMetricsOnlyOnLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr, want string
	}{
		{":8080", `the metrics address ":8080" serves plain HTTP, with no token asked, beyond this machine: serve them securely (--metrics-secure, the default), or on 127.0.0.1 (--metrics-bind-address 127.0.0.1:8080)`},
		{"0.0.0.0:9090", `the metrics address "0.0.0.0:9090" serves plain HTTP, with no token asked, beyond this machine: serve them securely (--metrics-secure, the default), or on 127.0.0.1 (--metrics-bind-address 127.0.0.1:9090)`},
		{"8080", `the metrics address "8080": address 8080: missing port in address (use HOST:PORT, such as 127.0.0.1:8080)`},
	} {
		err := RunManager(context.Background(), ManagerOptions{MetricsAddr: tc.addr})
		if err == nil || err.Error() != tc.want {
			t.Errorf("plain metrics on %s: %v\nwant: %s", tc.addr, err, tc.want)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "0", ""} {
		if err := checkMetricsAddr(addr, false); err != nil {
			t.Errorf("plain metrics on %s: %v", addr, err)
		}
	}
	if err := checkMetricsAddr(":8443", true); err != nil {
		t.Errorf("secure metrics on :8443: %v", err)
	}
}
