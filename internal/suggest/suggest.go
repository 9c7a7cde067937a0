// Package suggest finds the name a user probably meant: the did-you-mean of every message
// about a misspelt field, zone or column. It is a leaf.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns ` (did you mean "x"?)` for the option closest to s, when one is close
// enough to be a typo or names s with a word more ("amount" for "amount_usd"), else "".
func DidYouMean(s string, options []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, o := range options {
		if strings.EqualFold(o, s) {
			continue
		}
		lo := strings.ToLower(o)
		d := editDistance(ls, lo)
		// A name with a unit or qualifier added (amount_usd, order_amount) is what a user
		// who wrote the short name meant, however far the edit distance.
		if ls != "" && (strings.HasPrefix(lo, ls+"_") || strings.HasSuffix(lo, "_"+ls)) {
			d = 0
		}
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
