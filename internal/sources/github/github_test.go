package github_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/sources/github"
	"github.com/ldp-dev/ldp/internal/sources/github/githubtest"
)

func read(t *testing.T, cfg github.Config) ([]github.Issue, error) {
	t.Helper()
	var out []github.Issue
	err := github.Read(context.Background(), cfg, func(is github.Issue) error {
		out = append(out, is)
		return nil
	})
	return out, err
}

func numbers(iss []github.Issue) []int64 {
	var out []int64
	for _, is := range iss {
		out = append(out, is.Number)
	}
	return out
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestReadFollowsLinkPages: with two issues a page the read follows the Link header to the
// third page and maps each field of the recorded response: labels, author, a null body, a
// pull request, closed_at.
func TestReadFollowsLinkPages(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	iss, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(iss); len(got) != 5 || got[0] != 4 || got[4] != 3 {
		t.Fatalf("issues %v, want all 5 oldest update first (4 ... 3)", got)
	}
	if len(srv.Requests) != 3 {
		t.Errorf("%d requests for 5 issues 2 a page, want 3: %v", len(srv.Requests), srv.Requests)
	}
	by := map[int64]github.Issue{}
	for _, is := range iss {
		by[is.Number] = is
	}
	one, two := by[1], by[2]
	if one.Title != "Loader drops the last row" || one.Author != "ana" || one.State != "closed" ||
		strings.Join(one.Labels, ",") != "bug,p1" || one.ClosedAt == nil || !one.ClosedAt.Equal(ts("2026-03-02T09:30:00Z")) ||
		one.PullRequest || one.Body == nil || *one.Body != "The CSV's last line has no newline." || !one.CreatedAt.Equal(ts("2026-03-01T08:00:00Z")) {
		t.Errorf("issue 1 read as %+v", one)
	}
	if !two.PullRequest || two.Body != nil || two.ClosedAt != nil || len(two.Labels) != 0 || two.Labels == nil {
		t.Errorf("pull request 2 read as %+v", two)
	}
}

// TestReadWindow: a window asks for since=start and keeps only the issues updated before its
// end (issue 5 was updated at the end exactly: the next window's).
func TestReadWindow(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	iss, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL,
		Since: ts("2026-03-02T00:00:00Z"), Until: ts("2026-03-03T00:00:00Z")})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(iss); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("window 2026-03-02 read issues %v, want [1 2]", got)
	}
	if q := srv.Requests[0]; !strings.Contains(q, "since=2026-03-02T00%3A00%3A00Z") || !strings.Contains(q, "state=all") || !strings.Contains(q, "sort=updated") {
		t.Errorf("request %q: want since, state=all and sort=updated", q)
	}
	if srv.Auth[0] != "" {
		t.Errorf("an anonymous read sent Authorization %q", srv.Auth[0])
	}
}

// TestReadState: state open leaves the closed issues to GitHub's filter.
func TestReadState(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	iss, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, State: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if got := numbers(iss); len(got) != 3 || got[0] != 2 || got[1] != 5 || got[2] != 3 {
		t.Errorf("open issues %v, want [2 5 3]", got)
	}
}

// TestReadSendsToken: the token goes in the Authorization header.
func TestReadSendsToken(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.Token = "ghp_right"
	if _, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Token: "ghp_right"}); err != nil {
		t.Fatal(err)
	}
	if srv.Auth[0] != "Bearer ghp_right" {
		t.Errorf("Authorization %q", srv.Auth[0])
	}
}

func TestReadErrors(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	srv.Token = "ghp_right"
	for _, c := range []struct {
		name string
		cfg  github.Config
		want []string
	}{
		{"not found", github.Config{Repository: "octo/nope", Token: "ghp_right"},
			[]string{"GitHub has no repository octo/nope, or the token cannot see it (404)", "check source.repository", "GITHUB_TOKEN"}},
		{"not found anonymous", github.Config{Repository: "octo/nope"},
			[]string{"GitHub has no public repository octo/nope (404)", "a private one needs a token in GITHUB_TOKEN"}},
		{"bad token", github.Config{Repository: "octo/lake", Token: "ghp_wrong_f00d", TokenVar: "LAKE_TOKEN"},
			[]string{"GitHub refused the token in LAKE_TOKEN reading octo/lake (401 Bad credentials)", "check that it is valid and not expired"}},
		{"not owner/name", github.Config{Repository: "octo"}, []string{`repository "octo" is not owner/name`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.BaseURL = srv.URL
			_, err := read(t, c.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "ghp_") {
				t.Errorf("error %q shows the token", err)
			}
			var re interface{ Retriable() bool }
			if errors.As(err, &re) && re.Retriable() {
				t.Errorf("error %q is retriable", err)
			}
		})
	}
}

