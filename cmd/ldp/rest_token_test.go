package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestRESTTokenNeverPrinted: a spec names the variable that holds a REST catalog's token. The
// token reaches the server (the test's own HTTP server on 127.0.0.1), and appears nowhere ldp
// writes: not in output, errors, or the ledger's events, even when the server echoes it back
// in an error.
func TestRESTTokenNeverPrinted(t *testing.T) {
	t.Parallel()
	const token = "tok-7f3a9c1e5b2d48c6"
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/v1/config" {
			json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
			return
		}
		// The worst server there is: it refuses, and says back what it was sent.
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": "not allowed for Authorization " + r.Header.Get("Authorization") + " (token " + token + ")",
			"type":    "ForbiddenException", "code": 403,
		}})
	}))
	defer srv.Close()

	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	l.write(t, "orders.csv", "order_id,amount\n1,10\n")
	l.write(t, "orders.json", `{"identifier": "orders", "metadata": {
		"source": {"format": "CSV", "path": "orders.csv"},
		"target": {"name": "orders", "format": "ICEBERG",
		           "catalog": {"type": "rest", "uri": "`+srv.URL+`", "identifier": "shop", "token_env": "SHOP_CATALOG_TOKEN"}}}}`)
	env := []string{"SHOP_CATALOG_TOKEN=" + token, "LDP_CACHE_DIR=" + filepath.Join(l.dir, "cache")}

	var all strings.Builder
	for _, args := range [][]string{
		{"validate", "orders.json"},
		{"run", "orders.json"},
		{"run", "orders.json", "-v"},
		{"catalog", "test", "orders.json"},
		{"catalog", "test", "orders.json", "--json"},
		{"plan", "orders.json"},
		{"snapshots", "orders.json"},
		{"runs"},
	} {
		code, out, errs := l.run(t, env, args...)
		all.WriteString(out + errs)
		if args[0] == "run" && code == 0 {
			t.Errorf("ldp run against a server that refuses everything exited 0: %s %s", out, errs)
		}
	}
	if !strings.Contains(all.String(), "ForbiddenException") && !strings.Contains(all.String(), "not allowed") {
		t.Errorf("the server's refusal was not reported at all:\n%s", all.String())
	}
	ledger, _ := os.ReadFile(filepath.Join(l.dir, ".ldp", "events.jsonl"))
	if len(ledger) == 0 {
		t.Error("the failed runs left no events in the ledger")
	}
	for what, text := range map[string]string{"output and errors": all.String(), "the ledger": string(ledger)} {
		if strings.Contains(text, token) {
			t.Errorf("the token is in %s:\n%s", what, text)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(seen, "Bearer "+token) {
		t.Errorf("the server never received the token: %q", seen)
	}

	// A variable that is not set is a configuration error that names it.
	code, out, errs := l.run(t, []string{"SHOP_CATALOG_TOKEN="}, "catalog", "test", "orders.json")
	if code == 0 || !strings.Contains(out+errs, "token_env names the environment variable SHOP_CATALOG_TOKEN, which is not set") {
		t.Errorf("an unset token variable: %d %s %s", code, out, errs)
	}
}
