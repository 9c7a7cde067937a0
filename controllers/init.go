package controllers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ldp-dev/ldp/internal/synth"
)

// InitSpec is the Pipeline ldp init writes: the quickstart's spec (docs/quickstart.md shows
// it, and a test holds the two equal).
const InitSpec = `{
  "apiVersion": "ldp/v1",
  "kind": "Pipeline",
  "identifier": "orders",
  "metadata": {
    "schedule": "5 2 * * *",
    "window": {"size": "day", "column": "ordered_at", "timezone": "Europe/Paris"},
    "source": {"format": "CSV", "path": "data/orders.csv"},
    "target": {"name": "orders", "format": "ICEBERG", "write_mode": "overwrite",
               "catalog": {"identifier": "shop", "warehouse_path": "warehouse"}},
    "quality": [
      {"check": "row_count", "min": 1},
      {"check": "unique", "columns": ["order_id"]},
      {"check": "range", "column": "amount", "min": 0}
    ]
  }
}
`

// initDays and initPerDay size the sample: two weeks ending yesterday, so the day a schedule
// wants now and a backfill of the days before it both find orders.
const (
	initDays   = 14
	initPerDay = 5
	initZone   = "Europe/Paris"
)

// InitResult is what Init wrote: the spec, and the orders of the days First to Last (local
// midnights of InitZone).
type InitResult struct {
	Spec, Data  string
	Orders      int
	PerDay      int
	First, Last time.Time
}

// Init starts a project in dir: InitSpec as orders.json and the orders of the initDays days
// before now's day as data/orders.csv. A file that is there already is never overwritten.
func Init(dir string, now time.Time) (*InitResult, error) {
	loc, err := time.LoadLocation(initZone)
	if err != nil {
		return nil, err
	}
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	first := today.AddDate(0, 0, -initDays)
	var data bytes.Buffer
	if err := synth.WriteOrders(&data, 7, first, initDays, initPerDay); err != nil {
		return nil, err
	}
	res := &InitResult{Spec: filepath.Join(dir, "orders.json"), Data: filepath.Join(dir, "data", "orders.csv"),
		Orders: initDays * initPerDay, PerDay: initPerDay, First: first, Last: today.AddDate(0, 0, -1)}
	files := []struct {
		path string
		body []byte
	}{{res.Spec, []byte(InitSpec)}, {res.Data, data.Bytes()}}
	// Check both before writing either, so a refusal leaves nothing half made.
	for _, f := range files {
		if _, err := os.Stat(f.path); err == nil {
			return nil, fmt.Errorf("%s exists: ldp init writes only into files that are not there; choose another folder (ldp init DIR)", f.path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f.path, f.body, 0o644); err != nil {
			return nil, err
		}
	}
	return res, nil
}
