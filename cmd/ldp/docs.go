package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// writeCLIDoc writes docs/cli.md from the command tree, so the reference cannot drift from
// the commands (a test checks it is current; go test ./cmd/ldp -run TestCLIDoc -update-docs
// rewrites it).
func writeCLIDoc(w io.Writer, root *cobra.Command) {
	fmt.Fprint(w, `# The ldp command

This reference is generated from the commands themselves (`+"`go test ./cmd/ldp -run TestCLIDoc -update-docs`"+`).

Every command prints errors once, to stderr, with no stack trace; `+"`-v`"+` logs debug messages.

## Two binaries

`+"`make build`"+` and `+"`make install`"+` write `+"`ldp`"+`, built without the Kubernetes packages
(`+"`-tags nokube`"+`: a fifth smaller, its start-up about a third less CPU), and `+"`ldp-kube`"+` beside it,
the full build. The verbs that talk to Kubernetes (`+"`ldp controller`"+`, `+"`ldp export k8s`"+`, `+"`ldp export crds`"+`,
`+"`ldp backfill --cluster`"+`) run `+"`ldp-kube`"+` with the same arguments, streams and environment, and end
with its exit code; without it beside `+"`ldp`"+` they say so. `+"`go install ./cmd/ldp`"+` builds one full
binary that does everything itself, as the image's does.

## Exit codes (every command)

| code | meaning |
|---|---|
| 0 | success |
| 1 | an error: an invalid spec, a failed task or window |
| 2 | `+"`ldp diff`"+` only: something would run |
| 3 | only a data gate held something back |

## Output

Every command that prints data takes `+"`-o/--output`"+`: `+"`text`"+` for people (the default),
`+"`json`"+` for programs, and `+"`csv`"+` where the data is rows (`+"`commits`"+`, `+"`snapshots`"+`,
`+"`runs`"+`, `+"`diff`"+`, `+"`query`"+`, `+"`schedule list`"+`). `+"`--json`"+` is the same as `+"`-o json`"+`. In JSON,
field names and types are the same in every command (`+"`attempt`"+` is a number, times are RFC 3339),
and snapshot ids are strings: a 64-bit id is past what jq and JavaScript hold as a number, so
`+"`ldp snapshots orders.json -o json | jq -r '.[0].snapshot_id'`"+` gives an id `+"`--snapshot`"+` takes.

## Shell completion

`+"`ldp completion bash|zsh|fish|powershell`"+` prints a completion script; for bash:

    source <(ldp completion bash)              # this shell
    ldp completion bash > /etc/bash_completion.d/ldp   # every shell

It completes commands and flags, the values a flag takes (`+"`--output`"+`, `+"`--mode`"+`,
`+"`--log-format`"+`, the `+"`--window`"+` shortcuts yesterday, last-week and last-month), and spec files
(`+"`.json`"+`, `+"`.yaml`"+`, `+"`.yml`"+`) where a command takes one.

`)
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				cmds = append(cmds, sub)
			}
			walk(sub)
		}
	}
	walk(root)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].CommandPath() < cmds[j].CommandPath() })
	fmt.Fprintln(w, "## Commands")
	fmt.Fprintln(w)
	for _, c := range cmds {
		fmt.Fprintf(w, "- [`%s`](#%s): %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n    %s\n", c.CommandPath(), c.Short, c.UseLine())
		if c.Long != "" {
			fmt.Fprintf(w, "\n%s\n", c.Long)
		}
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n\n%s\n", indent(c.Example))
		}
		if f := c.NonInheritedFlags().FlagUsages(); f != "" {
			fmt.Fprintf(w, "\nFlags:\n\n%s\n", indent(strings.TrimRight(f, "\n")))
		}
	}
}

func anchor(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}
