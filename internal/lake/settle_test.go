package lake

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// settleCommit is the one rule, on main and in an environment, of how a publish's commit
// ended. Against a real table: a taken commit is Published with the staged snapshot and the
// "published" hook; a clock behind and a commit of unknown outcome whose snapshot is not found
// end the publish with their errors (the unknown one keeps the files); one whose snapshot is
// found again is Published with that snapshot; a lost race is left to the caller.
func TestSettleCommit(t *testing.T) {
	f := newFixture(t)
	f.batch(t, rideCols, rideVals)
	first := f.publish(t, PublishOptions{Key: "k1", RunID: "r1"})
	tbl := mustLoad(t, f)
	head := tbl.CurrentSnapshot()
	found := func(*table.Table) *table.Snapshot { return head }
	lost := func(*table.Table) *table.Snapshot { return nil }
	cases := []struct {
		name          string
		commitErr     error
		mine          func(*table.Table) *table.Snapshot
		ended         bool
		published     bool
		hooked        bool
		wantStatus    string
		wantErr       string
		wantSnapshot  int64
		wantClockType bool
	}{
		{name: "taken", ended: true, published: true, hooked: true, wantStatus: Published, wantSnapshot: head.SnapshotID, mine: lost},
		{name: "clock behind", commitErr: &ClockBehindError{Ref: f.ref, Err: errors.New("refused")}, ended: true, wantClockType: true, mine: found},
		{name: "unknown, found again", commitErr: errors.New("connection reset"), mine: found, ended: true, published: true, wantStatus: Published, wantSnapshot: head.SnapshotID},
		{name: "unknown, not found", commitErr: errors.New("connection reset"), mine: lost, ended: true, published: true,
			wantErr: fmt.Sprintf("publish to %s in environment dev: outcome unknown: connection reset", f.ref)},
		{name: "lost race", commitErr: fmt.Errorf("commit: %w", table.ErrCommitFailed), mine: found},
	}
	for _, c := range cases {
		var hooks []string
		published := false
		res := &PublishResult{}
		out, ended, err := f.cat.settleCommit(f.ctx, f.ref, c.commitErr, func(p string) { hooks = append(hooks, p) }, res, head, &published, " in environment dev", c.mine)
		if ended != c.ended || published != c.published || (len(hooks) == 1) != c.hooked {
			t.Errorf("%s: ended %v, published %v, hooks %v; want ended %v, published %v, hooked %v", c.name, ended, published, hooks, c.ended, c.published, c.hooked)
		}
		var cb *ClockBehindError
		switch {
		case c.wantClockType && !errors.As(err, &cb):
			t.Errorf("%s: error %v, want the *ClockBehindError", c.name, err)
		case c.wantErr != "" && (err == nil || err.Error() != c.wantErr):
			t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
		case !c.wantClockType && c.wantErr == "" && err != nil:
			t.Errorf("%s: error %v, want none", c.name, err)
		}
		if c.wantStatus != "" && (out != res || out.Status != c.wantStatus || out.SnapshotID != c.wantSnapshot || out.RowsAfter != 3) {
			t.Errorf("%s: result %+v, want status %s on snapshot %d with 3 rows", c.name, out, c.wantStatus, c.wantSnapshot)
		}
		if c.wantStatus == "" && out != nil {
			t.Errorf("%s: result %+v, want none", c.name, out)
		}
	}
	if first.SnapshotID != head.SnapshotID {
		t.Fatalf("the fixture's publish made snapshot %d, main's head is %d", first.SnapshotID, head.SnapshotID)
	}
}
