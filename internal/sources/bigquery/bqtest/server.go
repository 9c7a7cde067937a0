// Package bqtest is a small BigQuery server for tests: jobs.insert (409 for a job id it has),
// jobs.getQueryResults paged with pageToken, BigQuery's error JSON, and an OAuth token endpoint
// that checks the service account's signed JWT (RS256 with the key it made), so the JWT flow
// really runs. A query's answer is looked up by its text in Results.
package bqtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Result is what a query returns: the schema's fields and rows in the API's f/v shape, or an
// error (status, reason, message) at insert, or one the job fails with after it started.
type Result struct {
	Fields     []map[string]any
	Rows       [][]any // each value a string, nil, []any (REPEATED) or [][]any... as f/v below
	Status     int
	Reason     string
	Message    string
	FailLater  bool
	RetryAfter int
	// Pending is how many getQueryResults calls are answered at once with jobComplete false
	// before the job completes, as an emulator or a proxy that does not hold the request does.
	Pending int
}

// Server is a running fake; change its fields under Lock.
type Server struct {
	*httptest.Server
	sync.Mutex
	Key      *rsa.PrivateKey
	Project  string
	Results  map[string]Result
	PageSize int
	// Inserts counts the jobs.insert calls per job id; Params are each job's query parameters.
	Inserts map[string]int
	Params  map[string][]any
	Tokens  int
	// Transient are the statuses the next API requests are answered with, one each, before
	// they are served (a 429 says Retry-After: 1).
	Transient []int
	jobs      map[string]string
}

const accessToken = "ya29.bqtest-access"

// New starts a server for project ldp-test.
func New() *Server {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	s := &Server{Key: k, Project: "ldp-test", Results: map[string]Result{}, PageSize: 2,
		Inserts: map[string]int{}, Params: map[string][]any{}, jobs: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// KeyJSON is a service-account key file whose token_uri is this server.
func (s *Server) KeyJSON() []byte {
	der := x509.MarshalPKCS1PrivateKey(s.Key)
	b, _ := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": s.Project, "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})),
		"client_email": "loader@" + s.Project + ".iam.gserviceaccount.com", "client_id": "1",
		"token_uri": s.URL + "/token"}, "", "  ")
	return b
}

// Endpoint is the API base URL to give the client.
func (s *Server) Endpoint() string { return s.URL + "/bigquery/v2/" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Lock()
	defer s.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if r.URL.Path == "/token" {
		s.token(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+accessToken {
		fail(w, 401, "authError", "Request is missing required authentication credential.", 0)
		return
	}
	if len(s.Transient) > 0 {
		status := s.Transient[0]
		s.Transient = s.Transient[1:]
		retry := 0
		if status == http.StatusTooManyRequests {
			retry = 1
		}
		fail(w, status, "backendError", http.StatusText(status), retry)
		return
	}
	prefix := "/bigquery/v2/projects/" + s.Project + "/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		fail(w, 404, "notFound", "Not found: Project "+strings.Split(strings.TrimPrefix(r.URL.Path, "/bigquery/v2/projects/"), "/")[0], 0)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, prefix)
	switch {
	case rest == "jobs" && r.Method == http.MethodPost:
		var job struct {
			JobReference  struct{ JobID string } `json:"jobReference"`
			Configuration struct {
				Query struct {
					Query           string `json:"query"`
					QueryParameters []any  `json:"queryParameters"`
				} `json:"query"`
			} `json:"configuration"`
		}
		json.NewDecoder(r.Body).Decode(&job)
		id := job.JobReference.JobID
		s.Inserts[id]++
		if _, ok := s.jobs[id]; ok {
			fail(w, 409, "duplicate", "Already Exists: Job "+s.Project+":US."+id, 0)
			return
		}
		q := job.Configuration.Query.Query
		res, ok := s.Results[q]
		if !ok {
			fail(w, 400, "invalidQuery", "Syntax error: Unexpected identifier at [1:1]", 0)
			return
		}
		if res.Status != 0 && !res.FailLater {
			fail(w, res.Status, res.Reason, res.Message, res.RetryAfter)
			return
		}
		s.jobs[id], s.Params[id] = q, job.Configuration.Query.QueryParameters
		json.NewEncoder(w).Encode(map[string]any{"kind": "bigquery#job",
			"jobReference": map[string]string{"projectId": s.Project, "jobId": id, "location": "US"},
			"status":       map[string]string{"state": "RUNNING"}})
	case strings.HasPrefix(rest, "queries/") && r.Method == http.MethodGet:
		id := strings.TrimPrefix(rest, "queries/")
		q, ok := s.jobs[id]
		if !ok {
			fail(w, 404, "notFound", "Not found: Job "+s.Project+":US."+id, 0)
			return
		}
		res := s.Results[q]
		if res.Pending > 0 {
			res.Pending--
			s.Results[q] = res
			json.NewEncoder(w).Encode(map[string]any{"kind": "bigquery#getQueryResultsResponse", "jobComplete": false,
				"jobReference": map[string]string{"projectId": s.Project, "jobId": id, "location": "US"}})
			return
		}
		if res.FailLater {
			fail(w, res.Status, res.Reason, res.Message, 0)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
		end := min(off+s.PageSize, len(res.Rows))
		rows := []any{}
		for _, row := range res.Rows[off:end] {
			rows = append(rows, map[string]any{"f": cells(row)})
		}
		out := map[string]any{"kind": "bigquery#getQueryResultsResponse", "jobComplete": true,
			"jobReference": map[string]string{"projectId": s.Project, "jobId": id, "location": "US"},
			"schema":       map[string]any{"fields": res.Fields}, "totalRows": strconv.Itoa(len(res.Rows)), "rows": rows}
		if end < len(res.Rows) {
			out["pageToken"] = strconv.Itoa(end)
		}
		json.NewEncoder(w).Encode(out)
	default:
		fail(w, 404, "notFound", "Not found: "+r.URL.Path, 0)
	}
}

// cells writes values in the f/v shape: a []any is a REPEATED value, a map a RECORD's row.
func cells(row []any) []any {
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = map[string]any{"v": cellValue(v)}
	}
	return out
}

func cellValue(v any) any {
	switch x := v.(type) {
	case []any:
		items := make([]any, len(x))
		for i, it := range x {
			items[i] = map[string]any{"v": cellValue(it)}
		}
		return items
	case map[string][]any:
		return map[string]any{"f": cells(x["f"])}
	}
	return v
}

// token checks a JWT bearer grant: RS256 under the server's key, the right audience and scope.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || len(parts) != 3 {
		tokenFail(w, "unsupported_grant_type", "Invalid grant_type or assertion")
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&s.Key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		tokenFail(w, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Aud, Scope, Iss string
	}
	json.Unmarshal(body, &claims)
	if claims.Aud != s.URL+"/token" || !strings.Contains(claims.Scope, "bigquery") {
		tokenFail(w, "invalid_grant", "Invalid JWT: aud or scope")
		return
	}
	s.Tokens++
	json.NewEncoder(w).Encode(map[string]any{"access_token": accessToken, "token_type": "Bearer", "expires_in": 3599})
}

func tokenFail(w http.ResponseWriter, code, desc string) {
	w.WriteHeader(400)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

func fail(w http.ResponseWriter, status int, reason, msg string, retryAfter int) {
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg,
		"errors": []any{map[string]string{"message": msg, "domain": "global", "reason": reason}}}})
}
