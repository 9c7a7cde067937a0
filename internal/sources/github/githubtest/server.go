// Package githubtest is a small GitHub REST server for tests: the list-issues endpoint of one
// repository as GitHub documents it (state, since, sort, direction, per_page and page, a Link
// header to the next and last pages), its error bodies (404, 401) and its rate limits (403 with
// X-RateLimit-Remaining 0 and X-RateLimit-Reset, 429 with Retry-After). The issues are a
// recorded response (testdata/issues.json); it serves them under /repos/ and, as GitHub Enterprise
// does, under /api/v3/repos/.
package githubtest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed testdata/issues.json
var recorded []byte

// Server is a running fake. Its fields may be changed between requests, under Lock.
type Server struct {
	*httptest.Server
	sync.Mutex
	// Repository is the one repository it has (owner/name).
	Repository string
	// Token, when set, is the only token it accepts; a request without one is anonymous.
	Token string
	// RateLimited is how many of the next requests are refused; Reset and RetryAfter say how:
	// a primary limit (403, X-RateLimit-Reset) when RetryAfter is 0, else a 429 with it.
	RateLimited int
	Reset       time.Time
	RetryAfter  time.Duration
	// Failing is how many of the next requests get a 500.
	Failing int
	// Requests are the query strings of the list requests it answered, and Auth their
	// Authorization headers.
	Requests []string
	Auth     []string
	// Issues are the repository's issues, as the API shows them (testdata/issues.json at the start).
	Issues []map[string]any
}

// New starts a server with the recorded issues of repository octo/lake.
func New() *Server {
	s := &Server{Repository: "octo/lake"}
	if err := json.Unmarshal(recorded, &s.Issues); err != nil {
		panic(err)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Lock()
	defer s.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	s.Requests = append(s.Requests, r.URL.RawQuery)
	s.Auth = append(s.Auth, r.Header.Get("Authorization"))
	auth := r.Header.Get("Authorization")
	if auth != "" && (s.Token == "" || auth != "Bearer "+s.Token) {
		fail(w, http.StatusUnauthorized, "Bad credentials", "https://docs.github.com/rest")
		return
	}
	if s.Failing > 0 {
		s.Failing--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if s.RateLimited > 0 {
		s.RateLimited--
		if s.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(s.RetryAfter/time.Second)))
			fail(w, http.StatusTooManyRequests, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
				"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits")
			return
		}
		w.Header().Set("X-RateLimit-Limit", "60")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Used", "60")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(s.Reset.Unix(), 10))
		w.Header().Set("X-RateLimit-Resource", "core")
		fail(w, http.StatusForbidden, "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)",
			"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting")
		return
	}
	if path != "/repos/"+s.Repository+"/issues" {
		fail(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest/issues/issues#list-repository-issues")
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		var err error
		if since, err = time.Parse(time.RFC3339, v); err != nil {
			fail(w, http.StatusUnprocessableEntity, "Validation Failed", "https://docs.github.com/rest/issues/issues#list-repository-issues")
			return
		}
	}
	var list []map[string]any
	for _, is := range s.Issues {
		updated, _ := time.Parse(time.RFC3339, is["updated_at"].(string))
		if (state == "all" || is["state"] == state) && !updated.Before(since) {
			list = append(list, is)
		}
	}
	field := map[string]string{"": "created_at", "created": "created_at", "updated": "updated_at"}[q.Get("sort")]
	slices.SortStableFunc(list, func(a, b map[string]any) int {
		c := strings.Compare(a[field].(string), b[field].(string))
		if q.Get("direction") != "asc" {
			c = -c
		}
		return c
	})
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(list)+per-1)/per, 1)
	if page < last {
		link := func(n int, rel string) string {
			u := *r.URL
			qq := u.Query()
			qq.Set("page", strconv.Itoa(n))
			u.RawQuery = qq.Encode()
			return fmt.Sprintf("<http://%s%s>; rel=%q", r.Host, u.String(), rel)
		}
		w.Header().Set("Link", link(page+1, "next")+", "+link(last, "last"))
	}
	lo, hi := min((page-1)*per, len(list)), min(page*per, len(list))
	json.NewEncoder(w).Encode(append([]map[string]any{}, list[lo:hi]...))
}

func fail(w http.ResponseWriter, status int, msg, doc string) {
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": doc, "status": strconv.Itoa(status)})
}
