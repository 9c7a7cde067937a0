package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/flock"
)

// OpenLineage spec and facet schemas this sink writes (spec 2-0-2).
const (
	olSchemaURL    = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
	olFacets       = "https://openlineage.io/spec/facets/"
	olDefaultPath  = "/api/v1/lineage"
	olDefaultNS    = "ldp"
	olDefaultWaitS = 2.0
	// olQueue bounds the events held for one endpoint: past it they are dropped and counted.
	olQueue         = 256
	olLanguage      = "go"
	olProducerStem  = "https://github.com/ldp-dev/ldp/tree/"
	olEventStart    = "START"
	olEventComplete = "COMPLETE"
	olEventFail     = "FAIL"
)

// OpenLineageSink turns a run's events into OpenLineage run events: START when the run starts,
// COMPLETE (published or skipped) or FAIL (blocked or failed) when it finishes. It writes them
// to a JSONL file, or POSTs them to an HTTP endpoint. A sink that is down, slow or full warns
// and never fails the load, nor slows it: events to an endpoint are queued (boundedly) and
// POSTed in the background, and Flush waits for them, at most the sink's timeout, when the
// command ends (issue 33, point 9: a sink that never answered made a 12-window backfill 60
// times slower).
type OpenLineageSink struct {
	// Path is a file to append events to; URL an endpoint to POST them to (one of the two).
	Path string
	URL  string
	// APIKey is sent as a bearer token.
	APIKey    string
	Namespace string
	Timeout   time.Duration
	Version   string
	Client    *http.Client

	run olRun
}

// olRun is what the sink has learnt about the run so far.
type olRun struct {
	job         string
	input       map[string]any
	output      map[string]any
	nominal     map[string]any
	fields      []map[string]any
	assertions  []map[string]any
	rowsWritten int64
}

func (s *OpenLineageSink) Emit(ctx context.Context, e v1.LedgerEvent) error {
	switch e.Type {
	case RunStarted:
		p, _ := As[RunStartedPayload](e)
		s.run = olRun{job: p.Pipeline, input: dataset(p.Source), output: dataset(p.Target)}
		if w := p.Window; w != nil && w.Start != "" {
			s.run.nominal = s.facet("1-0-1", "NominalTimeRunFacet", map[string]any{"nominalStartTime": w.Start, "nominalEndTime": w.End})
		}
		return s.send(ctx, e, olEventStart, "")
	case RunExtracted:
		p, _ := As[RunExtractedPayload](e)
		for _, c := range p.Schema {
			s.run.fields = append(s.run.fields, map[string]any{"name": c.Name, "type": c.Type})
		}
	case QualityEvaluated:
		p, _ := As[QualityEvaluatedPayload](e)
		for _, c := range p.Checks {
			a := map[string]any{"assertion": c.Name, "success": c.Passed}
			if c.Column != "" {
				a["column"] = c.Column
			}
			s.run.assertions = append(s.run.assertions, a)
		}
	case RunPublished:
		p, _ := As[RunPublishedPayload](e)
		s.run.rowsWritten = p.RowsWritten
	case RunFinished:
		p, _ := As[RunFinishedPayload](e)
		switch p.Status {
		case "published", "skipped_duplicate":
			return s.send(ctx, e, olEventComplete, "")
		default:
			msg := p.Error
			if msg == "" {
				msg = "run ended " + p.Status
			}
			return s.send(ctx, e, olEventFail, msg)
		}
	}
	return nil
}

func (s *OpenLineageSink) Close() error { return nil }

func (s *OpenLineageSink) producer() string {
	v := s.Version
	if v == "" {
		v = "dev"
	}
	return olProducerStem + v
}

func (s *OpenLineageSink) facet(version, name string, fields map[string]any) map[string]any {
	f := map[string]any{"_producer": s.producer(), "_schemaURL": olFacets + version + "/" + name + ".json#/$defs/" + name}
	for k, v := range fields {
		f[k] = v
	}
	return f
}

// runUUID is the OpenLineage runId: the run id itself when it is a UUID, else a UUID hashed
// from it, so every try of a run reports under one id.
func runUUID(runID string) string {
	if u, err := uuid.Parse(runID); err == nil {
		return u.String()
	}
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("ldp:run:"+runID)).String()
}

