package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/ldp-dev/ldp/controllers/tables"
)

// ldp diff --env NAME without --window or --from: what main lacks that the environment has,
// on each table of the objects named, window by window (what ldp promote NAME would move).

// envDiff prints what main lacks that environment o.env has; it exits as diff does: 0 when main
// lacks nothing, 2 when a promote would move something.
func (o *diffOptions) envDiff(ctx context.Context, s *streams) error {
	res, err := tables.EnvDiff(ctx, o.files, o.env, now())
	if err != nil {
		return err
	}
	lacking := 0
	for _, d := range res {
		lacking += len(d.Lacks)
	}
	switch {
	case o.out.JSON():
		if err := writeJSON(s.Out, res); err != nil {
			return err
		}
	case o.out.format == outCSV:
		if err := envDiffTable(res).write(s.Out, outCSV, "object", "table", "env", "main", "window", "idempotency_key", "operation", "rows_added", "rows_deleted", "checks", "snapshot_id"); err != nil {
			return err
		}
	default:
		printEnvDiff(s.Out, o.env, res, lacking)
	}
	return changesExit(lacking)
}

// envDiffTable is an environment's diff as rows: one per window of the environment, those main
// lacks first.
func envDiffTable(res []tables.EnvDiffResult) *table {
	t := &table{header: []string{"OBJECT", "TABLE", "ENV", "MAIN", "WINDOW", "KEY", "OPERATION", "ROWS ADDED", "ROWS DELETED", "CHECKS", "SNAPSHOT"}}
	for _, d := range res {
		for _, part := range []struct {
			main string
			ws   []tables.EnvDiffWindow
		}{{"lacks", d.Lacks}, {"has", d.OnMain}} {
			for _, w := range part.ws {
				t.add(d.Object, d.Table, d.Env, part.main, orDash(w.Window), orDash(w.Key), w.Operation,
					strconv.FormatInt(w.Rows, 10), strconv.FormatInt(w.RowsDeleted, 10), w.Checks, strconv.FormatInt(w.SnapshotID, 10))
			}
		}
	}
	return t
}

func printEnvDiff(w io.Writer, env string, res []tables.EnvDiffResult, lacking int) {
	for _, d := range res {
		fmt.Fprintf(w, "%s (%s) table %s\n", d.Object, displayPath(d.File), d.Table)
		if !d.Written {
			fmt.Fprintf(w, "  environment %s has not written it: main lacks nothing\n", env)
			continue
		}
		for _, win := range d.Lacks {
			fmt.Fprintf(w, "  main lacks  %s  %s, %d rows added, %d deleted, checks %s\n", win, win.Operation, win.Rows, win.RowsDeleted, win.Checks)
		}
		for _, win := range d.OnMain {
			fmt.Fprintf(w, "  main has    %s\n", win)
		}
		switch d.Promote {
		case tables.PromoteFastForward:
			fmt.Fprintf(w, "  ldp promote %s: fast-forward (main has not moved since the fork)\n", env)
		case tables.PromoteRebase:
			fmt.Fprintf(w, "  ldp promote %s: refused, main moved since the fork (%d %s); --rebase replays the windows main lacks\n", env, d.MainMoved, plural(d.MainMoved, "snapshot", "snapshots"))
		}
	}
	switch {
	case len(res) == 0:
		fmt.Fprintln(w, "nothing compared: no object writes an Iceberg table")
	case lacking == 0:
		fmt.Fprintf(w, "main lacks nothing of environment %s\n", env)
	default:
		fmt.Fprintf(w, "main lacks %d %s of environment %s\n", lacking, plural(lacking, "window", "windows"), env)
	}
}
