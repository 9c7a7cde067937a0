package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ldp-dev/ldp/internal/sources/github/githubtest"
)

// TestGitHubIssuesIntoIceberg: a GITHUB source loads the issues updated in each window into an
// Iceberg table (the test's GitHub Enterprise server on 127.0.0.1), upserting by number: an
// issue updated again in a later window replaces its row. The token, from the variable the spec
// names, reaches the server and appears nowhere ldp writes.
func TestGitHubIssuesIntoIceberg(t *testing.T) {
	t.Parallel()
	const token = "ghp_7d1e0c2b9a8f4e6d"
	srv := githubtest.New()
	defer srv.Close()
	srv.Token = token

	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	l.write(t, "issues.json", `{"identifier": "issues", "metadata": {
		"window": {"size": "day"},
		"source": {"format": "GITHUB", "repository": "octo/lake", "base_url": "`+srv.URL+`", "token_env": "LAKE_GH_TOKEN"},
		"target": {"name": "issues", "format": "ICEBERG", "catalog": {"identifier": "gh"},
		           "write_mode": "upsert", "join_cols": ["number"]}}}`)
	env := []string{"LAKE_GH_TOKEN=" + token}
	var all strings.Builder
	ldp := func(args ...string) string {
		t.Helper()
		code, out, errs := l.run(t, env, args...)
		all.WriteString(out + errs)
		if code != 0 {
			t.Fatalf("ldp %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	ldp("validate", "issues.json")
	ldp("run", "issues.json", "--window", "2026-03-02/2026-03-03")
	ldp("run", "issues.json", "--window", "2026-03-03/2026-03-04")
	const q = "SELECT number, title, coalesce(body, 'NULL') AS body, state, array_to_string(labels, '|') AS labels, author, " +
		"strftime(created_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S') AS created, coalesce(strftime(closed_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S'), 'NULL') AS closed, " +
		"pull_request, typeof(updated_at) AS ut FROM issues ORDER BY number"
	got := ldp("query", "issues.json", q, "-o", "csv")
	want := `number,title,body,state,labels,author,created,closed,pull_request,ut
1,Loader drops the last row,The CSV's last line has no newline.,closed,bug|p1,ana,2026-03-01T08:00:00,2026-03-02T09:30:00,false,TIMESTAMP WITH TIME ZONE
2,Fix the last row,NULL,open,,ben,2026-03-02T10:00:00,NULL,true,TIMESTAMP WITH TIME ZONE
3,Docs: windows,"Say what a window is, with ""quotes"" and a
newline.",open,docs,ana,2026-03-03T00:00:00,NULL,false,TIMESTAMP WITH TIME ZONE
5,Loader drops the last row (reopened),Again.,open,bug,ana,2026-03-02T00:00:00,NULL,false,TIMESTAMP WITH TIME ZONE
`
	if got != want {
		t.Errorf("the table after two windows:\n%s\nwant:\n%s", got, want)
	}

	// Issue 1 is reopened and retitled on the 4th: that window's run replaces its row.
	srv.Lock()
	for _, is := range srv.Issues {
		if is["number"] == float64(1) {
			is["title"], is["state"], is["closed_at"], is["updated_at"] = "Loader drops the last row, again", "open", nil, "2026-03-04T06:00:00Z"
		}
	}
	srv.Unlock()
	ldp("run", "issues.json", "--window", "2026-03-04/2026-03-05")
	got = ldp("query", "issues.json", "SELECT count(*) AS n, max(title) FILTER (WHERE number = 1) AS t, max(state) FILTER (WHERE number = 1) AS s FROM issues", "-o", "csv")
	if want := "n,t,s\n4,\"Loader drops the last row, again\",open\n"; got != want {
		t.Errorf("after the upsert of issue 1:\n%s\nwant:\n%s", got, want)
	}

	ledger, _ := os.ReadFile(filepath.Join(l.dir, ".ldp", "events.jsonl"))
	for what, text := range map[string]string{"output and errors": all.String(), "the ledger": string(ledger)} {
		if strings.Contains(text, token) {
			t.Errorf("the token is in %s:\n%s", what, text)
		}
	}
	srv.Lock()
	defer srv.Unlock()
	for i, a := range srv.Auth {
		if a != "Bearer "+token {
			t.Errorf("request %d had Authorization %q", i, a)
		}
	}
}

// TestGitHubSourceErrors: a repository GitHub does not show, a token it refuses and a spec
// without a repository each fail with exit 1, say what to check, and write no table.
func TestGitHubSourceErrors(t *testing.T) {
	t.Parallel()
	srv := githubtest.New()
	defer srv.Close()
	srv.Token = "ghp_right"
	l := &lakeDir{dir: t.TempDir(), ldp: ldpCommand(t)}
	spec := func(name, source string) string {
		l.write(t, name+".json", `{"identifier": "`+name+`", "metadata": {
			"source": `+source+`,
			"target": {"name": "`+name+`", "format": "ICEBERG", "catalog": {"identifier": "gh"}}}}`)
		return name + ".json"
	}
	for _, c := range []struct {
		name, source string
		env          []string
		want         string
	}{
		{"missing", `{"format": "GITHUB", "repository": "octo/nope", "base_url": "` + srv.URL + `"}`, []string{"GITHUB_TOKEN=ghp_right"},
			"GitHub has no repository octo/nope, or the token cannot see it (404): check source.repository, and that GITHUB_TOKEN can read a private repository"},
		{"refused", `{"format": "GITHUB", "repository": "octo/lake", "base_url": "` + srv.URL + `", "token_env": "LAKE_TOKEN"}`, []string{"LAKE_TOKEN=ghp_wrong"},
			"GitHub refused the token in LAKE_TOKEN reading octo/lake (401 Bad credentials): check that it is valid and not expired"},
		{"norepo", `{"format": "GITHUB"}`, nil, `a GITHUB source needs repository: the issues of "owner/name"`},
		{"badrepo", `{"format": "GITHUB", "repository": "octo"}`, nil, `metadata.source.repository: must be a GitHub repository, "owner/name": the owner letters, digits and '-', the name letters, digits, '.', '_' and '-' (not . or ..), got "octo"`},
		{"pathgiven", `{"format": "GITHUB", "repository": "octo/lake", "path": "x.csv"}`, nil, "a GITHUB source is named by repository; remove path"},
		{"badstate", `{"format": "GITHUB", "repository": "octo/lake", "state": "merged"}`, nil, "state"},
	} {
		code, out, errs := l.run(t, c.env, "run", spec(c.name, c.source))
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, want 1 saying %q:\n%s%s", c.name, code, c.want, out, errs)
		}
		if strings.Contains(out+errs, "ghp_") {
			t.Errorf("%s: the token is in the output:\n%s%s", c.name, out, errs)
		}
		if code, out, _ := l.run(t, nil, "query", c.name+".json", "SELECT count(*) FROM "+c.name, "-o", "csv"); code == 0 {
			t.Errorf("%s: a failed run left a table:\n%s", c.name, out)
		}
	}

	// A rate limit that resets in an hour is not waited out: the run fails at once, saying
	// when to retry.
	srv.Lock()
	srv.RateLimited, srv.Reset = 5, time.Now().Add(time.Hour)
	srv.Unlock()
	code, out, errs := l.run(t, nil, "run", spec("limited", `{"format": "GITHUB", "repository": "octo/lake", "base_url": "`+srv.URL+`"}`))
	if want := "GitHub rate limit reached reading the issues of octo/lake; retry after "; code != 1 || !strings.Contains(errs, want) {
		t.Errorf("rate limited: exit %d, want 1 saying %q:\n%s%s", code, want, out, errs)
	}
}