// event builds the OpenLineage run event of type typ.
func (s *OpenLineageSink) event(e v1.LedgerEvent, typ, errMsg string) map[string]any {
	ns := s.Namespace
	if ns == "" {
		ns = olDefaultNS
	}
	runFacets := map[string]any{}
	if s.run.nominal != nil {
		runFacets["nominalTime"] = s.run.nominal
	}
	if errMsg != "" {
		runFacets["errorMessage"] = s.facet("1-0-1", "ErrorMessageRunFacet", map[string]any{"message": errMsg, "programmingLanguage": olLanguage})
	}
	var inputs, outputs []any
	if s.run.input != nil {
		in := copyMap(s.run.input)
		facets := map[string]any{}
		if len(s.run.fields) > 0 {
			facets["schema"] = s.facet("1-1-1", "SchemaDatasetFacet", map[string]any{"fields": s.run.fields})
		}
		in["facets"] = facets
		if len(s.run.assertions) > 0 {
			in["inputFacets"] = map[string]any{"dataQualityAssertions": s.facet("1-0-1", "DataQualityAssertionsDatasetFacet", map[string]any{"assertions": s.run.assertions})}
		}
		inputs = append(inputs, in)
	}
	if s.run.output != nil {
		out := copyMap(s.run.output)
		out["facets"] = map[string]any{}
		if typ == olEventComplete && s.run.rowsWritten > 0 {
			out["outputFacets"] = map[string]any{"outputStatistics": s.facet("1-0-2", "OutputStatisticsOutputDatasetFacet", map[string]any{"rowCount": s.run.rowsWritten})}
		}
		outputs = append(outputs, out)
	}
	return map[string]any{
		"eventType": typ,
		"eventTime": e.TS.UTC().Format(time.RFC3339Nano),
		"producer":  s.producer(),
		"schemaURL": olSchemaURL,
		"run":       map[string]any{"runId": runUUID(e.RunID), "facets": runFacets},
		"job":       map[string]any{"namespace": ns, "name": s.run.job, "facets": map[string]any{}},
		"inputs":    nonNil(inputs),
		"outputs":   nonNil(outputs),
	}
}

func (s *OpenLineageSink) send(ctx context.Context, e v1.LedgerEvent, typ, errMsg string) error {
	body, err := json.Marshal(s.event(e, typ, errMsg))
	if err != nil {
		return err
	}
	if s.Path != "" {
		return appendLine(s.Path, body)
	}
	return s.post(ctx, body)
}

func (s *OpenLineageSink) post(_ context.Context, body []byte) error {
	endpoint, err := EndpointURL(s.URL)
	if err != nil {
		return err
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = time.Duration(olDefaultWaitS * float64(time.Second))
	}
	return senderFor(endpoint, s.APIKey, timeout, s.Client).enqueue(body)
}

// sender POSTs the events of one endpoint in the background, one at a time and in order, for
// every sink and run of the process that names the endpoint. It warns once per outage: the
// first failure after a success (or after the last Flush) is handed to the next Emit or to
// Flush, the later ones are counted.
type sender struct {
	endpoint, apiKey string
	timeout          time.Duration
	client           *http.Client
	queue            chan []byte

	mu       sync.Mutex
	pending  int   // queued or being POSTed
	failing  bool  // the last POST failed
	reported bool  // the failure was warned about
	lastErr  error // the last POST's failure
	unsent   int   // events dropped since the last Flush: queue full, or POST failed
	used     bool  // an event was queued since the last Flush
}

var senders = struct {
	sync.Mutex
	m map[string]*sender
}{m: map[string]*sender{}}

func senderFor(endpoint, apiKey string, timeout time.Duration, client *http.Client) *sender {
	key := fmt.Sprintf("%s\x00%s\x00%s", endpoint, apiKey, timeout)
	senders.Lock()
	defer senders.Unlock()
	if s := senders.m[key]; s != nil {
		return s
	}
	if client == nil {
		client = http.DefaultClient
	}
	s := &sender{endpoint: endpoint, apiKey: apiKey, timeout: timeout, client: client, queue: make(chan []byte, olQueue)}
	senders.m[key] = s
	go s.loop()
	return s
}

// enqueue queues body and returns the failure not yet warned about, if there is one.
func (s *sender) enqueue(body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = true
	select {
	case s.queue <- body:
		s.pending++
	default:
		s.unsent++
	}
	return s.takeWarning()
}

func (s *sender) takeWarning() error {
	if !s.failing || s.reported {
		return nil
	}
	s.reported = true
	return fmt.Errorf("%w (events are sent in the background; they are dropped while it fails)", s.lastErr)
}

