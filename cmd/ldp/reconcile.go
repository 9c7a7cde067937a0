package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

// reconcileFlags are the flags diff and apply share: both are one Reconcile, diff in dry run.
type reconcileFlags struct {
	files         []string
	window        string
	from, to, now string
	replace       bool
	env           string
	stale         bool
	out           output
}

// request checks the flags of diff or apply (verb) and makes their fan-out: a Reconcile request
// for each object found.
func (f *reconcileFlags) request(cmd *cobra.Command, verb string) (controllers.Folder, error) {
	req := controllers.Folder{Paths: f.files, Each: controllers.Request{Window: f.window, From: f.from, To: f.to, Now: now(), Replace: f.replace, Env: f.env, Stale: f.stale}}
	switch {
	case len(f.files) == 0:
		return req, usageError(cmd, "name what to %s with -f, for example: ldp %s -f config/", verb, verb)
	case f.window != "" && f.from != "":
		return req, usageError(cmd, "--window and --from are two ways to say which windows: give one")
	case f.to != "" && f.from == "":
		return req, usageError(cmd, "--to needs --from")
	}
	if err := f.out.validate(cmd); err != nil {
		return req, err
	}
	if err := validEnv(cmd, f.env); err != nil {
		return req, err
	}
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return req, usageError(cmd, "--now %q: want an ISO-8601 time with an offset, such as 2026-08-05T02:05:00Z", f.now)
		}
		req.Each.Now = t
	}
	return req, nil
}

// objectPlan is one object's plan as diff --json prints it.
type objectPlan struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Env is the environment the object was planned in; "" is main.
	Env     string                   `json:"env,omitempty"`
	Windows []controllers.WindowPlan `json:"windows"`
	// Loc is the zone of the object's windows, in which the text shows them beside UTC.
	Loc *time.Location `json:"-"`
	// End is the schedule's end (metadata.end), zero without one.
	End time.Time `json:"-"`
}

// plansOf are the plans of the objects that could be planned, with display paths.
func plansOf(res *controllers.FolderResult) []objectPlan {
	out := []objectPlan{}
	for _, o := range res.Objects {
		if o.Err != nil || len(o.Problems) > 0 {
			continue
		}
		op := objectPlan{Name: o.Name, File: displayPath(o.File), Windows: o.Windows}
		if o.WF != nil {
			op.Loc, op.End, op.Env = o.WF.Window.Location, o.WF.End, o.WF.Env
		}
		out = append(out, op)
	}
	return out
}

// badObjects is the error of the objects a reconcile could not plan: a single object's error
// as it is, several together.
func badObjects(res *controllers.FolderResult) error {
	bad := res.Invalid()
	errs, ok := bad.(controllers.ObjectErrors)
	switch {
	case !ok || len(plansOf(res)) > 0:
		return bad
	case len(errs) == 1:
		return errs[0]
	}
	return noneplanned{errs} // "the others were:" would introduce nothing
}

// noneplanned is the error of a reconcile none of whose objects could be planned.
type noneplanned struct{ controllers.ObjectErrors }

func (e noneplanned) Error() string {
	msg := fmt.Sprintf("%d objects could not be planned:", len(e.ObjectErrors))
	for _, err := range e.ObjectErrors {
		msg += "\n" + err.Error()
	}
	return msg
}

