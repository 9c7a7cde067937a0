package schemas

// Report is what checking a set of spec files found (ldp validate): each file's problems,
// the files passed over and the warnings. internal/specs fills it; it is defined here, beside
// Problem, so that the command line prints it without reaching the checker (issue 30: no alias
// of an internal type in controllers).
type Report struct {
	Files   []FileResult `json:"files"`
	Skipped []Skipped    `json:"skipped,omitempty"`
	// Warnings are what is valid but most likely a mistake: a dataset config scheduled on its
	// own and also a task of a scheduled workflow loads each window twice.
	Warnings []Problem `json:"warnings,omitempty"`
}

// FileResult is what checking one file found.
type FileResult struct {
	Path     string    `json:"path"`
	Kind     string    `json:"kind,omitempty"`
	Problems []Problem `json:"problems"`
}

// Skipped is a file that discovery found and checking passed over, with the reason.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Problems returns every problem of every file, sorted.
func (r *Report) Problems() []Problem {
	var all []Problem
	for _, f := range r.Files {
		all = append(all, f.Problems...)
	}
	return SortProblems(all)
}

// Invalid counts the files with at least one problem.
func (r *Report) Invalid() int {
	n := 0
	for _, f := range r.Files {
		if len(f.Problems) > 0 {
			n++
		}
	}
	return n
}
