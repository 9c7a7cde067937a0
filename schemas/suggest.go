package schemas

import (
	"fmt"
	"strings"
)

// didYouMean returns ` (did you mean "x"?)` for the option closest to s, when one is close
// enough to be a typo, else "".
func didYouMean(s string, options []string) string {
	best, bestD := "", 1<<30
	for _, o := range options {
		if strings.EqualFold(o, s) {
			continue
		}
		d := editDistance(strings.ToLower(s), strings.ToLower(o))
		if d < bestD {
			best, bestD = o, d
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if best == "" || bestD > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
