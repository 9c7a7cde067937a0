// Package v1 holds the ldp/v1 objects a user declares: Pipeline (a dataset config, also in its
// legacy form with no kind) and Workflow, their defaults, and the identities derived from them
// (SpecHash, IdempotencyKey, ReplaceKey).
//
// It does no I/O beyond reading the one file Load is given. Validation with positions lives in
// package schemas; this package trusts its input enough to decode it and fills in defaults, so
// the identities stay the same for the same meaning however a spec is written.
package v1
