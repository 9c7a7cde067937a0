package reconcile

import (
	"slices"
	"strings"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// Memory is a window's last attempt as an object's status remembers it. A finished Job is
// deleted after a while (its TTL); the memory is what says how many attempts a window had, so
// that a window blocked or failed at attempt n stays at n once its Jobs are gone, and its next
// attempt is n+1 at the time its wait ends.
type Memory struct {
	JobRecord
	// RetryAt is when the next attempt may start (zero: at once, or never when spent).
	RetryAt time.Time
	// Retry is the retry token (the object's ldp.dev/retry annotation) the window's attempts
	// from FirstAttempt on were counted under.
	Retry string
}

// Recall merges the Jobs an object has with the attempts its status remembers into the
// records DecideJobs reads. Per window the highest attempt wins; a listed Job wins over the
// memory of the same attempt. A remembered running attempt whose Job is not listed is taken as
// running for grace after it started (the cache has not seen the Job yet), then as failed:
// its Job went without an outcome, and the next attempt fences it. recheck is how soon a pass
// should look again for such a Job (0: none is missing).
//
// retry is the object's retry token: a window remembered under another token whose last
// attempt failed or was blocked gets MaxAttempts more, from the next attempt on (attempt
// numbers only grow: each one fences those before it).
func Recall(listed []JobRecord, memory []Memory, retry string, now time.Time, grace time.Duration) (records []JobRecord, recheck time.Duration) {
	top := map[string]int{}
	for _, j := range listed {
		top[j.Window] = max(top[j.Window], j.Attempt)
	}
	records = slices.Clone(listed)
	mem := map[string]Memory{}
	for _, m := range memory {
		mem[m.Window] = m
		if top[m.Window] >= m.Attempt {
			continue
		}
		rec := m.JobRecord
		if rec.Phase == JobActive {
			if left := grace - now.Sub(rec.Started); left > 0 {
				if recheck == 0 || left < recheck {
					recheck = left
				}
			} else {
				rec.Phase, rec.Finished = JobFailed, now
			}
		}
		records = append(records, rec)
	}
	last := lastAttempts(records)
	for i := range records {
		w := records[i].Window
		m, remembered := mem[w]
		first := 1
		if remembered {
			first = max(m.FirstAttempt, 1)
			if l := last[w]; m.Retry != retry && (l.Phase == JobFailed || l.Phase == JobBlocked) {
				first = l.Attempt + 1
			} else if records[i].Attempt == m.Attempt && records[i].Phase != JobActive {
				records[i].RetryAt = m.RetryAt
			}
		}
		records[i].FirstAttempt = first
	}
	return records, recheck
}

// Remember is the memory a status keeps after a pass: each window of the decisions that is not
// published, with its last attempt (a Job created in the pass is its running attempt), and the
// windows remembered before that the plan no longer has. At most limit, the newest windows
// first; forgotten are those past the bound.
func Remember(plans []WindowPlan, decisions []JobDecision, records []JobRecord, before []Memory, retry string, now time.Time, limit int) (keep, forgotten []Memory) {
	last := lastAttempts(records)
	prev := map[string]Memory{}
	for _, m := range before {
		prev[m.Window] = m
	}
	planned := map[string]bool{}
	for _, p := range plans {
		planned[p.Start+"/"+p.End] = true
	}
	for _, d := range decisions {
		w := d.Plan.Start + "/" + d.Plan.End
		l, seen := last[w]
		switch {
		case d.Create:
			first := 1
			if seen {
				first = l.FirstAttempt
			}
			keep = append(keep, Memory{JobRecord: JobRecord{Window: w, Attempt: d.Attempt, Phase: JobActive, Started: now, FirstAttempt: first}, Retry: retry})
		case !seen, d.State == v1.StatePublished:
			// Never attempted (it waits for a slot), or done: nothing to remember.
		default:
			m := Memory{JobRecord: l, RetryAt: d.At, Retry: retry}
			if p, ok := prev[w]; ok && p.Attempt == l.Attempt && m.Started.IsZero() {
				m.Started = p.Started
			}
			keep = append(keep, m)
		}
	}
	for _, m := range before {
		if !planned[m.Window] {
			keep = append(keep, m)
		}
	}
	slices.SortFunc(keep, func(a, b Memory) int { return strings.Compare(b.Window, a.Window) })
	if len(keep) > limit {
		keep, forgotten = keep[:limit], keep[limit:]
	}
	return keep, forgotten
}

// lastAttempts is each window's record of its highest attempt.
func lastAttempts(records []JobRecord) map[string]JobRecord {
	last := map[string]JobRecord{}
	for _, j := range records {
		if l, ok := last[j.Window]; !ok || j.Attempt > l.Attempt {
			last[j.Window] = j
		}
	}
	return last
}
