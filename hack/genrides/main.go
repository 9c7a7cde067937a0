// Command genrides writes deterministic synthetic taxi rides as CSV: the data of the samples,
// the demo and the benchmarks. The same flags always give the same bytes.
//
//	go run ./hack/genrides -rows 200 -start 2026-08-31 -days 2 -out config/samples/data/rides.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
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
	w := bufio.NewWriter(f)
	defer w.Flush()
	Write(w, *rows, *seed, day0, *days, *firstID)
}

var (
	cities   = []string{"NYC", "BKK"}
	payments = []string{"card", "cash", "app"}
)

// Write writes the header and rows rides spread evenly over days from day0.
func Write(w *bufio.Writer, rows int, seed uint64, day0 time.Time, days, firstID int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w.WriteString("ride_id,pickup_ts,dropoff_ts,city,passengers,distance_km,fare,payment\n")
	span := time.Duration(days) * 24 * time.Hour
	for i := 0; i < rows; i++ {
		// Evenly spaced pickups, so each day holds rows/days rides.
		pickup := day0.Add(time.Duration(int64(span) / int64(rows) * int64(i))).Truncate(time.Second)
		dist := 0.5 + r.Float64()*19.5
		dur := time.Duration(3+dist*2.5) * time.Minute
		fare := 2.5 + dist*1.75 + float64(r.IntN(300))/100
		fmt.Fprintf(w, "%d,%s,%s,%s,%d,%.2f,%.2f,%s\n", firstID+i,
			pickup.Format("2006-01-02 15:04:05"), pickup.Add(dur).Format("2006-01-02 15:04:05"),
			cities[r.IntN(len(cities))], 1+r.IntN(4), dist, fare, payments[r.IntN(len(payments))])
	}
}
