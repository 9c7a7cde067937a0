package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"

	statusreport "github.com/ldp-dev/ldp/controllers/report"
	"github.com/ldp-dev/ldp/controllers/web"
	"github.com/ldp-dev/ldp/reconcile"
)

// page: the status page drawing 5 objects x 35,000 hourly windows (four years), in headless
// Chromium, timed from the data's arrival to the grid drawn. The rows change state about once
// in 200 windows, as a lake with a failure now and then does.
func (c *config) page() ([]row, error) {
	chrome := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		logf("   no chromium: the page is not measured")
		return nil, nil
	}
	objects, windows := 5, 35_000
	if c.reps == 1 {
		windows = 3_500
	}
	rep := syntheticReport(objects, windows)
	body, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", web.Assets())
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"bench"`)
		w.Write(body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1600, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	var times []time.Duration
	segments := 0
	for i := 0; i < c.reps; i++ {
		ctx, cancel := chromedp.NewContext(actx)
		ctx, cancelT := context.WithTimeout(ctx, time.Minute)
		err := chromedp.Do(ctx, chromedp.Navigate("http://"+ln.Addr().String()+"/"))
		if err == nil {
			_, err = chromedp.Run(ctx, chromedp.Poll[bool](`window.ldpRender !== undefined`))
		}
		var r drawn
		if err == nil {
			r, err = chromedp.Run(ctx, chromedp.Evaluate[drawn](`window.ldpRender`))
		}
		cancelT()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("the page in chromium: %w", err)
		}
		times = append(times, time.Duration(r.MS*float64(time.Millisecond)))
		segments = r.Segments
	}
	ms := float64(median(times)) / float64(time.Millisecond)
	return []row{{Part: "7. Status page", Figure: fmt.Sprintf("draw %d objects x %s hourly windows (%s cell runs, %d KB of JSON)", objects, count(windows), count(segments), len(body)/1024),
		Value: ms, Unit: "ms", Ref: 1000, RefName: "one second", Goal: 1}}, nil
}

// drawn is what the page says of its last drawing.
type drawn struct {
	MS       float64 `json:"ms"`
	Segments int     `json:"segments"`
}

// syntheticReport is a status report of objects with two tasks each over windows hours.
func syntheticReport(objects, windows int) *statusreport.StatusReport {
	r := rand.New(rand.NewPCG(1, 2))
	rep := &statusreport.StatusReport{Generated: time.Now().UTC(), Invalid: []statusreport.InvalidFile{}}
	states := []reconcile.CellState{reconcile.CellFailed, reconcile.CellBlocked, reconcile.CellRetrying, reconcile.CellMissing}
	for o := 0; o < objects; o++ {
		ob := statusreport.ObjectStatus{Name: fmt.Sprintf("feed_%d", o), File: fmt.Sprintf("specs/feed_%d.json", o), Kind: "Workflow",
			Schedule: "5 * * * *", Timezone: "Europe/Paris", Summary: map[string]int{},
			Windows: statusreport.WindowAxis{Count: windows, First: "2022-01-01T00:00:00Z", Steps: [][2]int64{{3600, int64(windows - 1)}}}}
		for _, task := range []string{"load", "model"} {
			cells := make([]reconcile.CellState, windows)
			for i := range cells {
				cells[i] = reconcile.CellPublished
				if r.IntN(400) == 0 {
					cells[i] = states[r.IntN(len(states))]
				}
			}
			for _, s := range cells {
				ob.Summary[string(s)]++
			}
			ob.Tasks = append(ob.Tasks, statusreport.TaskRow{ID: task, Kind: "pipeline", Cells: reconcile.RunLength(cells)})
		}
		rep.Objects = append(rep.Objects, ob)
	}
	return rep
}
