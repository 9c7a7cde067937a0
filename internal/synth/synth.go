// Package synth writes deterministic synthetic data: the taxi rides of the samples, the demo
// and the benchmarks. The same arguments always give the same bytes.
package synth

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

var (
	cities   = []string{"NYC", "BKK"}
	payments = []string{"card", "cash", "app"}
)

// RidesHeader is the header line of WriteRides.
const RidesHeader = "ride_id,pickup_ts,dropoff_ts,city,passengers,distance_km,fare,payment"

// WriteRides writes the header and rows rides, spread evenly over days from day0, with ride_id
// from firstID.
func WriteRides(out io.Writer, rows int, seed uint64, day0 time.Time, days, firstID int) error {
	w := bufio.NewWriter(out)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w.WriteString(RidesHeader + "\n")
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
	return w.Flush()
}

// OrdersHeader is the header line of WriteOrders.
const OrdersHeader = "order_id,ordered_at,amount"

// WriteOrders writes the header and perDay orders for each of days local days from day0 (a
// local midnight), their ordered_at naive local times within the day and their amounts between
// 5 and 120, order_id counting from 1.
func WriteOrders(out io.Writer, seed uint64, day0 time.Time, days, perDay int) error {
	w := bufio.NewWriter(out)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w.WriteString(OrdersHeader + "\n")
	id := 1
	for d := 0; d < days; d++ {
		day := day0.AddDate(0, 0, d)
		for i := 0; i < perDay; i++ {
			// Spread over the day from 08:00, minutes apart, so no two orders of a day collide.
			at := day.Add(8*time.Hour + time.Duration(i*(14*60/perDay)+r.IntN(10))*time.Minute)
			fmt.Fprintf(w, "%d,%s,%.2f\n", id, at.Format("2006-01-02 15:04:05"), 5+float64(r.IntN(11500))/100)
			id++
		}
	}
	return w.Flush()
}
