package v1

import (
	"iter"
	"time"
)

// LogicalWindow is the half-open interval [Start, End) that one run is responsible for. The zero
// value is "no window": the run owns the whole table.
type LogicalWindow struct {
	Start, End time.Time
}

// IsZero reports whether this is "no window".
func (w LogicalWindow) IsZero() bool { return w.Start.IsZero() && w.End.IsZero() }

// String is START/END in UTC (its Key), or "" for no window.
func (w LogicalWindow) String() string { return string(w.Key()) }

// FormatInstant writes an instant as the keys do: UTC, whole seconds unless there is a fraction
// (then microseconds, as Python's isoformat), and "Z"; the zero time is "".
func FormatInstant(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	if t.Nanosecond() != 0 {
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05Z")
}

// TargetIdentity names the table a pipeline publishes to, as the keys spell it:
// "iceberg:<namespace>.<table>". A file target is "<format>:<path>" (files take no key, but the
// identity still names them in plans).
func (p *Pipeline) TargetIdentity() string {
	t := p.Metadata.Target
	if ParseFormat(string(t.Format)) == FormatIceberg {
		return "iceberg:" + t.Catalog.NamespaceName() + "." + t.Name
	}
	return t.Format.Lower() + ":" + specRelPath(p.BaseDir, t.Path)
}

// IdempotencyKey is the key of the run of pipeline identifier on target for window:
// sha256 of the canonical JSON of ["ldp/v1", "idempotency", identifier, target, start, end].
// It is the same as the Python ldp's, so either understands a warehouse the other wrote.
func IdempotencyKey(identifier, target string, w LogicalWindow) string {
	k, _ := hashCanonical([]any{APIVersion, "idempotency", identifier, target, FormatInstant(w.Start), FormatInstant(w.End)})
	return k
}

// IdempotencyKey is the key of this pipeline's run for window w.
func (p *Pipeline) IdempotencyKey(w LogicalWindow) string {
	return IdempotencyKey(p.Identifier, p.TargetIdentity(), w)
}

// ReplaceKey is the key under which a replace of the window of key publishes:
// sha256 of the canonical JSON of ["ldp/v1", "replace", key, specHash]. A replace under the same
// spec finds its key and is skipped; one under a changed spec has a new key and runs.
func ReplaceKey(key, specHash string) string {
	k, _ := hashCanonical([]any{APIVersion, "replace", key, specHash})
	return k
}

// StaleReplaceKey is the key under which a stale window runs again (ldp apply --stale): its
// replace key made with the upstream keys the run consumes, sha256 of the canonical JSON of
// ["ldp/v1", "replace", key, specHash, consumed] (consumed sorted, as the plan gives it). A
// plain replace key would be on main after the first stale re-run, so a second re-run of the
// same window (the upstream replaced again) would skip it without new rows; this key is new
// for each new upstream state, and the same for a re-run retried over the same state, so each
// state re-runs the window once. ReplaceKey and IdempotencyKey are unchanged by it.
func StaleReplaceKey(key, specHash string, consumed []string) string {
	cs := make([]any, len(consumed))
	for i, c := range consumed {
		cs[i] = c
	}
	k, _ := hashCanonical([]any{APIVersion, "replace", key, specHash, cs})
	return k
}

// WindowKeys are the keys that vouch for the window of idempotency key key, in the order to
// look for them: the key itself, then its replace key under each of specHashes (the spec hashes
// main carries). A window first loaded by a replace is loaded: running it again under its own
// key would double its rows (issue 33). A replace under any spec counts, as a window published
// under its own key stays done when the spec changes. Replace keys are made only when asked
// for, so a window found under its own key costs no hash.
func WindowKeys(key string, specHashes []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if !yield(key) {
			return
		}
		for _, h := range specHashes {
			if h != "" && !yield(ReplaceKey(key, h)) {
				return
			}
		}
	}
}
