// Package tables holds the table verbs: what ldp query, snapshots and commits read of a spec's
// tables, and what ldp maintain and ldp catalog (test, register, reindex) do to them. They
// change with the tables and their catalogs, not with the reconcile loop, so they live beside
// it: each opens what it needs through internal/lake and internal/engine, and reads a
// workflow only through controllers.LoadWorkflow.
package tables
