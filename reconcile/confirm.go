package reconcile

// ConfirmAbove is how many windows a backfill may run before it asks first: a mistyped year
// in --from (2025 for 2026) ran 699 windows, 647 of them with no source file to read, and
// left the status page red with their failures.
const ConfirmAbove = 100

// Confirm decides whether a range that would run toRun windows asks before it runs. It asks
// only a person: on a terminal, without --yes. A script (no terminal) runs as it always has,
// since nobody could answer.
func Confirm(toRun int, terminal, yes bool) bool {
	return terminal && !yes && toRun > ConfirmAbove
}