// TestRateLimitShortWait: a primary limit that resets in a few seconds (403, X-RateLimit-Reset)
// and a secondary one (429, Retry-After) are waited out, for as long as they ask, and the read
// goes on.
func TestRateLimitShortWait(t *testing.T) {
	for _, c := range []struct {
		name       string
		retryAfter time.Duration
		min, max   time.Duration
	}{
		{"primary", 0, 3 * time.Second, 6 * time.Second},
		{"secondary", 7 * time.Second, 7 * time.Second, 7 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := githubtest.New()
			defer srv.Close()
			srv.RateLimited, srv.Reset, srv.RetryAfter = 1, time.Now().Add(4*time.Second), c.retryAfter
			var waited []time.Duration
			iss, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL,
				Sleep: func(ctx context.Context, d time.Duration) error { waited = append(waited, d); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			if len(iss) != 5 || len(waited) != 1 || waited[0] < c.min || waited[0] > c.max {
				t.Errorf("read %d issues after waits %v; want 5 after one wait in [%s, %s]", len(iss), waited, c.min, c.max)
			}
		})
	}
}

// TestRateLimitLongWait: a limit that resets in an hour, or later than the run's deadline, is
// a retriable error that says when to retry, with no wait.
func TestRateLimitLongWait(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	srv.RateLimited, srv.Reset = 10, reset
	sleep := func(ctx context.Context, d time.Duration) error { t.Errorf("waited %s", d); return nil }
	_, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Sleep: sleep})
	var rl *github.RateLimitError
	if !errors.As(err, &rl) || !rl.Retriable() {
		t.Fatalf("error %v, want a retriable RateLimitError", err)
	}
	want := "GitHub rate limit reached reading the issues of octo/lake; retry after " + reset.Add(time.Second).UTC().Format(time.RFC3339)
	if got := err.Error(); got != want+" (or set a token in GITHUB_TOKEN: anonymous reads have 60 requests an hour, a token 5,000)" {
		t.Errorf("error %q, want %q and the advice to set a token", got, want)
	}
	// With a token set, the message does not offer one.
	srv.Token = "ghp_test"
	_, err = read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Sleep: sleep, Token: "ghp_test", TokenVar: "LAKE_TOKEN"})
	if err == nil || err.Error() != want {
		t.Errorf("with a token: error %v, want %q", err, want)
	}
	srv.RateLimited, srv.Token = 10, ""

	srv.RateLimited, srv.Reset, srv.RetryAfter = 10, time.Time{}, 30*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = github.Read(ctx, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Sleep: sleep}, func(github.Issue) error { return nil })
	if !errors.As(err, &rl) {
		t.Fatalf("a 30 s Retry-After within a 5 s deadline: error %v, want a RateLimitError", err)
	}
}

// TestReal reads a public repository's issues from api.github.com when LDP_TEST_GITHUB names
// one (owner/name), with GITHUB_TOKEN if set.
func TestReal(t *testing.T) {
	repo := os.Getenv("LDP_TEST_GITHUB")
	if repo == "" {
		t.Skip("set LDP_TEST_GITHUB=owner/name to read a real repository's issues")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := 0
	err := github.Read(ctx, github.Config{Repository: repo, Token: os.Getenv("GITHUB_TOKEN"), Since: time.Now().Add(-7 * 24 * time.Hour)},
		func(is github.Issue) error {
			if is.Number <= 0 || is.UpdatedAt.IsZero() || is.Author == "" {
				t.Errorf("issue read as %+v", is)
			}
			n++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d issues of %s updated in the last week", n, repo)
}

type countingTransport struct{ n *int }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	*c.n++
	return http.DefaultTransport.RoundTrip(r)
}

// TestReadRefusesBadRepository: a name outside GitHub's pattern is refused before any request,
// so "octo/.." cannot turn into /repos/issues sent with the token.
func TestReadRefusesBadRepository(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	for _, repo := range []string{"octo/..", "octo/.", "octo/lake?x=1", "octo/lake#x", "octo/la%2Fke", "oc to/lake", "octo_x/lake"} {
		n := 0
		_, err := read(t, github.Config{Repository: repo, BaseURL: srv.URL, Token: "secret",
			HTTPClient: &http.Client{Transport: countingTransport{&n}}})
		if err == nil || !strings.Contains(err.Error(), "is not owner/name") {
			t.Errorf("%s: err = %v, want a refusal", repo, err)
		}
		if n != 0 {
			t.Errorf("%s: %d requests sent, want none", repo, n)
		}
	}
}

// TestServerErrorsRetried: a 500 is sent again (after a wait within the context); one that
// keeps failing says so in one line, without the URL.
func TestServerErrorsRetried(t *testing.T) {
	srv := githubtest.New()
	defer srv.Close()
	var waits []time.Duration
	sleep := func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	srv.Failing = 1
	iss, err := read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Sleep: sleep})
	if err != nil {
		t.Fatal(err)
	}
	if len(iss) == 0 || len(waits) != 1 {
		t.Errorf("%d issues after %d waits, want the issues after 1", len(iss), len(waits))
	}
	srv.Failing = 10
	_, err = read(t, github.Config{Repository: "octo/lake", BaseURL: srv.URL, Sleep: sleep})
	var r interface{ Retriable() bool }
	if err == nil || err.Error() != "GitHub octo/lake: 500 Internal Server Error (after 4 tries)" || !errors.As(err, &r) || !r.Retriable() {
		t.Errorf("err = %v, want a retriable error after 4 tries", err)
	}
}
