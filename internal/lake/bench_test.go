package lake

import (
	"fmt"
	"testing"
)

// BenchmarkPublish is the exactly-once publish of a three-row batch under a new key each time
// (find the key, write the files, stage on a branch, move main), on a table whose history grows
// by one snapshot per iteration.
func BenchmarkPublish(b *testing.B) {
	f := newFixture(b)
	f.batch(b, rideCols, rideVals)
	i := 0
	for b.Loop() {
		i++
		if _, err := f.cat.Publish(f.ctx, f.db, "batch", f.ref, PublishOptions{Key: fmt.Sprintf("k%d", i), RunID: fmt.Sprintf("r%d", i)}); err != nil {
			b.Fatal(err)
		}
	}
}
