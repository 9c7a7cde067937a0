package main

import (
	"strings"

	"github.com/spf13/cobra"

	v1 "github.com/ldp-dev/ldp/apis/v1"
)

// registerCompletions gives the shell completion of every command (ldp completion bash|zsh|
// fish|powershell) the values its flags take and the files its arguments name. A flag's
// choices are read from its usage text ("output format: table, csv or json"), so they are
// written once.
func registerCompletions(root *cobra.Command) {
	fixed := map[string][]string{
		"mode":   v1.Names(v1.WriteModes),
		"window": {"yesterday", "last-week", "last-month"},
		"print":  {"cron", "launchd", "systemd"},
	}
	specs := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"json", "yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if strings.Contains(c.Use, "SPEC") || strings.Contains(c.Use, "FILE") {
			c.ValidArgsFunction = specs
		}
		for name, values := range fixed {
			if c.Flags().Lookup(name) != nil {
				values := values
				c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return values, cobra.ShellCompDirectiveNoFileComp
				})
			}
		}
		for _, name := range []string{"output", "log-format"} {
			if f := c.Flags().Lookup(name); f != nil {
				values := choices(f.Usage)
				c.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
					return values, cobra.ShellCompDirectiveNoFileComp
				})
			}
		}
		if c.Flags().Lookup("filename") != nil {
			c.RegisterFlagCompletionFunc("filename", specs)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// choices reads "what: a, b or c" (or "a or b") into its values.
func choices(usage string) []string {
	if i := strings.LastIndex(usage, ":"); i >= 0 {
		usage = usage[i+1:]
	}
	var out []string
	for _, part := range strings.Split(strings.ReplaceAll(usage, " or ", ","), ",") {
		if p := strings.TrimSpace(part); p != "" && !strings.Contains(p, " ") {
			out = append(out, p)
		}
	}
	return out
}