func (s *sender) loop() {
	for body := range s.queue {
		err := s.send(body)
		s.mu.Lock()
		s.pending--
		if err != nil {
			s.unsent++
			if !s.failing {
				s.failing, s.reported = true, false
			}
			s.lastErr = err
		} else {
			s.failing = false
		}
		s.mu.Unlock()
	}
}

func (s *sender) send(body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.apiKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("OpenLineage endpoint %s: %w", s.endpoint, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
	if resp.StatusCode >= 300 {
		return fmt.Errorf("OpenLineage endpoint %s answered %s", s.endpoint, resp.Status)
	}
	return nil
}

// Flush waits until every endpoint has taken the events queued for it, each at most its
// sink's timeout from now, and returns a warning for each endpoint that failed and was not
// warned about, or that still held events. What was not sent by then is dropped: a sink never
// holds a command past one timeout. Flush is called when a command ends.
func Flush() []string {
	senders.Lock()
	all := make([]*sender, 0, len(senders.m))
	for _, s := range senders.m {
		if s.wasUsed() {
			all = append(all, s)
		}
	}
	senders.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].endpoint < all[j].endpoint })
	start := time.Now()
	var warns []string
	for _, s := range all {
		for s.busy() && time.Since(start) < s.timeout {
			time.Sleep(5 * time.Millisecond)
		}
		if w := s.settle(); w != "" {
			warns = append(warns, w)
		}
	}
	return warns
}

// wasUsed reports whether the command queued an event for the endpoint: Flush leaves the
// others alone (another command of a test process, or a watch, used them).
func (s *sender) wasUsed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *sender) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending > 0
}

// settle drops what is still queued and ends the command's count: the next command warns
// afresh.
func (s *sender) settle() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for drained := false; !drained; {
		select {
		case <-s.queue:
			s.pending--
			s.unsent++
		default:
			drained = true
		}
	}
	var w string
	switch err := s.takeWarning(); {
	case err != nil:
		w = fmt.Sprintf("event sink: %v; %d events not sent", s.lastErr, s.unsent)
	case s.unsent > 0 && !s.reported:
		w = fmt.Sprintf("event sink: OpenLineage endpoint %s took longer than %s; %d events not sent", s.endpoint, s.timeout, s.unsent)
	}
	s.unsent, s.reported, s.used = 0, false, false
	return w
}

// EndpointURL is where events are POSTed: the URL as given, or /api/v1/lineage on it when it
// has no path.
func EndpointURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("OpenLineage url: %w", err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = olDefaultPath
	}
	return u.String(), nil
}

func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	l, err := flock.Wait(context.Background(), path+".lock", flock.WaitOptions{Timeout: 2 * time.Minute})
	if err != nil {
		return err
	}
	defer l.Release()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dataset reads the {namespace, name} of a source or target from a run.started payload.
func dataset(d Dataset) map[string]any {
	if d.Name == "" {
		return nil
	}
	return map[string]any{"namespace": d.Namespace, "name": d.Name}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func nonNil(xs []any) []any {
	if xs == nil {
		return []any{}
	}
	return xs
}

// SinksFor returns the sinks of a spec: its ledger (.ldp/events.jsonl next to it, always) and
// the sinks of metadata.observability. getenv reads the variable an api_key_env names.
func SinksFor(specPath string, sinks []SinkSpec, version string, getenv func(string) string) []Sink {
	out := []Sink{&FileSink{File: File{Path: PathFor(specPath)}}}
	base := filepath.Dir(specPath)
	resolve := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	for _, sk := range sinks {
		switch sk.Type {
		case "jsonl":
			if sk.Path != "" && resolve(sk.Path) != PathFor(specPath) {
				out = append(out, &FileSink{File: File{Path: resolve(sk.Path)}})
			}
		case "openlineage":
			ol := &OpenLineageSink{URL: sk.URL, Namespace: sk.Namespace, Version: version}
			if sk.Path != "" {
				ol.Path = resolve(sk.Path)
			}
			if sk.APIKeyEnv != "" && getenv != nil {
				ol.APIKey = getenv(sk.APIKeyEnv)
			}
			if sk.TimeoutS > 0 {
				ol.Timeout = time.Duration(sk.TimeoutS * float64(time.Second))
			}
			out = append(out, ol)
		}
	}
	return out
}

// SinkSpec is a sink as a spec declares it (metadata.observability.sinks).
type SinkSpec struct {
	Type, Path, URL, APIKeyEnv, Namespace string
	TimeoutS                              float64
}
