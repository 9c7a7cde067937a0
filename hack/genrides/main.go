// Command genrides writes deterministic synthetic taxi rides as CSV: the data of the samples,
// the demo and the benchmarks. The same flags always give the same bytes.
//
//	go run ./hack/genrides -rows 200 -start 2026-08-31 -days 2 -out config/samples/data/rides.csv
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ldp-dev/ldp/internal/synth"
)

func main() {
	rows := flag.Int("rows", 1000, "rows to write")
	seed := flag.Uint64("seed", 42, "random seed")
	start := flag.String("start", "2026-09-01", "first pickup day (UTC)")
	days := flag.Int("days", 1, "days the pickups spread over")
	firstID := flag.Int("first-id", 1, "ride_id of the first row")
	out := flag.String("out", "-", "output file, - for stdout")
	flag.Parse()
	day0, err := time.Parse("2006-01-02", *start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genrides: -start:", err)
		os.Exit(2)
	}
	f := os.Stdout
	if *out != "-" {
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "genrides:", err)
			os.Exit(1)
		}
		defer f.Close()
	}
	if err := synth.WriteRides(f, *rows, *seed, day0, *days, *firstID); err != nil {
		fmt.Fprintln(os.Stderr, "genrides:", err)
		os.Exit(1)
	}
}
