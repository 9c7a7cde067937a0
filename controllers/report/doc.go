// Package report is the status for the page: the grid of every object under some paths (a
// row per task, a column per window, each cell reconcile.Cell of a dry-run Reconcile's plan)
// and one cell's detail (its tries, checks and ledger lines), what controllers/web serves and
// ldp status prints. It changes with the page, not with the loop, so it lives beside the loop
// and plans through it (controllers.Reconciler).
package report
