// Package specs finds spec files in folders (the contract's discovery rules) and checks whole
// files: each document against the schemas, and each workflow's tasks against the files they
// name, which are checked in turn and report their problems under their own paths.
package specs
