package lake

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// ownerFile, in a run's scratch folder, says which process the folder belongs to, so that
// maintenance can tell a run in flight from one that was killed.
const ownerFile = "owner.json"

// staleAfter is how long a scratch folder whose owner cannot be checked (another machine's)
// counts as a live run's.
const staleAfter = 24 * time.Hour

// Owner is the process a scratch folder, a lock or a lease belongs to.
type Owner struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	RunID   string    `json:"run_id,omitempty"`
	Attempt int       `json:"attempt,omitempty"`
}

// Self is the owner record of this process.
func Self() Owner {
	host, _ := os.Hostname()
	return Owner{PID: os.Getpid(), Host: host, Started: time.Now().UTC()}
}

func (o Owner) String() string {
	s := fmt.Sprintf("pid %d on %s", o.PID, o.Host)
	if o.RunID != "" {
		s += fmt.Sprintf(", run %s attempt %d", o.RunID, max(o.Attempt, 1))
	}
	if !o.Started.IsZero() {
		s += ", since " + o.Started.UTC().Format(time.RFC3339)
	}
	return s
}

// Alive reports whether the owner may still be running: a process of this machine is checked,
// one of another machine is taken as alive for a day.
func (o Owner) Alive() bool {
	if host, _ := os.Hostname(); o.Host != host || o.PID <= 0 {
		return time.Since(o.Started) < staleAfter
	}
	err := syscall.Kill(o.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// StagingDir makes a private folder for a run's scratch files inside the warehouse of c, on
// the file system of the table's data files, so a file staged there can become a data file by
// a hard link. The caller removes it. The scratch folders of dead runs are removed first.
func StagingDir(c *v1.Catalog, baseDir string) (string, error) {
	return newScratch(WarehouseDir(c, baseDir))
}

// newScratch makes a scratch folder with this process's owner record in the warehouse folder,
// after removing those of dead runs.
func newScratch(warehouse string) (string, error) {
	root := scratchRoot(warehouse)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	clearDeadRunsNow(warehouse, scratchNow())
	dir, err := os.MkdirTemp(root, "run-")
	if err != nil {
		return "", err
	}
	self := Self()
	b, _ := json.Marshal(self)
	if err := os.WriteFile(filepath.Join(dir, ownerFile), b, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	mine.mu.Lock()
	if mine.dirs == nil {
		mine.dirs = map[string]Owner{}
	}
	mine.dirs[dir] = self
	mine.mu.Unlock()
	return dir, nil
}

// clearEvery is how often one process clears the scratch folders of dead runs from a
// warehouse: a backfill makes scratch folders for every window, and scanning the others' each
// time was 7% of its CPU. A run killed while this process runs is cleared within a minute (and
// by the next process at once); its files only take space until then.
const clearEvery = time.Minute

// scratchNow is the clock of clearDeadRunsNow: a seam for its test.
var scratchNow = time.Now

// cleared is when this process last cleared each warehouse.
var cleared struct {
	mu sync.Mutex
	at map[string]time.Time
}

// clearDeadRunsNow clears the dead runs of warehouse unless this process did so less than
// clearEvery ago.
func clearDeadRunsNow(warehouse string, now time.Time) {
	cleared.mu.Lock()
	last, ok := cleared.at[warehouse]
	due := !ok || now.Sub(last) >= clearEvery || now.Before(last)
	if due {
		if cleared.at == nil {
			cleared.at = map[string]time.Time{}
		}
		cleared.at[warehouse] = now
	}
	cleared.mu.Unlock()
	if due {
		ClearDeadRuns(warehouse)
	}
}

// mine are the scratch folders this process made, with the owner record it wrote in each: a
// backfill makes two a window and scans the folder each time, and reading back its own
// records (and asking whether it is alive) was most of a scan.
var mine struct {
	mu   sync.Mutex
	dirs map[string]Owner
}

func scratchRoot(warehouse string) string { return filepath.Join(warehouse, ".ldp", "tmp") }

// ScratchRun is a run's scratch folder in a warehouse.
type ScratchRun struct {
	Dir   string
	Owner Owner
	Live  bool
}

// ScratchRuns lists the scratch folders of runs in the local warehouse folder, sorted. A
// folder without an owner record (an older ldp's) is live for a day after it last changed; any
// folder unchanged for a day is dead.
func ScratchRuns(warehouse string) []ScratchRun {
	root := scratchRoot(warehouse)
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []ScratchRun
	mine.mu.Lock()
	seen := make(map[string]bool, len(mine.dirs))
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		info, err := e.Info()
		if err != nil {
			continue
		}
		r := ScratchRun{Dir: dir, Owner: Owner{Started: info.ModTime()}}
		own, ok := mine.dirs[dir]
		if ok {
			seen[dir] = true
			r.Owner = own
		} else if b, err := os.ReadFile(filepath.Join(dir, ownerFile)); err == nil {
			json.Unmarshal(b, &r.Owner)
		}
		r.Live = time.Since(info.ModTime()) < staleAfter && (ok || r.Owner.Alive())
		out = append(out, r)
	}
	for dir := range mine.dirs {
		if !seen[dir] && filepath.Dir(dir) == root {
			delete(mine.dirs, dir) // removed: forget it
		}
	}
	mine.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

// ClearDeadRuns removes the scratch folders that dead runs (killed, say, by SIGKILL) left in
// the warehouse, and returns them.
func ClearDeadRuns(warehouse string) []string {
	var gone []string
	for _, r := range ScratchRuns(warehouse) {
		if !r.Live && os.RemoveAll(r.Dir) == nil {
			gone = append(gone, r.Dir)
		}
	}
	return gone
}

// LiveRuns are the scratch folders of the runs still writing to the local warehouse folder.
func LiveRuns(warehouse string) []ScratchRun {
	var out []ScratchRun
	for _, r := range ScratchRuns(warehouse) {
		if r.Live {
			out = append(out, r)
		}
	}
	return out
}

// OldestLiveRun is when the oldest live run writing to the local warehouse folder started;
// zero when none is.
func OldestLiveRun(warehouse string) time.Time {
	var oldest time.Time
	for _, r := range LiveRuns(warehouse) {
		if oldest.IsZero() || r.Owner.Started.Before(oldest) {
			oldest = r.Owner.Started
		}
	}
	return oldest
}

// IsWarehouseDir reports whether dir is a local warehouse ldp has used: it holds a local
// catalog's database or its writes' scratch area. (A spec folder has a .ldp folder too, for
// its ledger and locks, but neither of these.)
func IsWarehouseDir(dir string) bool {
	if fi, err := os.Stat(scratchRoot(dir)); err == nil && fi.IsDir() {
		return true
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), "_catalog.db") {
			return true
		}
	}
	return false
}

// scratchDir is a write's scratch folder, made the first time the write needs it: most
// appends of a backfill stage nothing of their own (their rows are a prewritten file and the
// schema probe is cached), and making a folder and its owner record for each was two new
// files a window, and new files are dear (about 0.5 ms of CPU each measured on ext4).
type scratchDir struct {
	make func() (string, error)

	mu   sync.Mutex
	dir  string
	err  error
	made bool
}

// path makes the folder if it is not made yet and returns it.
func (s *scratchDir) path() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		s.dir, s.err = s.make()
		s.made = true
	}
	return s.dir, s.err
}

// remove removes the folder if it was made.
func (s *scratchDir) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// inLiveScratch reports whether path lies in a run's scratch folder of c's local warehouse
// that this process made and has not removed: that folder's owner record already keeps
// maintenance off the files a write of path puts under data/ (nothing newer than the oldest
// live run is an orphan), so the write needs no scratch folder of its own for that.
func (c *Catalog) inLiveScratch(path string) bool {
	if path == "" || c.Warehouse == "" || IsRemote(c.Warehouse) {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	root := scratchRoot(c.Warehouse) + string(filepath.Separator)
	rel, ok := strings.CutPrefix(abs, root)
	if !ok {
		return false
	}
	run, _, _ := strings.Cut(rel, string(filepath.Separator))
	dir := filepath.Join(scratchRoot(c.Warehouse), run)
	live := false
	mine.mu.Lock()
	for d := range mine.dirs { // made from the warehouse as the spec names it: maybe relative
		if a, err := filepath.Abs(d); err == nil && a == dir {
			live = true
			break
		}
	}
	mine.mu.Unlock()
	if !live {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ownerFile))
	return err == nil
}
