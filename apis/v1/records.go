package v1

import (
	"bytes"
	"encoding/json"
	"time"
)

// The records ldp writes and prints: pure data, defined here, below every package that fills
// them, so that the command line prints them without reaching the data plane (issue 30: no
// alias of an internal type in controllers). The ledger's payloads stay with the ledger.

// LedgerEvent is one line of the run ledger (.ldp/events.jsonl); internal/ledger writes and
// reads them.
type LedgerEvent struct {
	EventID       string         `json:"event_id"`
	Type          string         `json:"type"`
	SchemaVersion int            `json:"schema_version"`
	TS            time.Time      `json:"ts"`
	RunID         string         `json:"run_id"`
	Attempt       int            `json:"attempt"`
	Seq           int            `json:"seq"`
	TableUUID     string         `json:"table_uuid,omitempty"`
	Payload       map[string]any `json:"payload"`
}

// Decode reads e's payload into v, a payload struct; numbers stay exact (json.Number).
func (e LedgerEvent) Decode(v any) error {
	b, err := json.Marshal(e.Payload)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// RunSummary is one attempt of one run, as ldp runs shows it, folded from its ledger events.
type RunSummary struct {
	RunID        string    `json:"run_id"`
	Attempt      int       `json:"attempt"`
	Pipeline     string    `json:"pipeline"`
	Window       string    `json:"logical_window,omitempty"`
	Status       string    `json:"status"`
	Started      time.Time `json:"started"`
	DurationS    float64   `json:"duration_s"`
	RowsRead     int64     `json:"rows_read"`
	RowsWritten  int64     `json:"rows_written"`
	ChecksPassed int       `json:"checks_passed"`
	ChecksFailed int       `json:"checks_failed"`
	SnapshotID   int64     `json:"snapshot_id,string,omitempty"`
	Key          string    `json:"idempotency_key,omitempty"`
	Error        string    `json:"error,omitempty"`
}
