// Package controllers turns plans into effects. The workflow runner runs a window's tasks in
// dependency order, retries what another attempt may fix, and records workflow and task events
// in the ledger next to the workflow file. It takes its clock, sleeper and random source as
// inputs, so no test waits.
package controllers
