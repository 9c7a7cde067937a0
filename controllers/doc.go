// Package controllers turns plans into effects. A Reconcile takes one object (a Request): it
// observes what is done, plans the object's desired windows through reconcile's decisions,
// and runs what the plan runs with the one window runner (sequential, leased or grouped);
// a folder is a fan-out over it (ReconcileFolder: diff, apply, tick, watch), and a backfill
// is one Request. The workflow runner runs a window's tasks in dependency order, retries what
// another attempt may fix, and records workflow and task events in the ledger next to the
// workflow file. It takes its clock, sleeper and random source as inputs, so no test waits.
// Beside it are the page's report (controllers/report) and the table verbs
// (controllers/tables); the task kinds are below it (controllers/tasks).
package controllers
