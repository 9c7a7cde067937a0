package schemas

import (
	"regexp"
	"strconv"
	"testing"
)

// TestEveryPatternIsDescribed: a pattern without words would print as a raw regexp.
func TestEveryPatternIsDescribed(t *testing.T) {
	re := regexp.MustCompile(`=~("(?:[^"\\]|\\.)*")`)
	for name, src := range Source() {
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			pat, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, ok := patternText[pat]; !ok {
				t.Errorf("%s: pattern %s has no entry in patternText", name, pat)
			}
		}
	}
}

func TestDidYouMean(t *testing.T) {
	opts := []string{"not_null", "unique", "range"}
	for in, want := range map[string]string{"not_nul": ` (did you mean "not_null"?)`, "uniqe": ` (did you mean "unique"?)`, "zzz": "", "RANGE": ""} {
		if got := didYouMean(in, opts); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindCycles(t *testing.T) {
	deps := map[string][]string{"a": {"c"}, "b": {"a"}, "c": {"b"}, "d": {"d"}, "e": {"f"}, "f": {"e"}}
	got := findCycles([]string{"a", "b", "c", "d", "e", "f"}, deps)
	if len(got) != 2 || len(got[0]) != 3 || got[0][0] != "a" || got[1][0] != "e" {
		t.Errorf("findCycles = %v, want [[a c b] [e f]]", got)
	}
}
