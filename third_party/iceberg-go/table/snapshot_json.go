// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

package table

import (
	"encoding/json"
	"fmt"
	"sync"
)

// snapshotJSONCache keeps the encoded JSON of each snapshot a table's
// metadata has written, by snapshot id. A snapshot is immutable once it is
// in table metadata, and every commit rewrites the whole snapshot list, so
// without it each commit re-encodes (and re-compacts, once per nesting
// level) every retained snapshot and its summary. The cache is shared by a
// metadata, the builders made from it and the metadata they build, so one
// lineage of commits encodes each snapshot once.
type snapshotJSONCache struct {
	mu sync.Mutex
	m  map[int64]snapshotJSONEntry
}

// snapshotJSONEntry is one snapshot's encoding with the fields that
// identify the snapshot it was made from: an entry is used only for a
// snapshot that still matches them.
type snapshotJSONEntry struct {
	parent       int64
	hasParent    bool
	seq, ts      int64
	manifestList string
	operation    Operation
	props        int
	data         []byte
}

func newSnapshotJSONCache() *snapshotJSONCache {
	return &snapshotJSONCache{m: make(map[int64]snapshotJSONEntry)}
}

func (e *snapshotJSONEntry) matches(s *Snapshot) bool {
	if e.hasParent != (s.ParentSnapshotID != nil) || (e.hasParent && e.parent != *s.ParentSnapshotID) {
		return false
	}
	op, props := Operation(""), 0
	if s.Summary != nil {
		op, props = s.Summary.Operation, len(s.Summary.Properties)
	}

	return e.seq == s.SequenceNumber && e.ts == s.TimestampMs &&
		e.manifestList == s.ManifestList && e.operation == op && e.props == props &&
		s.ManifestLocations == nil
}

// encode is the JSON of each snapshot, as json.Marshal writes it, taken
// from the cache where it holds them. Entries of snapshots no longer listed
// are dropped once they outnumber the listed ones.
func (c *snapshotJSONCache) encode(snapshots []Snapshot) ([][]byte, int, error) {
	out := make([][]byte, len(snapshots))
	size := 0
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range snapshots {
		s := &snapshots[i]
		if e, ok := c.m[s.SnapshotID]; ok && e.matches(s) {
			out[i] = e.data
			size += len(e.data)

			continue
		}
		data, err := json.Marshal(s)
		if err != nil {
			return nil, 0, err
		}
		out[i] = data
		size += len(data)
		if s.ManifestLocations != nil {
			continue // V1 embedded manifests: not worth keeping
		}
		e := snapshotJSONEntry{seq: s.SequenceNumber, ts: s.TimestampMs, manifestList: s.ManifestList, data: data}
		if s.ParentSnapshotID != nil {
			e.hasParent, e.parent = true, *s.ParentSnapshotID
		}
		if s.Summary != nil {
			e.operation, e.props = s.Summary.Operation, len(s.Summary.Properties)
		}
		c.m[s.SnapshotID] = e
	}
	if len(c.m) > 2*len(snapshots)+16 {
		keep := make(map[int64]snapshotJSONEntry, len(snapshots))
		for i := range snapshots {
			if e, ok := c.m[snapshots[i].SnapshotID]; ok {
				keep[snapshots[i].SnapshotID] = e
			}
		}
		c.m = keep
	}

	return out, size, nil
}

// marshalWithSnapshots is json.Marshal(v) with `"snapshots":[...]` as its
// last member, v being the metadata without its snapshots. The snapshot
// list is the last field of every metadata version's encoding, so this
// writes the same bytes as marshalling the list with v, but appends each
// snapshot's JSON once instead of having encoding/json compact it again.
func marshalWithSnapshots(v any, cache *snapshotJSONCache, snapshots []Snapshot) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil || len(snapshots) == 0 {
		return data, err
	}
	if cache == nil {
		cache = newSnapshotJSONCache()
	}
	encoded, size, err := cache.encode(snapshots)
	if err != nil {
		return nil, err
	}
	if len(data) < 2 || data[len(data)-1] != '}' {
		return nil, fmt.Errorf("%w: metadata did not encode as a JSON object", ErrInvalidMetadata)
	}
	out := make([]byte, 0, len(data)+size+len(snapshots)+16)
	out = append(out, data[:len(data)-1]...)
	if len(data) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"snapshots":[`...)
	for i, b := range encoded {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}

	return append(out, ']', '}'), nil
}
