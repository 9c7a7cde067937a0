// Package redact masks secrets in text before it reaches a ledger, a lineage endpoint, a log
// or a terminal: passwords in URLs, token=value pairs, bearer tokens, AWS access key ids and
// PEM blocks.
package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "***"

// rules are the patterns masked. may is a cheap test, on the text and its ASCII lower case,
// that is true whenever the pattern can match: most text a run logs (window bounds, counts,
// paths) passes none of them, and six regular expressions over every string of every ledger
// event were 2% of a small backfill window's CPU. A text that is not ASCII runs every pattern,
// as (?i) also folds a few non-ASCII letters (the Kelvin sign matches k).
var rules = []struct {
	re   *regexp.Regexp
	with string
	may  func(s, lower string) bool
}{
	// -----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY-----, whole.
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]+-----.*?(-----END [A-Z0-9 ]+-----|$)`), "-----BEGIN " + Mask + "-----",
		func(s, _ string) bool { return strings.Contains(s, "-----BEGIN ") }},
	// scheme://user:password@host keeps the user.
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^@/\s]+@`), "${1}:" + Mask + "@", hasURLUser},
	// https://TOKEN@host: an HTTP client sends a lone user as a Basic credential, and services
	// take a token there; elsewhere (postgres://ldp@db) a lone user is a name, kept.
	{regexp.MustCompile(`(?i)\b(https?://)[^/\s:@]+@`), "${1}" + Mask + "@", hasURLUser},
	// Authorization: Bearer abc, bearer abc.
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`), "${1} " + Mask,
		func(_, lower string) bool {
			return strings.Contains(lower, "bearer") || strings.Contains(lower, "basic")
		}},
	// AWS access key ids.
	{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), Mask,
		func(s, _ string) bool { return strings.Contains(s, "AKIA") || strings.Contains(s, "ASIA") }},
	// token=..., password: ..., "api_key": "..." and the like.
	{regexp.MustCompile(`(?i)((?:[a-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|access[_-]?key|credential|private[_-]?key|auth)[a-z0-9_.-]*)["']?\s*[=:]\s*["']?)([^\s"'&,;}]+)`), "${1}" + Mask,
		func(s, lower string) bool {
			if !strings.ContainsAny(s, "=:") {
				return false
			}
			for _, w := range []string{"token", "secret", "passw", "pwd", "api", "access", "credential", "private", "auth"} {
				if strings.Contains(lower, w) {
					return true
				}
			}
			return false
		}},
}

// hasURLUser: the text may hold scheme://...@.
func hasURLUser(s, _ string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") }

// isASCII reports whether s is ASCII only, where the rules' may tests are exact.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// known are secret values this process read (a token from the variable a spec names): they
// are masked wherever they appear, whatever the text around them looks like.
var known struct {
	sync.RWMutex
	values []string
}

// Secret registers v as a secret value, masked by String from now on. Values shorter than six
// characters are not registered: masking them would garble ordinary text.
func Secret(v string) {
	if len(v) < 6 {
		return
	}
	known.Lock()
	defer known.Unlock()
	if !slices.Contains(known.values, v) {
		known.values = append(known.values, v)
	}
}

// String masks every secret in s.
func String(s string) string {
	if s == "" {
		return s
	}
	known.RLock()
	for _, v := range known.values {
		s = strings.ReplaceAll(s, v, Mask)
	}
	known.RUnlock()
	ascii := isASCII(s)
	lower := s
	if ascii {
		lower = strings.ToLower(s)
	}
	for _, r := range rules {
		// A rule that replaced text may have made the next one's match possible: the tests run
		// on the text as it is at each rule, as the expressions do.
		if ascii && !r.may(s, lower) {
			continue
		}
		s = r.re.ReplaceAllString(s, r.with)
		if ascii = isASCII(s); ascii {
			lower = strings.ToLower(s)
		}
	}
	return s
}

// Value masks the secrets in every string of a decoded JSON-like value, and the value of
// every key that names a secret.
func Value(v any) any {
	switch t := v.(type) {
	case string:
		return String(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if SecretKey(k) {
				if _, isStr := e.(string); isStr {
					out[k] = Mask
					continue
				}
			}
			out[k] = Value(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Value(e)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			out[i] = String(e)
		}
		return out
	}
	return v
}

// SecretKey reports whether a key names a secret (token, secret, password, credential).
// Keys that name where a secret lives (api_key_env, token_env) are not secrets.
func SecretKey(k string) bool {
	k = strings.ToLower(k)
	if strings.HasSuffix(k, "_env") {
		return false
	}
	for _, w := range []string{"token", "secret", "password", "passwd", "credential", "api_key", "apikey"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// Writer masks secrets in what is written through it, line by line as it comes.
type Writer struct {
	W interface{ Write([]byte) (int, error) }
}

func (w Writer) Write(p []byte) (int, error) {
	if _, err := w.W.Write([]byte(String(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}
