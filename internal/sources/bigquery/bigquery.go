// Package bigquery runs a pipeline's BigQuery query (a JSON source with engine BIGQUERY, the
// seed's BigQueryToCSV) through BigQuery's REST API, v2: one jobs.insert under a job id made of
// the run id and attempt, so a retry of the same attempt finds the job BigQuery already has
// instead of sending the query again, then jobs.getQueryResults page by page. The window goes in
// as the named TIMESTAMP parameters @window_start and @window_end, never as text in the SQL.
//
// It speaks the two endpoints with net/http and golang.org/x/oauth2/google (the service
// account's JWT flow, or Application Default Credentials) rather than the Cloud client
// (cloud.google.com/go/bigquery pulls in gRPC, the Storage Read API and Arrow) or the generated
// google.golang.org/api/bigquery/v2 (830 kB of generated code and the api transport stack): ldp
// links neither today, and two endpoints do not need them. The key's contents never reach an
// error: every message names the key file, never what is in it.
package bigquery

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/ldp-dev/ldp/internal/ctxtime"
)

// Scope is the OAuth scope a read asks for.
const Scope = "https://www.googleapis.com/auth/bigquery.readonly"

// DefaultEndpoint is BigQuery's REST API; EndpointEnv overrides it (an emulator, a test's
// server).
const (
	DefaultEndpoint = "https://bigquery.googleapis.com/bigquery/v2/"
	EndpointEnv     = "LDP_BIGQUERY_ENDPOINT"
)

// Config is what a read needs.
type Config struct {
	// KeyFile is a service-account key; "" uses Application Default Credentials.
	KeyFile string
	// QueryFile holds {"query": "..."}.
	QueryFile string
	// Start and End are the window, passed as @window_start and @window_end; zero for none.
	Start, End time.Time
	// JobID identifies the query job; a read under the same id sends no second query.
	JobID string
	// Endpoint is the API's base URL; "" is DefaultEndpoint.
	Endpoint string
	// PageSize bounds the rows of one page (maxResults); 0 is BigQuery's choice.
	PageSize int
	// HTTPClient carries the token requests (a test's server); nil is http.DefaultClient.
	HTTPClient *http.Client
}

// Column is a result column and the DuckDB type it is read as.
type Column struct {
	Name, Type string
}

// Error is an error BigQuery returned: its reason (invalidQuery, accessDenied, quotaExceeded,
// ...) and message, which for a syntax error names the line and column ([1:8]).
type Error struct {
	Status  int
	Reason  string
	Message string
	// RetryAfter is the wait the server asked for, if any.
	RetryAfter time.Duration
	// Tries is how many times the request was sent.
	Tries int
}

func (e *Error) Error() string {
	msg := "BigQuery: " + e.Message
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	switch {
	case e.Retriable():
		if e.RetryAfter > 0 {
			msg += fmt.Sprintf("; retry in %s", e.RetryAfter)
		}
		if e.Tries > 1 {
			msg += fmt.Sprintf(" (after %d tries)", e.Tries)
		}
	case e.Reason == "accessDenied" || e.Status == http.StatusForbidden:
		msg += "; check that the service account may run query jobs in the project and read the tables the query names"
	case e.Reason == "invalidQuery":
		msg += "; fix the query file"
	}
	return msg
}

