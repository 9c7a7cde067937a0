package controllers

import (
	"iter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/ldp-dev/ldp/apis/v1"
	"github.com/ldp-dev/ldp/controllers/tasks"
)

// Metrics are what an operator alerts on, in a Prometheus registry of their own: the windows
// of each object by state (from the status report at each scrape), and, for a watcher, the
// runs it made: windows by outcome, task attempts, run durations, rows written, checks that
// held data back, and the last success of each object.
type Metrics struct {
	Registry *prometheus.Registry

	reconciles  prometheus.Counter
	windows     *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rows        *prometheus.CounterVec
	gates       *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	states      *prometheus.GaugeVec
	invalid     prometheus.Gauge
}

// NewMetrics registers ldp's metrics, with Go's and the process's.
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.reconciles = prometheus.NewCounter(prometheus.CounterOpts{Name: "ldp_reconciles_total", Help: "Reconciles of the watched folder."})
	m.windows = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_windows_total", Help: "Windows run, by object and outcome."}, []string{"object", "outcome"})
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_task_attempts_total", Help: "Attempts of tasks, by object, task and status."}, []string{"object", "task", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ldp_run_duration_seconds", Help: "How long a window's run took, by object.",
		Buckets: prometheus.ExponentialBuckets(0.1, 2, 14)}, []string{"object"})
	m.rows = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_rows_written_total", Help: "Rows written, by object."}, []string{"object"})
	m.gates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_data_gate_blocks_total", Help: "Tasks a failing quality check held back, by object and task."}, []string{"object", "task"})
	m.lastSuccess = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ldp_last_success_timestamp_seconds", Help: "When each object last ran a window successfully."}, []string{"object"})
	m.states = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ldp_windows", Help: "The windows of each object by state, as ldp status counts them."}, []string{"object", "state"})
	m.invalid = prometheus.NewGauge(prometheus.GaugeOpts{Name: "ldp_invalid_specs", Help: "Spec files that are not valid."})
	m.Registry.MustRegister(m.reconciles, m.windows, m.attempts, m.duration, m.rows, m.gates, m.lastSuccess, m.states, m.invalid,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

// Reconciled counts one reconcile of a watcher.
func (m *Metrics) Reconciled() { m.reconciles.Inc() }

// Ran records a window's run.
func (m *Metrics) Ran(r *WindowResult, now time.Time) {
	m.windows.WithLabelValues(r.Workflow, string(outcomeOf(r))).Inc()
	if r.DurationS > 0 {
		m.duration.WithLabelValues(r.Workflow).Observe(r.DurationS)
	}
	for _, t := range r.Tasks {
		if t.Attempts > 0 {
			m.attempts.WithLabelValues(r.Workflow, t.ID, string(t.Status)).Add(float64(t.Attempts))
		}
		if t.Status == v1.Blocked {
			m.gates.WithLabelValues(r.Workflow, t.ID).Inc()
		}
		if rc, ok := t.Detail.(tasks.RowCounter); ok && rc.Rows() > 0 {
			m.rows.WithLabelValues(r.Workflow).Add(float64(rc.Rows()))
		}
	}
	if r.Status == v1.Succeeded {
		m.lastSuccess.WithLabelValues(r.Workflow).Set(float64(now.Unix()))
	}
}

// Observe sets the window gauges: each object's windows by state (states gives its name and
// its summary, as the status report has them) and how many spec files are invalid.
func (m *Metrics) Observe(states iter.Seq2[string, map[string]int], invalid int) {
	m.states.Reset()
	for name, summary := range states {
		for state, n := range summary {
			m.states.WithLabelValues(name, state).Set(float64(n))
		}
	}
	m.invalid.Set(float64(invalid))
}
