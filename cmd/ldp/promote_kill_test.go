package main

import (
	"strings"
	"testing"
)

// mainKeys are the keys on main of spec's table and main's head (the newest keyed publish).
func (l *lakeDir) mainKeys(t *testing.T, spec string) (map[string]int, int64) {
	t.Helper()
	commits, keys := l.commits(t, nil, spec)
	var head int64
	if len(commits) > 0 {
		head = commits[len(commits)-1].SnapshotID
	}
	return keys, head
}

// TestPromoteKilled: a promote process killed (SIGKILL) just before its catalog commit leaves
// main at the old head, one killed just after it at the new head, never between; running the
// promote again finishes it, and every window is on main once. The same for a rebase.
func TestPromoteKilled(t *testing.T) {
	t.Parallel()
	l := newLake(t, 5)
	mustRun := func(env []string, args ...string) string {
		t.Helper()
		code, out, errs := l.run(t, env, args...)
		if code != 0 {
			t.Fatalf("ldp %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		return out
	}
	killed := func(point string, args ...string) {
		t.Helper()
		code, out, errs := l.run(t, []string{"LDP_FAULT=" + point + ":kill"}, args...)
		if code != -1 {
			t.Fatalf("ldp %s killed at %s: exit %d\n%s%s", strings.Join(args, " "), point, code, out, errs)
		}
	}
	mustRun(nil, "run", "append.json", "--window", dayWindow(1))
	mustRun(nil, "run", "append.json", "--window", dayWindow(2), "--env", "dev")
	mustRun(nil, "run", "append.json", "--window", dayWindow(3), "--env", "dev")
	before, oldHead := l.mainKeys(t, "append.json")

	killed("committing", "promote", "dev", "-f", "append.json")
	if keys, head := l.mainKeys(t, "append.json"); head != oldHead || len(keys) != len(before) {
		t.Fatalf("killed before the commit: main at %d with %d keys, want the old head %d with %d", head, len(keys), oldHead, len(before))
	}
	l.check(t, "append.json", []int{1})
	killed("promoted", "promote", "dev", "-f", "append.json")
	keys, newHead := l.mainKeys(t, "append.json")
	if newHead == oldHead || len(keys) != 3 {
		t.Fatalf("killed after the commit: main at %d with %d keys, want dev's head with 3", newHead, len(keys))
	}
	l.check(t, "append.json", []int{1, 2, 3})
	if out := mustRun(nil, "promote", "dev", "-f", "append.json"); !strings.Contains(out, "main already has every window of dev") {
		t.Fatalf("promote after the kill: %s", out)
	}

	// A rebase: qa forks, main moves, and the promote replays qa's window.
	mustRun(nil, "run", "append.json", "--window", dayWindow(4), "--env", "qa")
	mustRun(nil, "run", "append.json", "--window", dayWindow(5))
	_, oldHead = l.mainKeys(t, "append.json")
	killed("committing", "promote", "qa", "-f", "append.json", "--rebase")
	if _, head := l.mainKeys(t, "append.json"); head != oldHead {
		t.Fatalf("rebase killed before the commit moved main to %d", head)
	}
	l.check(t, "append.json", []int{1, 2, 3, 5})
	killed("promoted", "promote", "qa", "-f", "append.json", "--rebase")
	l.check(t, "append.json", []int{1, 2, 3, 4, 5})
	if out := mustRun(nil, "promote", "qa", "-f", "append.json", "--rebase"); !strings.Contains(out, "main already has every window of qa") {
		t.Fatalf("rebase after the kill: %s", out)
	}
	l.check(t, "append.json", []int{1, 2, 3, 4, 5})
}
