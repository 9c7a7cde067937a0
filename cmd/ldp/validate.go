package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ldp-dev/ldp/controllers"
	"github.com/ldp-dev/ldp/internal/ldperr"
	"github.com/ldp-dev/ldp/schemas"
)

type validateOptions struct {
	paths []string
	out   output
	s     *streams
}

func newValidateCmd(s *streams) *cobra.Command {
	o := &validateOptions{s: s}
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR...",
		Short: "Check spec files and report every problem at once",
		Long: `Check Pipeline and Workflow specs (JSON or YAML) against the ldp/v1 schemas, and check
what the schemas cannot: time zones, cron expressions, placeholders, the task graph, and
the files that workflow tasks name (which are checked in turn).

Folders are walked as the scheduler discovers specs: .json, .yaml and .yml files, not in
folders whose name starts with a dot, node_modules, venv, env, site-packages or
__pycache__, and not *.metadata.json. Files over 1 MB and JSON or YAML files that are
not ldp specs are passed over in folders and reported when named directly.

Each problem prints as path:line:col: field: message, sorted. Under GitHub Actions
(GITHUB_ACTIONS=true) each also prints as an ::error annotation.

Exit status: 0 when every file is valid, 1 otherwise.`,
		Example: `  ldp validate config/
  ldp validate workflow.json pipelines/orders.yaml
  ldp validate -o json config/ > report.json`,
		RunE: runVerb(o, s),
	}
	addOutput(cmd, &o.out, false)
	return cmd
}

func (o *validateOptions) Validate(cmd *cobra.Command, args []string) error {
	o.paths = args
	if len(o.paths) == 0 {
		return usageError(cmd, "name at least one spec file or folder, for example: ldp validate config/")
	}
	return o.out.validate(cmd)
}

func (o *validateOptions) Run(_ context.Context, s *streams) error {
	o.s = s
	report, err := controllers.Validate(o.paths)
	if err != nil {
		return &ldperr.ConfigError{Msg: "cannot read specs", Err: err}
	}
	problems := report.Problems()
	for i := range problems {
		problems[i].File = displayPath(problems[i].File)
	}
	if o.out.JSON() {
		if err := o.writeJSON(report, problems); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintln(o.s.Out, p.String())
		}
		for _, w := range report.Warnings {
			w.File = displayPath(w.File)
			w.Message = "warning: " + w.Message
			fmt.Fprintln(o.s.Out, w.String())
		}
		fmt.Fprintln(o.s.Out, summary(report, len(problems)))
	}
	if o.s.Getenv("GITHUB_ACTIONS") == "true" {
		for _, p := range problems {
			fmt.Fprintln(o.s.Out, githubAnnotation(p))
		}
	}
	if len(problems) > 0 {
		return failedExit()
	}
	return nil
}

func summary(r *schemas.Report, problems int) string {
	files := len(r.Files)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s checked: ", files, plural(files, "file", "files"))
	if problems == 0 {
		b.WriteString("all valid")
	} else {
		fmt.Fprintf(&b, "%d valid, %d invalid, %d %s", files-r.Invalid(), r.Invalid(), problems, plural(problems, "problem", "problems"))
	}
	if n := len(r.Skipped); n > 0 {
		fmt.Fprintf(&b, " (%d %s passed over: not ldp specs or over 1 MB)", n, plural(n, "file", "files"))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type validateJSON struct {
	Valid    bool              `json:"valid"`
	Files    []fileJSON        `json:"files"`
	Skipped  []schemas.Skipped `json:"skipped"`
	Problems []schemas.Problem `json:"problems"`
	Warnings []schemas.Problem `json:"warnings,omitempty"`
}

type fileJSON struct {
	Path     string `json:"path"`
	Kind     string `json:"kind,omitempty"`
	Valid    bool   `json:"valid"`
	Problems int    `json:"problems"`
}

func (o *validateOptions) writeJSON(r *schemas.Report, problems []schemas.Problem) error {
	out := validateJSON{Valid: len(problems) == 0, Files: []fileJSON{}, Skipped: []schemas.Skipped{}, Problems: problems}
	if out.Problems == nil {
		out.Problems = []schemas.Problem{}
	}
	for _, f := range r.Files {
		out.Files = append(out.Files, fileJSON{Path: displayPath(f.Path), Kind: f.Kind, Valid: len(f.Problems) == 0, Problems: len(f.Problems)})
	}
	for _, w := range r.Warnings {
		w.File = displayPath(w.File)
		out.Warnings = append(out.Warnings, w)
	}
	for _, s := range r.Skipped {
		out.Skipped = append(out.Skipped, schemas.Skipped{Path: displayPath(s.Path), Reason: s.Reason})
	}
	return writeJSON(o.s.Out, out)
}

// githubAnnotation formats a problem as a GitHub Actions workflow command, escaped as the
// runner expects (% and newlines in the message; also : and , in properties).
func githubAnnotation(p schemas.Problem) string {
	prop := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
	data := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	msg := p.Message
	if p.Field != "" {
		msg = p.Field + ": " + msg
	}
	return fmt.Sprintf("::error file=%s,line=%d,col=%d,title=ldp validate::%s", prop.Replace(p.File), p.Line, p.Column, data.Replace(msg))
}

// displayPath writes a path relative to the working directory when it is under it, so output
// does not depend on where the checkout is.
func displayPath(p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return p
	}
	return filepath.ToSlash(rel)
}
