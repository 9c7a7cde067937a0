// Package github reads a repository's issues through GitHub's REST API (go-github), for a
// pipeline whose source format is GITHUB: one Issue per issue or pull request, following the
// Link pagination, waiting out a short rate limit and refusing a long one with a retriable error
// that says when to retry. The token is sent as a header and never appears in an error.
package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v84/github"

	"github.com/ldp-dev/ldp/internal/ctxtime"
)

// States are the values a spec may give source.state; "" is StateAll.
var States = []string{"open", "closed", "all"}

// StateAll is the state read when the spec gives none: a loader wants the issues that closed in
// its window as much as those that opened.
const StateAll = "all"

// MaxWait is the longest rate-limit wait a read sits through; a longer one is an error that says
// when to retry, so a scheduled run does not hold its window's lease for an hour.
const MaxWait = 2 * time.Minute

// maxWaits bounds the waits of one page: a server that keeps limiting is a later attempt's.
const maxWaits = 3

// Config is what a read needs.
type Config struct {
	// Repository is owner/name.
	Repository string
	// State is open, closed or all ("" is all).
	State string
	// BaseURL is a GitHub Enterprise server's URL (https://ghe.example.com; /api/v3/ is added
	// when it is not there); "" is api.github.com.
	BaseURL string
	// Token authenticates the requests; "" reads anonymously (60 requests an hour).
	Token string
	// TokenVar names where the token came from, for the messages of a 401.
	TokenVar string
	// Since and Until bound the issues read by updated_at, [Since, Until); zero for none.
	Since, Until time.Time
	// Sleep waits out a rate limit (a test seam); nil sleeps on the clock, within ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// HTTPClient is the transport; nil is http.DefaultClient.
	HTTPClient *http.Client
	// PerPage is the page size asked for; 0 is 100, the API's largest.
	PerPage int
}