// Retriable is true for a quota or rate limit and for BigQuery's own failures.
func (e *Error) Retriable() bool {
	switch e.Reason {
	case "quotaExceeded", "rateLimitExceeded", "backendError", "internalError":
		return true
	}
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// InputError is a key or query file ldp cannot use; retrying cannot fix it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Retriable is false.
func (e *InputError) Retriable() bool { return false }

// ReadQuery reads the query of a query file.
func ReadQuery(path string) (string, error) { return ReadQueryFS(nil, path) }

// ReadQueryFS is ReadQuery of the file path of fsys (the operating system's files when nil):
// spec validation reads a cluster object's files from memory.
func ReadQueryFS(fsys fs.FS, path string) (string, error) {
	var b []byte
	var err error
	if fsys == nil {
		b, err = os.ReadFile(path)
	} else {
		b, err = fs.ReadFile(fsys, path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &InputError{Msg: fmt.Sprintf("query file %s does not exist: it holds {\"query\": \"SELECT ...\"}", path)}
		}
		return "", err
	}
	var q struct {
		Query *string `json:"query"`
	}
	if err := json.Unmarshal(b, &q); err != nil {
		return "", &InputError{Msg: fmt.Sprintf("query file %s is not JSON: %v", path, err)}
	}
	if q.Query == nil || strings.TrimSpace(*q.Query) == "" {
		return "", &InputError{Msg: fmt.Sprintf("query file %s has no \"query\": it holds {\"query\": \"SELECT ...\"}", path)}
	}
	return *q.Query, nil
}

// credentials reads the key file (or finds Application Default Credentials) and returns the
// token source and the project the job runs in.
func credentials(ctx context.Context, cfg Config) (oauth2.TokenSource, string, error) {
	// oauth2 posts to the token endpoint without a context (jwt's PostForm, the transport's
	// Token()), so a token_uri that never answers held a run past Ctrl-C; this client ties each
	// token request to the run's context and bounds it.
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: tokenTimeout,
		Transport: ctxTransport{ctx: ctx, base: transport(cfg.HTTPClient)}})
	if cfg.KeyFile == "" {
		creds, err := google.FindDefaultCredentials(ctx, Scope)
		if err != nil {
			return nil, "", &InputError{Msg: "no BigQuery credentials found: name a service-account key in source.credentials.path or set GOOGLE_APPLICATION_CREDENTIALS"}
		}
		if creds.ProjectID == "" {
			return nil, "", &InputError{Msg: "the Application Default Credentials name no project: use a service-account key in source.credentials.path"}
		}
		return creds.TokenSource, creds.ProjectID, nil
	}
	b, err := os.ReadFile(cfg.KeyFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", &InputError{Msg: fmt.Sprintf("key file %s does not exist: source.credentials.path names a service-account key (JSON)", cfg.KeyFile)}
		}
		return nil, "", fmt.Errorf("key file %s: %w", cfg.KeyFile, errors.Unwrap(err))
	}
	// The fields are read here, not by oauth2, so no message can quote the file.
	var key struct {
		Type       string `json:"type"`
		ProjectID  string `json:"project_id"`
		PrivateKey string `json:"private_key"`
		Email      string `json:"client_email"`
	}
	if json.Unmarshal(b, &key) != nil || key.Type != "service_account" || key.PrivateKey == "" || key.Email == "" {
		return nil, "", &InputError{Msg: fmt.Sprintf("key file %s is not a service-account key: want the JSON key of a service account (type \"service_account\", client_email, private_key)", cfg.KeyFile)}
	}
	if key.ProjectID == "" {
		return nil, "", &InputError{Msg: fmt.Sprintf("key file %s has no project_id: the query job runs in the key's project", cfg.KeyFile)}
	}
	jwt, err := google.JWTConfigFromJSON(b, Scope)
	if err != nil {
		return nil, "", &InputError{Msg: fmt.Sprintf("key file %s is not a usable service-account key (its private_key does not parse)", cfg.KeyFile)}
	}
	// The JWT flow parses the key only when it first asks for a token, after the job was
	// sent for; a key that cannot sign is the key file's error, said before anything is sent.
	if !isRSAKey(jwt.PrivateKey) {
		return nil, "", &InputError{Msg: fmt.Sprintf("key file %s: private_key is not a valid PEM RSA key: take a new key from the service account's keys", cfg.KeyFile)}
	}
	return jwt.TokenSource(ctx), key.ProjectID, nil
}

