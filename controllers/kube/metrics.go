package kube

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/ldp-dev/ldp/apis/k8s"
)

// ldp's series on the controller's metrics port, beside controller-runtime's, in its
// registry: the windows of each object by state (as status.windows counts them), the Jobs
// created (one an attempt), and the windows a data gate held back.
var (
	windowGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ldp_windows",
		Help: "The desired windows of each object by state, as its status.windows counts them."}, []string{"kind", "namespace", "object", "state"})
	jobAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_job_attempts_total",
		Help: "Jobs created, one an attempt of a window, by object."}, []string{"kind", "namespace", "object"})
	dataGateBlocks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ldp_data_gate_blocks_total",
		Help: "Windows a data gate held back (a Job that exited 3), by object."}, []string{"kind", "namespace", "object"})
)

func init() {
	// controller-runtime's registry is the process's: every manager of it serves the series.
	ctrlmetrics.Registry.MustRegister(windowGauge, jobAttempts, dataGateBlocks)
}

func objectLabels(o k8s.Object) prometheus.Labels {
	return prometheus.Labels{"kind": o.Kind(), "namespace": o.GetNamespace(), "object": o.GetName()}
}

// setWindowGauges makes the object's series its counts: a state it no longer has is dropped.
func setWindowGauges(o k8s.Object, counts map[string]int32) {
	windowGauge.DeletePartialMatch(objectLabels(o))
	for state, n := range counts {
		windowGauge.WithLabelValues(o.Kind(), o.GetNamespace(), o.GetName(), state).Set(float64(n))
	}
}

// forgetMetrics drops a deleted object's series.
func forgetMetrics(o k8s.Object) {
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{windowGauge, jobAttempts, dataGateBlocks} {
		v.DeletePartialMatch(objectLabels(o))
	}
}
