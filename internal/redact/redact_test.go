package redact

import (
	"strings"
	"testing"
)

func TestSecretsAreMasked(t *testing.T) {
	secrets := []string{"hunter2secret", "ghp_abcdefghijklmnop123456", "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9.payload.sig", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"}
	texts := []string{
		"connect postgres://ldp:hunter2secret@db.internal:5432/cat failed",
		"GET https://api.example.com/x?token=ghp_abcdefghijklmnop123456&page=2",
		"using key AKIAIOSFODNN7EXAMPLE in us-east-1",
		"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
		"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
		`{"password": "hunter2secret", "api_key":"ghp_abcdefghijklmnop123456"}`,
		"secret_access_key=hunter2secret region=eu",
	}
	for _, text := range texts {
		got := String(text)
		for _, s := range secrets {
			if strings.Contains(got, s) {
				t.Errorf("String(%q) = %q still holds %q", text, got, s)
			}
		}
		if !strings.Contains(got, Mask) {
			t.Errorf("String(%q) = %q masks nothing", text, got)
		}
	}
	if got := String("postgres://ldp:hunter2secret@db/x"); got != "postgres://ldp:***@db/x" {
		t.Errorf("URL = %q, want the user kept", got)
	}
	for in, want := range map[string]string{
		"POST https://lineage:hunter2secret@marquez:5000/api/v1/lineage": "POST https://lineage:***@marquez:5000/api/v1/lineage",
		"POST https://ghp_abcdefghij@marquez/api":                        "POST https://***@marquez/api",
		"connect postgres://ldp@db/x":                                    "connect postgres://ldp@db/x",
		"see https://example.com/a@b":                                    "see https://example.com/a@b",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if got := String("read data/orders.csv:3: malformed CSV row"); got != "read data/orders.csv:3: malformed CSV row" {
		t.Errorf("plain text changed: %q", got)
	}
	v := Value(map[string]any{"token": "abc", "api_key_env": "LINEAGE_TOKEN", "nested": []any{"pass postgres://u:p4ss@h/db"}}).(map[string]any)
	if v["token"] != Mask || v["api_key_env"] != "LINEAGE_TOKEN" || strings.Contains(v["nested"].([]any)[0].(string), "p4ss") {
		t.Errorf("Value = %v", v)
	}
}

// The rules' may tests only skip work: every text comes out as running every expression on it
// would make it, secrets or not, mixed case, non-ASCII folding and rules that feed each other.
func TestMaySkipsOnlyWhatCannotMatch(t *testing.T) {
	all := func(s string) string {
		for _, r := range rules {
			s = r.re.ReplaceAllString(s, r.with)
		}
		return s
	}
	texts := []string{
		"", "window 2024-01-01T00:00:00Z/2024-01-02T00:00:00Z rows 10", "read data/orders.csv:3: malformed CSV row",
		"connect postgres://ldp:hunter2secret@db.internal:5432/cat failed", "HTTPS://ghp_abcdefghij@marquez/api",
		"GET https://api.example.com/x?TOKEN=ghp_abcdefghijklmnop123456&page=2", "using key AKIAIOSFODNN7EXAMPLE",
		"ASIAIOSFODNN7EXAMPLEX", "Authorization: BEARER eyJhbGciOiJIUzI1NiJ9.payload.sig", "basic dXNlcjpwYXNzd29yZA==",
		"-----BEGIN RSA PRIVATE KEY-----\nabc", `{"Password": "hunter2secret", "API-KEY":"x1"}`, "pwd=x", "PrivateKey: abc",
		"my_auth_header: zzz", "credentials=abc;", "access-key = abc", "passwd:abc",
		// Non-ASCII: (?i) folds the Kelvin sign with k and the long s with s.
		"api_\u212Aey=hunter2secret", "ba\u017Fic dXNlcjpwYXNzd29yZA==", "tök=1 token=abc", "日本 password=abc",
		"user https://a:b@c and Bearer abcdefghij then token: x",
	}
	for _, s := range texts {
		if got, want := String(s), all(s); got != want {
			t.Errorf("String(%q) = %q, every rule gives %q", s, got, want)
		}
	}
}
