package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers"
)

type taskLine struct {
	ID        string      `json:"id"`
	Kind      v1.TaskKind `json:"kind"`
	DependsOn []string    `json:"depends_on,omitempty"`
	Key       string      `json:"idempotency_key,omitempty"`
	// detail is the kind's part of the task's plan (a dbt task's fingerprint and variables):
	// its fields join the line's.
	detail interface{ Line() string }
}

// MarshalJSON is the line's fields, then its kind's detail's.
func (l taskLine) MarshalJSON() ([]byte, error) {
	type plain taskLine
	b, err := json.Marshal(plain(l))
	if err != nil || l.detail == nil {
		return b, err
	}
	d, err := json.Marshal(l.detail)
	if err != nil {
		return nil, err
	}
	if len(d) <= 2 { // {}
		return b, nil
	}
	return append(append(b[:len(b)-1], ','), d[1:]...), nil
}

// workflowPlanOptions are the flags and arguments of the command newWorkflowPlanCmd builds.
type workflowPlanOptions struct {
	args []string
	win  string
	out  output
	// cmd is the command, for the usage errors found once the spec is read.
	cmd *cobra.Command
}

func (o *workflowPlanOptions) Validate(cmd *cobra.Command, args []string) error {
	o.args = args
	o.cmd = cmd
	return o.out.validate(cmd)
}

func (o *workflowPlanOptions) Run(ctx context.Context, s *streams) error {
	wf, err := controllers.LoadWorkflow(o.args[0])
	if err != nil {
		return err
	}
	var w v1.LogicalWindow
	if o.win != "" {
		if w, err = controllers.ParseWindow(o.win, wf.Window.Location, now()); err != nil {
			return usageError(o.cmd, "--window: %v", err)
		}
	}
	var lines []taskLine
	for _, t := range wf.RunOrder(w) {
		lines = append(lines, taskLine{ID: t.ID, Kind: t.Kind(), DependsOn: t.DependsOn, Key: t.Key})
	}
	warns := controllers.OrderWarnings(wf)
	for i, t := range wf.RunOrder(w) {
		plan, err := wf.TaskPlan(ctx, t.Task, w)
		if err != nil {
			return err
		}
		lines[i].detail = plan.Detail
		warns = append(warns, plan.Warnings...)
	}
	if o.out.JSON() {
		return writeJSON(s.Out, map[string]any{"workflow": wf.Name, "logical_window": w.String(), "tasks": lines, "warnings": warns})
	}
	fmt.Fprintf(s.Out, "%s: %d %s in run order\n", wf.Name, len(lines), plural(len(lines), "task", "tasks"))
	for i, l := range lines {
		after := ""
		if len(l.DependsOn) > 0 {
			after = fmt.Sprintf(" (after %v)", l.DependsOn)
		}
		key := ""
		if l.Key != "" {
			key = "  key " + l.Key
		}
		if l.detail != nil {
			key = "  " + l.detail.Line()
		}
		fmt.Fprintf(s.Out, "  %d. %s [%s]%s%s\n", i+1, l.ID, l.Kind, after, key)
	}
	for _, w := range warns {
		fmt.Fprintln(s.Err, "warning: "+w)
	}
	return nil
}

func newWorkflowPlanCmd(s *streams) *cobra.Command {
	o := &workflowPlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Check a workflow and every config it names; print its tasks in run order",
		Long: `Check a workflow file and every config it names, and print the tasks in the order they
run, each pipeline task with the idempotency key of the window. It warns when a task reads a
table another task writes and no depends_on orders them. A dbt task's project is checked
(its ldp_dbt.json), dbt is looked for on the PATH, and its variables and fingerprint are shown. The query of each sql task is bound
against the columns of its inputs (nothing is read), so a typo fails here, not at 3 a.m.

Exit status: 0 valid, 1 invalid.`,
		Example: `  ldp workflow plan config/samples/daily_orders_workflow.json --window 2026-08-02/2026-08-03`,
		Args:    exactArgs(1, "name the workflow file, for example: ldp workflow plan workflow.json"),
		RunE:    runVerb(o, s),
	}
	cmd.Flags().StringVar(&o.win, "window", "", "the window whose keys to show")
	addOutput(cmd, &o.out, false)
	return cmd
}
