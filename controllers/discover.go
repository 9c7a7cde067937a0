package controllers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/internal/specs"
	"github.com/ldp-dev/ldp/schemas"
)

// Discover is the one discovery of objects: under paths, a file named is one object; in a
// folder, every workflow and every dataset config with a schedule (with scheduledOnly, only
// those with a schedule: what a tick runs). Each file is read and validated once. A file that
// is not valid is kept, with its problems, so it is reported rather than silently skipped; a
// JSON or YAML file in a folder that parses but is not a spec, or that has neither a schedule
// nor a workflow's tasks, is passed over; one that does not parse is kept with its problems.
// Files too large to be specs are returned in skipped.
func Discover(paths []string, scheduledOnly bool) (found []Scheduled, skipped []schemas.Skipped, err error) {
	skipped, err = discoverEach(paths, scheduledOnly, func(s Scheduled) { found = append(found, s) })
	return found, skipped, err
}

// DiscoverIn is Discover with each object put in environment env (Object.InEnv; "" is main):
// an object whose specs name another environment is kept with that problem.
func DiscoverIn(paths []string, scheduledOnly bool, env string) ([]Scheduled, []schemas.Skipped, error) {
	found, skipped, err := Discover(paths, scheduledOnly)
	if err != nil || env == "" {
		return found, skipped, err
	}
	for i, sc := range found {
		if sc.WF == nil {
			continue
		}
		wf, err := sc.WF.InEnv(env)
		if err != nil {
			found[i].WF = nil
			found[i].Problems = []schemas.Problem{{File: sc.Path, Line: 1, Column: 1, Message: err.Error()}}
			continue
		}
		found[i].WF = wf
	}
	return found, skipped, nil
}

// discoverEach is Discover handing each object to each as soon as it is read and checked, in
// path order, so a caller can plan one while the next is validated. Its only error is the
// listing's, before any object is handed on.
func discoverEach(paths []string, scheduledOnly bool, each func(Scheduled)) (skipped []schemas.Skipped, err error) {
	cands, err := specs.Discover(paths)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Path < cands[j].Path })
	var names specs.Names
	for _, c := range cands {
		if c.TooLarge && !c.Explicit {
			skipped = append(skipped, schemas.Skipped{Path: c.Path, Reason: fmt.Sprintf("larger than the %d-byte limit for spec files, so it is not read as one", v1.MaxSpecBytes)})
			continue
		}
		data, err := os.ReadFile(c.Path)
		if err != nil {
			if c.Explicit {
				each(Scheduled{Path: c.Path, Problems: []schemas.Problem{{File: c.Path, Line: 1, Column: 1, Message: "cannot read: " + err.Error()}}})
			}
			continue
		}
		r := schemas.Validate(data, c.Path)
		scheduled := r.Doc != nil && specs.HasSchedule(r.Doc)
		// A file that does not parse may be a scheduled spec mid-edit: it is reported, as ldp
		// validate reports it, never taken for one that is gone (ldp watch would stop it). Only
		// one that names an identifier, as every spec does: a data file of JSON lines beside the
		// specs is no spec, and must not fail a tick.
		unparsed := r.Doc == nil && len(r.Problems) > 0 && bytes.Contains(data, []byte("identifier"))
		isObject := scheduled || unparsed || (!scheduledOnly && (c.Explicit || (r.Doc != nil && r.Kind == v1.KindWorkflow)))
		if !isObject {
			continue
		}
		s := loadObject(specs.OS, c.Path, data, &r)
		if len(s.Problems) == 0 {
			line, col := r.Position("identifier")
			if dup := names.Claim(c.Path, r.Kind, s.WF.Name, line, col); dup != nil {
				s = Scheduled{Path: c.Path, Problems: []schemas.Problem{*dup}} // the folder's first file of that name runs
			}
		}
		each(s)
	}
	return skipped, nil
}

// LoadObject is the object of the file name of fsys, checked and loaded as Discover checks a
// file named on the command line, the files its tasks name read from fsys too: ldp controller
// loads a cluster object's spec files from memory (an fstest.MapFS). An object read from fsys
// keeps no ledger: its folder is not one on disk (its runs keep theirs where they run).
func LoadObject(fsys fs.FS, name string) Scheduled {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return Scheduled{Path: name, Problems: []schemas.Problem{{File: name, Line: 1, Column: 1, Message: "cannot read: " + err.Error()}}}
	}
	r := schemas.Validate(data, name)
	s := loadObject(fsys, name, data, &r)
	if s.WF != nil && fsys != specs.OS {
		s.WF.Ledger = ""
	}
	return s
}

// loadObject is the object of file path of fsys, whose bytes data r validated: its problems,
// or its loaded workflow.
func loadObject(fsys fs.FS, path string, data []byte, r *schemas.Result) Scheduled {
	s := Scheduled{Path: path}
	if len(r.Problems) > 0 {
		s.Problems = r.Problems
		return s
	}
	wf, err := loadWorkflow(fsys, path, data)
	if err != nil {
		var inv *specs.InvalidError
		if errors.As(err, &inv) {
			s.Problems = inv.Problems
		} else {
			s.Problems = []schemas.Problem{{File: path, Line: 1, Column: 1, Message: err.Error()}}
		}
		return s
	}
	s.WF, s.Catchup, s.Start = wf, wf.Catchup, wf.Start
	return s
}