// isRSAKey reports whether pemKey is an RSA private key in PEM, PKCS#8 or PKCS#1, as
// service-account keys are.
func isRSAKey(pemKey []byte) bool {
	block, _ := pem.Decode(pemKey)
	if block == nil {
		return false
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		_, ok := k.(*rsa.PrivateKey)
		return ok
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}

// Read runs the query and calls emit with each row, as JSON values the columns' types read.
// cols is called once, with the result's columns, before the first row.
func Read(ctx context.Context, cfg Config, cols func([]Column) error, emit func(map[string]any) error) error {
	query, err := ReadQuery(cfg.QueryFile)
	if err != nil {
		return err
	}
	ts, project, err := credentials(ctx, cfg)
	if err != nil {
		return err
	}
	base := cfg.Endpoint
	if base == "" {
		base = DefaultEndpoint
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	c := &client{base: base, project: project, http: &http.Client{Transport: &oauth2.Transport{Source: ts, Base: transport(cfg.HTTPClient)}}, keyFile: cfg.KeyFile}
	loc, err := c.insert(ctx, cfg.JobID, query, cfg.Start, cfg.End)
	if err != nil {
		return err
	}
	token, first, idle := "", true, pollFirst
	for {
		q := url.Values{"formatOptions.useInt64Timestamp": {"true"}, "timeoutMs": {strconv.Itoa(int(pollTimeout.Milliseconds()))}}
		if loc != "" {
			q.Set("location", loc)
		}
		if token != "" {
			q.Set("pageToken", token)
		}
		if cfg.PageSize > 0 {
			q.Set("maxResults", strconv.Itoa(cfg.PageSize))
		}
		var page struct {
			JobComplete bool `json:"jobComplete"`
			Schema      struct {
				Fields []field `json:"fields"`
			} `json:"schema"`
			Rows      []struct{ F []cell } `json:"rows"`
			PageToken string               `json:"pageToken"`
			Errors    []apiReason          `json:"errors"`
		}
		asked := time.Now()
		if err := c.do(ctx, http.MethodGet, "projects/"+url.PathEscape(project)+"/queries/"+url.PathEscape(cfg.JobID)+"?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		if !page.JobComplete {
			// getQueryResults holds the request until the job completes or timeoutMs passes;
			// a server that answers "not yet" sooner (an emulator, a proxy) is asked again
			// after a doubling pause, not in a tight loop.
			if time.Since(asked) < pollTimeout/2 {
				if err := pause(ctx, idle); err != nil {
					return fmt.Errorf("BigQuery job %s still running: %w", cfg.JobID, err)
				}
				idle = min(2*idle, pollMax)
			}
			continue
		}
		if first {
			first = false
			if len(page.Schema.Fields) == 0 {
				return &InputError{Msg: "the query returned no result set (a DDL or DML statement?): ldp loads a SELECT"}
			}
			out, err := columnsOf(page.Schema.Fields)
			if err != nil {
				return err
			}
			if err := cols(out); err != nil {
				return err
			}
		}
		for _, r := range page.Rows {
			row, err := record(page.Schema.Fields, r.F)
			if err != nil {
				return err
			}
			if err := emit(row); err != nil {
				return err
			}
		}
		if page.PageToken == "" {
			return nil
		}
		token = page.PageToken
	}
}

// tokenTimeout bounds one token request.
const tokenTimeout = 30 * time.Second

// ctxTransport sends each request under ctx, the run's context.
type ctxTransport struct {
	ctx  context.Context
	base http.RoundTripper
}

func (t ctxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.base.RoundTrip(req.WithContext(t.ctx))
}

func transport(c *http.Client) http.RoundTripper {
	if c != nil && c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

type client struct {
	base, project, keyFile string
	http                   *http.Client
}

type apiReason struct {
	Reason   string `json:"reason"`
	Message  string `json:"message"`
	Location string `json:"location"`
}

// insert sends the query job; a job of that id that exists already (409, a retry of the same
// attempt) is the one read. It returns the job's location.
func (c *client) insert(ctx context.Context, jobID, query string, start, end time.Time) (string, error) {
	qc := map[string]any{"query": query, "useLegacySql": false}
	if !start.IsZero() || !end.IsZero() {
		param := func(name string, t time.Time) map[string]any {
			return map[string]any{"name": name, "parameterType": map[string]string{"type": "TIMESTAMP"},
				"parameterValue": map[string]string{"value": t.UTC().Format("2006-01-02 15:04:05.999999-07:00")}}
		}
		qc["parameterMode"] = "NAMED"
		qc["queryParameters"] = []any{param("window_start", start), param("window_end", end)}
	}
	body := map[string]any{"jobReference": map[string]string{"projectId": c.project, "jobId": jobID},
		"configuration": map[string]any{"query": qc}}
	var job struct {
		JobReference struct {
			Location string `json:"location"`
		} `json:"jobReference"`
		Status struct {
			ErrorResult *apiReason `json:"errorResult"`
		} `json:"status"`
	}
	err := c.do(ctx, http.MethodPost, "projects/"+url.PathEscape(c.project)+"/jobs", body, &job)
	var be *Error
	if errors.As(err, &be) && be.Status == http.StatusConflict {
		return "", nil // the job of this attempt was sent before: read its results
	}
	if err != nil {
		return "", err
	}
	if e := job.Status.ErrorResult; e != nil {
		return "", &Error{Status: http.StatusBadRequest, Reason: e.Reason, Message: e.Message}
	}
	return job.JobReference.Location, nil
}

// maxTries bounds the sends of one request that BigQuery fails with a 5xx or a short 429;
// shortWait is the longest Retry-After waited out here (a longer one is the next attempt's).
const (
	maxTries  = 4
	shortWait = 5 * time.Second
)

// do sends a request, again after a 5xx or a short 429 with a doubling wait within ctx: the
// job id is the attempt's, so a second jobs.insert finds the first job (409) instead of a
// second query.
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	wait := 250 * time.Millisecond
	for try := 1; ; try++ {
		err := c.send(ctx, method, path, in, out)
		var be *Error
		if !errors.As(err, &be) || try == maxTries || !(be.Status >= 500 || be.Status == http.StatusTooManyRequests && be.RetryAfter <= shortWait) {
			if be != nil {
				be.Tries = try
			}
			return err
		}
		d := max(wait, be.RetryAfter)
		wait *= 2
		if err := pause(ctx, d); err != nil {
			return fmt.Errorf("BigQuery %s: %w", strings.SplitN(path, "?", 2)[0], err)
		}
	}
}

// pollTimeout is how long one getQueryResults may wait for the job; pollFirst and pollMax
// bound the pause before asking again when the server answered "not yet" well before that.
const (
	pollTimeout = 10 * time.Second
	pollFirst   = 100 * time.Millisecond
	pollMax     = 2 * time.Second
)

// pause waits d, or less if ctx ends first (its error); a variable so a test can record the
// waits instead of sleeping them.
var pause = ctxtime.Sleep

func (c *client) send(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// oauth2 flattens the token request's error with %v: say why it stopped.
			return fmt.Errorf("BigQuery %s: %w", strings.SplitN(path, "?", 2)[0], cerr)
		}
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The token endpoint's refusal; its body is the server's words, not the key's.
			return &Error{Status: re.Response.StatusCode, Reason: re.ErrorCode, Message: fmt.Sprintf("the token endpoint refused the key in %s: %s", c.keyFile, strings.TrimSpace(re.ErrorDescription+" "+re.ErrorCode))}
		}
		return fmt.Errorf("BigQuery %s: %w", strings.SplitN(path, "?", 2)[0], err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct {
				Message string      `json:"message"`
				Errors  []apiReason `json:"errors"`
			} `json:"error"`
		}
		json.Unmarshal(b, &e)
		be := &Error{Status: resp.StatusCode, Message: e.Error.Message}
		if be.Message == "" {
			be.Message = resp.Status
		}
		if len(e.Error.Errors) > 0 {
			be.Reason = e.Error.Errors[0].Reason
		}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			be.RetryAfter = time.Duration(s) * time.Second
		}
		return be
	}
	return json.Unmarshal(b, out)
}

// JobID is a query job's id for a run's attempt: BigQuery allows letters, digits, '_' and '-'.
func JobID(runID string, attempt int) string {
	return "ldp_" + jobIDChars.ReplaceAllString(runID, "_") + "_" + strconv.Itoa(max(attempt, 1))
}

var jobIDChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)