// Issue is one row of a GITHUB source.
type Issue struct {
	Number      int64      `json:"number"`
	Title       string     `json:"title"`
	Body        *string    `json:"body"`
	State       string     `json:"state"`
	Labels      []string   `json:"labels"`
	Author      string     `json:"author"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	ClosedAt    *time.Time `json:"closed_at"`
	PullRequest bool       `json:"pull_request"`
}

// Columns are the row's columns and their DuckDB types, in order.
var Columns = [][2]string{
	{"number", "BIGINT"}, {"title", "VARCHAR"}, {"body", "VARCHAR"}, {"state", "VARCHAR"},
	{"labels", "VARCHAR[]"}, {"author", "VARCHAR"}, {"created_at", "TIMESTAMPTZ"},
	{"updated_at", "TIMESTAMPTZ"}, {"closed_at", "TIMESTAMPTZ"}, {"pull_request", "BOOLEAN"},
}

// maxTries bounds the sends of one page that GitHub fails with a 5xx.
const maxTries = 4

// ServerError is GitHub failing a page (5xx) every time it was sent: a later attempt may get
// through.
type ServerError struct {
	Repository, Status string
	Tries              int
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("GitHub %s: %s (after %d tries)", e.Repository, e.Status, e.Tries)
}

// Retriable is true: GitHub's own failure.
func (e *ServerError) Retriable() bool { return true }

// RateLimitError is a rate limit longer than a read waits (or than its context allows): a
// later attempt gets through once it resets.
type RateLimitError struct {
	Repository string
	Until      time.Time
	// TokenVar names the variable a token is read from; Anonymous is a read without one,
	// whose limit (60 an hour) a token raises.
	TokenVar  string
	Anonymous bool
}

func (e *RateLimitError) Error() string {
	msg := fmt.Sprintf("GitHub rate limit reached reading the issues of %s; retry after %s", e.Repository, e.Until.UTC().Format(time.RFC3339))
	if e.Anonymous {
		msg += fmt.Sprintf(" (or set a token in %s: anonymous reads have 60 requests an hour, a token 5,000)", cmp.Or(e.TokenVar, "GITHUB_TOKEN"))
	}
	return msg
}

// Retriable is true: the same read succeeds once the limit resets.
func (e *RateLimitError) Retriable() bool { return true }

// AccessError is a repository that GitHub does not show (404) or a token it refuses (401, 403):
// retrying cannot fix it.
type AccessError struct {
	Repository string
	Status     int
	Msg        string
}

func (e *AccessError) Error() string { return e.Msg }

// Retriable is false: the same request fails again until the spec or the token changes.
func (e *AccessError) Retriable() bool { return false }

// RepositoryPattern is GitHub's pattern of owner/name: an owner of letters, digits and '-', a
// name of letters, digits, '.', '_' and '-' that is not all dots. The name goes into the
// request's path, so "octo/.." would have asked for /repos/issues with the token, and '?', '#'
// or '%' would have changed the request. schemas/pipeline.cue holds the same pattern.
const RepositoryPattern = `^[A-Za-z0-9-]+/[A-Za-z0-9._-]*[A-Za-z0-9_-][A-Za-z0-9._-]*$`

var repositoryRE = regexp.MustCompile(RepositoryPattern)

// ParseRepository splits owner/name.
func ParseRepository(s string) (owner, name string, err error) {
	if !repositoryRE.MatchString(s) {
		return "", "", fmt.Errorf("repository %q is not owner/name: the owner has letters, digits and '-', the name letters, digits, '.', '_' and '-' (not . or ..)", s)
	}
	owner, name, _ = strings.Cut(s, "/")
	return owner, name, nil
}

// Read calls emit with each issue of the repository updated in [Since, Until), in the order
// GitHub gives them (by updated_at, oldest first).
func Read(ctx context.Context, cfg Config, emit func(Issue) error) error {
	owner, name, err := ParseRepository(cfg.Repository)
	if err != nil {
		return err
	}
	state := cfg.State
	if state == "" {
		state = StateAll
	}
	client := gh.NewClient(cfg.HTTPClient)
	if cfg.BaseURL != "" {
		if client, err = client.WithEnterpriseURLs(cfg.BaseURL, cfg.BaseURL); err != nil {
			return fmt.Errorf("github base_url %q: %w", cfg.BaseURL, err)
		}
	}
	if cfg.Token != "" {
		client = client.WithAuthToken(cfg.Token)
	}
	sleep := cfg.Sleep
	if sleep == nil {
		sleep = ctxtime.Sleep
	}
	per := cfg.PerPage
	if per == 0 {
		per = 100
	}
	opts := &gh.IssueListByRepoOptions{State: state, Sort: "updated", Direction: "asc", ListOptions: gh.ListOptions{PerPage: per}}
	// ldp waits out a limit itself (or says when to retry): go-github's own check would refuse
	// the retry locally, with no request, until its clock passes the reset it last saw.
	ctx = context.WithValue(ctx, gh.BypassRateLimitCheck, true)
	if !cfg.Since.IsZero() {
		opts.Since = cfg.Since
	}
	for {
		var page []*gh.Issue
		var resp *gh.Response
		backoff := 500 * time.Millisecond
		for waits, tries := 0, 1; ; waits++ {
			page, resp, err = client.Issues.ListByRepo(ctx, url.PathEscape(owner), url.PathEscape(name), opts)
			if err == nil {
				break
			}
			if resp != nil && resp.StatusCode >= 500 {
				if tries == maxTries {
					return &ServerError{Repository: cfg.Repository, Status: resp.Status, Tries: tries}
				}
				if err := sleep(ctx, backoff); err != nil {
					return fmt.Errorf("GitHub %s: %w", cfg.Repository, err)
				}
				tries, backoff = tries+1, backoff*2
				continue
			}
			wait, until, limited := rateLimited(err, resp)
			if !limited {
				return cfg.explain(err, resp)
			}
			if dl, ok := ctx.Deadline(); wait > MaxWait || (ok && dl.Before(until)) || waits == maxWaits {
				return &RateLimitError{Repository: cfg.Repository, Until: until, TokenVar: cfg.TokenVar, Anonymous: cfg.Token == ""}
			}
			if err := sleep(ctx, wait); err != nil {
				return &RateLimitError{Repository: cfg.Repository, Until: until, TokenVar: cfg.TokenVar, Anonymous: cfg.Token == ""}
			}
		}
		for _, is := range page {
			row := rowOf(is)
			// since is inclusive and has no upper bound: the window's end is ldp's to apply.
			if !cfg.Since.IsZero() && row.UpdatedAt.Before(cfg.Since) {
				continue
			}
			if !cfg.Until.IsZero() && !row.UpdatedAt.Before(cfg.Until) {
				continue
			}
			if err := emit(row); err != nil {
				return err
			}
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.ListOptions.Page = resp.NextPage
	}
}

func rowOf(is *gh.Issue) Issue {
	row := Issue{Number: int64(is.GetNumber()), Title: is.GetTitle(), Body: is.Body, State: is.GetState(),
		Labels: []string{}, Author: is.GetUser().GetLogin(), CreatedAt: is.GetCreatedAt().Time,
		UpdatedAt: is.GetUpdatedAt().Time, PullRequest: is.IsPullRequest()}
	for _, l := range is.Labels {
		row.Labels = append(row.Labels, l.GetName())
	}
	if is.ClosedAt != nil {
		t := is.ClosedAt.Time
		row.ClosedAt = &t
	}
	return row
}

// rateLimited reports whether err is a rate limit, how long it asks to wait and until when:
// Retry-After (a secondary limit), else a second past X-RateLimit-Reset (the primary limit,
// whose reset is in whole seconds), else a minute, as GitHub's documentation advises for a
// secondary limit that names no time.
func rateLimited(err error, resp *gh.Response) (time.Duration, time.Time, bool) {
	after := func(d time.Duration) (time.Duration, time.Time, bool) { return d, time.Now().Add(d), true }
	var prim *gh.RateLimitError
	var sec *gh.AbuseRateLimitError
	switch {
	case errors.As(err, &prim):
		until := prim.Rate.Reset.Time.Add(time.Second)
		return max(time.Until(until), 0), until, true
	case errors.As(err, &sec):
		if sec.RetryAfter != nil {
			return after(*sec.RetryAfter)
		}
		return after(time.Minute)
	}
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusForbidden) {
		return 0, time.Time{}, false
	}
	if s := resp.Header.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return after(time.Duration(n) * time.Second)
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return after(time.Minute)
	}
	return 0, time.Time{}, false
}

// explain turns an API error into what the user must check. go-github's messages name the
// request's URL, which carries no token (it goes in a header).
func (cfg Config) explain(err error, resp *gh.Response) error {
	if resp == nil {
		return fmt.Errorf("reading the issues of %s from GitHub: %w", cfg.Repository, err)
	}
	tokenVar := cfg.TokenVar
	if tokenVar == "" {
		tokenVar = "GITHUB_TOKEN"
	}
	var msg string
	switch resp.StatusCode {
	case http.StatusNotFound:
		msg = fmt.Sprintf("GitHub has no repository %s, or the token cannot see it (404): check source.repository, and that %s can read a private repository", cfg.Repository, tokenVar)
		if cfg.Token == "" {
			msg = fmt.Sprintf("GitHub has no public repository %s (404): check source.repository; a private one needs a token in %s", cfg.Repository, tokenVar)
		}
	case http.StatusUnauthorized:
		msg = fmt.Sprintf("GitHub refused the token in %s reading %s (401 Bad credentials): check that it is valid and not expired", tokenVar, cfg.Repository)
	case http.StatusForbidden:
		msg = fmt.Sprintf("GitHub forbids reading the issues of %s (403): check that the token in %s may read its issues", cfg.Repository, tokenVar)
	default:
		return fmt.Errorf("reading the issues of %s from GitHub: %w", cfg.Repository, err)
	}
	return &AccessError{Repository: cfg.Repository, Status: resp.StatusCode, Msg: msg}
}
