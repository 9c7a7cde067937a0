package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The REST tier: `make test-rest` runs these against SeaweedFS's `weed mini`, an Iceberg REST
// catalog with its own S3 storage, on 127.0.0.1. Building weed takes about nine minutes, so it
// is not part of `make test`: hack/seaweedfs/build.sh builds it once into ~/.cache/ldp-tools
// (make test-rest runs it when the binary is missing), and .ci/run runs the tier every time.

// findWeed finds the weed binary: LDP_WEED, where hack/seaweedfs/build.sh puts it, or the PATH.
func findWeed() string {
	if p := os.Getenv("LDP_WEED"); p != "" {
		return p
	}
	tools := os.Getenv("LDP_TOOLS")
	if tools == "" {
		tools = filepath.Join(os.Getenv("HOME"), ".cache", "ldp-tools")
	}
	if p := filepath.Join(tools, "weed"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("weed"); err == nil {
		return p
	}
	return ""
}

// startREST starts weed mini for the test and returns the REST catalog's URL and the S3
// endpoint. Outside the REST tier (LDP_TEST_REST unset) the test is skipped; in it, a missing
// binary fails it.
func startREST(t *testing.T) (catalogURL, s3URL string) {
	t.Helper()
	if os.Getenv("LDP_TEST_REST") == "" {
		t.Skip("the REST tier runs with make test-rest (it needs SeaweedFS: hack/seaweedfs/build.sh)")
	}
	bin := findWeed()
	if bin == "" {
		t.Fatal("weed is not built: run hack/seaweedfs/build.sh (about nine minutes), or set LDP_WEED")
	}
	ports := map[string]int{}
	for _, name := range []string{"master.port", "volume.port", "filer.port", "s3.port", "s3.port.iceberg"} {
		// weed puts each service's gRPC port at its HTTP port + 10000: pick ports whose
		// partners are free too.
		for {
			p := portOf(freePort(t))
			if p+10000 < 65536 && portFree(p+10000) {
				ports[name] = p
				break
			}
		}
	}
	dir := t.TempDir()
	args := []string{"mini", "-dir", dir, "-ip", "127.0.0.1", "-ip.bind", "127.0.0.1",
		"-webdav=false", "-admin.ui=false", "-master.telemetry=false", "-s3.port.lance", "0",
		"-tableBucket", "warehouse"}
	for name, p := range ports {
		args = append(args, "-"+name, strconv.Itoa(p))
	}
	weed := exec.Command(bin, args...)
	weed.Dir = dir
	weed.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s3Key, "AWS_SECRET_ACCESS_KEY="+s3Secret)
	log := startServer(t, weed)
	catalogURL = fmt.Sprintf("http://127.0.0.1:%d", ports["s3.port.iceberg"])
	// Ready when its table bucket is there: mini creates it after its services answer.
	waitFor(t, "weed mini's Iceberg catalog listing namespaces on "+catalogURL, 90*time.Second, func() bool { return restReady(catalogURL) }, log)
	useS3Keys(t)
	t.Setenv("SHOP_CATALOG_CREDENTIAL", s3Key+":"+s3Secret)
	return catalogURL, fmt.Sprintf("http://127.0.0.1:%d", ports["s3.port"])
}

// restReady reports whether the catalog at url grants the test's credential a token and lists
// its namespaces with it.
func restReady(url string) bool {
	resp, err := http.PostForm(url+"/v1/oauth/tokens", neturl.Values{
		"grant_type": {"client_credentials"}, "client_id": {s3Key}, "client_secret": {s3Secret}})
	if err != nil {
		return false
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		return false
	}
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/namespaces", nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// restCatalog is the catalog block of the REST catalog at catalogURL, its credential in
// SHOP_CATALOG_CREDENTIAL.
func restCatalog(catalogURL, s3URL, identifier string) map[string]any {
	return map[string]any{"type": "rest", "uri": catalogURL, "identifier": identifier,
		"credential_env": "SHOP_CATALOG_CREDENTIAL", "properties": map[string]any{"s3.endpoint": s3URL}}
}

// TestRaceOfProcessesOnREST: the exactly-once race against an Iceberg REST catalog, whose
// losers get a CommitFailedException (HTTP 409) rather than the SQL catalog's failed
// requirement: each key on main once, no row lost or repeated.
func TestRaceOfProcessesOnREST(t *testing.T) {
	catalogURL, s3URL := startREST(t)
	block, _ := json.Marshal(restCatalog(catalogURL, s3URL, "shop"))
	l := newLakeOn(t, 4, string(block))
	if code, out, errs := l.run(t, nil, "catalog", "test", "append.json"); code != 0 {
		t.Fatalf("catalog test: %d %s %s", code, out, errs)
	}
	race(t, l, 4)
}

// TestSamplesOnREST: the nyc_taxi example and the daily_orders workflow, only their catalog
// blocks changed, on the REST catalog, by two workers at once (the folder lock divides the
// ticks: leases need a PostgreSQL catalog).
func TestSamplesOnREST(t *testing.T) {
	catalogURL, s3URL := startREST(t)
	samplesByTwoWorkers(t, func(id string) map[string]any { return restCatalog(catalogURL, s3URL, id) })
}
