// Command testsummary reads go test -json on stdin and prints what go test prints without -v
// (each package's ok or FAIL line, and the output of every test that failed), then every test
// that was skipped, with its reason: without -v, go test hides that a tier did not run.
// It exits 1 when a test or a package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	output := map[string][]string{} // package/test -> its output lines
	var skipped []string
	failed := false
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	for in.Scan() {
		var e event
		if json.Unmarshal(in.Bytes(), &e) != nil {
			fmt.Println(in.Text()) // a build error, as go test printed it
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output":
			fmt.Print(e.Output) // a package that does not build: its compiler errors
		case "build-fail":
			failed = true
		case "output":
			output[key] = append(output[key], e.Output)
			if e.Test == "" && (strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?")) {
				fmt.Print(e.Output)
			}
		case "fail":
			failed = true
			if e.Test != "" {
				fmt.Print(strings.Join(output[key], ""))
			} else if len(output[key]) > 0 && !strings.HasPrefix(output[key][len(output[key])-1], "FAIL") {
				fmt.Print(strings.Join(output[key], ""))
			}
		case "skip":
			if e.Test != "" {
				reason := ""
				for _, l := range output[key] {
					if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "=== ") && !strings.HasPrefix(t, "--- SKIP") {
						reason = t
					}
				}
				skipped = append(skipped, fmt.Sprintf("  %s %s: %s", e.Package, e.Test, reason))
			}
		}
	}
	if len(skipped) > 0 {
		sort.Strings(skipped)
		fmt.Printf("skipped %d tests:\n%s\n", len(skipped), strings.Join(skipped, "\n"))
	}
	if failed {
		os.Exit(1)
	}
}