// printDiff writes the plans and how many windows would run: ldp diff's output, and ldp apply
// --dry-run's.
func printDiff(w io.Writer, plans []objectPlan) {
	pending := printPlans(w, plans)
	compared, unfinished, held, waiting, stale := 0, 0, 0, 0, 0
	for _, p := range plans {
		compared += len(p.Windows)
		for _, wp := range p.Windows {
			if len(wp.Stale) > 0 && !wp.Runs() {
				stale++
			}
			if wp.NotFinished {
				unfinished++
			}
			if wp.WaitsUpstream() {
				waiting++
			}
			if wp.Held != nil {
				held++
			}
		}
	}
	switch {
	case len(plans) == 0:
		// Never "done" for windows nothing looked at.
		fmt.Fprintln(w, "nothing compared: no workflow and no dataset config with a schedule was found, so no window is desired; name a spec and pass --window or --from/--to to compare its windows")
	case compared == 0 && len(plans) == 1 && !plans[0].End.IsZero():
		end := plans[0].End.UTC().Format(time.RFC3339)
		fmt.Fprintf(w, "nothing compared: no window is due; the schedule ends at %s%s (metadata.end), no window after it is expected; pass --window or --from/--to to compare others\n", end, inZone(plans[0].Loc, end))
	case compared == 0:
		fmt.Fprintln(w, "nothing compared: no window is due yet; pass --window or --from/--to to compare others")
	case pending == 0 && waiting > 0:
		fmt.Fprintf(w, "nothing would run: %d %s for %s upstream windows (ldp apply runs an upstream before the windows that wait for it)\n", waiting, plural(waiting, "window waits", "windows wait"), plural(waiting, "its", "their"))
	case pending == 0 && stale > 0:
		fmt.Fprintf(w, "nothing would run: %d %s stale (an upstream window was replaced after %s ran): ldp apply --stale runs %s again\n", stale, plural(stale, "window is", "windows are"), plural(stale, "it", "they"), plural(stale, "it", "them"))
	case pending == 0 && held > 0:
		fmt.Fprintf(w, "nothing would run: %d %s held until %s source or spec changes\n", held, plural(held, "window is", "windows are"), plural(held, "its", "their"))
	case pending == 0 && unfinished > 0:
		fmt.Fprintf(w, "nothing would run: %d %s not finished\n", unfinished, plural(unfinished, "window is", "windows are"))
	case pending == 0:
		fmt.Fprintln(w, "nothing to do: every window is done")
	case waiting > 0:
		fmt.Fprintf(w, "%d %s would run; %d %s for %s upstream windows\n", pending, plural(pending, "window", "windows"), waiting, plural(waiting, "waits", "wait"), plural(waiting, "its", "their"))
	default:
		fmt.Fprintf(w, "%d %s would run\n", pending, plural(pending, "window", "windows"))
	}
}

// diffTable is a diff as rows: one per task of each window that would run, and one per window
// that would not (with no task).
func diffTable(plans []objectPlan) *table {
	t := &table{header: []string{"OBJECT", "FILE", "WINDOW START", "WINDOW END", "STATE", "ACTION", "TASK", "TASK ACTION", "REASON", "KEY"}}
	for _, op := range plans {
		for _, wp := range op.Windows {
			row := []string{op.Name, op.File, wp.Start, wp.End, string(wp.State), string(wp.Action)}
			if !wp.Runs() || len(wp.Tasks) == 0 {
				t.add(append(row, "-", "-", "-", "-")...)
				continue
			}
			for _, tp := range wp.Tasks {
				t.add(append(row[:6:6], tp.ID, string(tp.Action), orDash(tp.Reason), orDash(tp.Key))...)
			}
		}
	}
	return t
}

// printPlans writes plans window by window and task by task, and returns the windows that
// would run.
func printPlans(w io.Writer, plans []objectPlan) int {
	pending := 0
	for _, op := range plans {
		env := ""
		if op.Env != "" {
			env = " in environment " + op.Env
		}
		fmt.Fprintf(w, "%s (%s)%s\n", op.Name, op.File, env)
		for _, wp := range op.Windows {
			note := ""
			if wp.Unfinished {
				note = ", last run unfinished"
			}
			switch {
			case wp.NotFinished && !wp.RetryAt.Equal(wp.Window.End):
				// It waits its metadata.window.delay for late rows after its end.
				note += ", not finished (ends at " + wp.End + ", may run at " + wp.RetryAt.UTC().Format(time.RFC3339) + " after its delay)"
			case wp.NotFinished:
				note += ", not finished (ends at " + wp.RetryAt.UTC().Format(time.RFC3339) + ")"
			case wp.WaitsUpstream():
				note += ", upstream not published"
			case wp.Action == v1.ActionWait:
				note += ", retry due " + wp.RetryAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "  %s/%s  %s%s -> %s%s\n", wp.Start, wp.End, wp.State, note, wp.Action, inZone(op.Loc, wp.Start, wp.End))
			if wp.Held != nil {
				fmt.Fprintf(w, "    held: %s\n", wp.Held.Message)
			}
			for _, wait := range wp.Waiting {
				fmt.Fprintf(w, "    %s\n", controllers.WaitMessage(wait))
			}
			if len(wp.Stale) > 0 {
				fmt.Fprintf(w, "    %s\n", controllers.StaleMessage(wp.Stale))
			}
			if !wp.Runs() {
				continue
			}
			pending++
			for _, tp := range wp.Tasks {
				key := ""
				if tp.Key != "" {
					key = "  key " + tp.Key[:12] + "…"
				}
				fmt.Fprintf(w, "    %-14s %-4s  %s%s\n", tp.ID, tp.Action, tp.Reason, key)
			}
		}
	}
	return pending
}

// runnerFor is the workflow runner of the CLI.
func runnerFor(s *streams) *controllers.Runner {
	return &controllers.Runner{Log: s.Err, Getenv: s.Getenv, Version: version, Hook: faultHook(s.Getenv)}
}
