package shell

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCommandRoundTripsThroughSh: sh reads every word of Command back as it was, whatever it
// holds, and runs none of it.
func TestCommandRoundTripsThroughSh(t *testing.T) {
	dir := t.TempDir()
	words := []string{"plain.json", "", "my specs/o.json", "o$(touch PWNED).json", "`touch PWNED`", "a'b\"c", "!x", "it's!", "a\nb", "tab\there", "~/x", "*.json", "a;touch PWNED", "josé#2%20"}
	cmd := exec.Command("sh", "-c", `printf '%s\0' `+Command(words...))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v for %s", err, Command(words...))
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); !slices.Equal(got, words) {
		t.Errorf("sh reads %q\nfrom %s\nwant %q", got, Command(words...), words)
	}
	if out, _ := exec.Command("ls", dir).Output(); len(out) > 0 {
		t.Errorf("the shell ran a word: %s", out)
	}
	if Quote("shop/orders.json") != "shop/orders.json" {
		t.Errorf("a plain path is quoted: %s", Quote("shop/orders.json"))
	}
}
