package schemas

import "github.com/ldp-dev/ldp/internal/suggest"

// didYouMean is the project's one did-you-mean rule (internal/suggest).
func didYouMean(s string, options []string) string { return suggest.DidYouMean(s, options) }
