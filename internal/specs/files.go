package specs

import (
	"io/fs"
	"os"
)

// Spec files are read through an fs.FS, so that what ldp validate checks on disk ldp controller
// checks in memory: the files of a cluster object (a Workflow and the Pipelines it names) are
// checked and loaded as the files they stand for (an fstest.MapFS), with no folder written to
// read them back.

// OS is the operating system's files under the names a command line gives them: relative to
// the working directory, or absolute. (An fs.FS proper names files by unrooted slash paths;
// this one passes any name to the os package, as the spec readers always have.)
var OS fs.FS = osFS{}

type osFS struct{}

func (osFS) Open(name string) (fs.File, error)     { return os.Open(name) }
func (osFS) ReadFile(name string) ([]byte, error)  { return os.ReadFile(name) }
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// orOS is fsys, or OS when it is nil.
func orOS(fsys fs.FS) fs.FS {
	if fsys == nil {
		return OS
	}
	return fsys
}
