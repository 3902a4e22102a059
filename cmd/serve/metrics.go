package main

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// latencyBuckets are the upper bounds, in seconds, of the request latency
// histogram: fine below 50 ms, where id searches fall, coarse up to the
// seconds an image search with SIFT can take.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics are the service's own metrics, in a registry of their own beside
// the Go runtime's and the process's collectors (heap, GC, goroutines,
// resident memory, CPU, file descriptors), so that the memory a burst of
// photos takes shows beside the requests that took it. The counters the
// handlers bump are atomics read at scrape time.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	inflight atomic.Int64
	busy     atomic.Uint64
	panics   atomic.Uint64
	reloadOK atomic.Uint64
	reloadKO atomic.Uint64
	// Searches answered re-ranked and expanded, and their results
	// verified spatially: how much the service's CPU goes to
	// verification, and how often it finds a match.
	reranked, expanded, near, verified atomic.Uint64

	index atomic.Pointer[indexInfo]
}

// indexInfo is what the metrics show of the index in service.
type indexInfo struct {
	run            string
	images, memory int64
	learners       int
	loaded         time.Time
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bowline_serve_requests_total", Help: "HTTP requests answered, by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "bowline_serve_request_duration_seconds", Help: "Time from a request's arrival to its answer, by route.",
			Buckets: latencyBuckets,
		}, []string{"route"}),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, labels prometheus.Labels, v *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(v.Load()) })
	}
	const reloads = "Loads of a newly published run, by result; a failed one keeps the run in service."
	const refined = "Searches answered with rerank (spatial verification of the best results), expand (query expansion) or near (near-copy candidates verified)."
	m.reg.MustRegister(
		m.requests, m.latency,
		gauge("bowline_serve_inflight", "Searches and image reads running now.", func() float64 { return float64(m.inflight.Load()) }),
		counter("bowline_serve_busy_total", "Requests refused with 503 because every slot stayed taken.", nil, &m.busy),
		counter("bowline_serve_panics_total", "Handler panics answered with 500.", nil, &m.panics),
		counter("bowline_serve_reloads_total", reloads, prometheus.Labels{"result": "ok"}, &m.reloadOK),
		counter("bowline_serve_reloads_total", reloads, prometheus.Labels{"result": "failed"}, &m.reloadKO),
		counter("bowline_serve_refined_searches_total", refined, prometheus.Labels{"refine": "rerank"}, &m.reranked),
		counter("bowline_serve_refined_searches_total", refined, prometheus.Labels{"refine": "expand"}, &m.expanded),
		counter("bowline_serve_refined_searches_total", refined, prometheus.Labels{"refine": "near"}, &m.near),
		counter("bowline_serve_verified_results_total", "Results answered that spatial verification verified.", nil, &m.verified),
		indexCollector{m},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// observe counts a finished request.
func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// refined counts a search answered with r, of results found.
func (m *metrics) refined(r Refine, found Found) {
	if r.Rerank > 0 {
		m.reranked.Add(1)
	}
	if r.Expand > 0 {
		m.expanded.Add(1)
	}
	if r.NearCopies > 0 {
		m.near.Add(1)
	}
	for _, h := range found.Hits {
		if h.Inliers > 0 {
			m.verified.Add(1)
		}
	}
}

// setIndex records the index put in service.
func (m *metrics) setIndex(ix Index) {
	m.index.Store(&indexInfo{
		run:      ix.Run(),
		images:   int64(ix.Images()),
		memory:   ix.MemoryBytes(),
		learners: len(ix.Learners()),
		loaded:   time.Now(),
	})
}

// indexCollector reports the index in service, which a reload swaps: its
// run is a label, so the series are made at each scrape.
type indexCollector struct{ m *metrics }

var (
	runInfoDesc  = prometheus.NewDesc("bowline_serve_run_info", "The run in service (always 1).", []string{"run"}, nil)
	runLoaded    = prometheus.NewDesc("bowline_serve_run_loaded_timestamp_seconds", "When the run in service was put in service.", nil, nil)
	indexImages  = prometheus.NewDesc("bowline_serve_index_images", "Images in the index in service.", nil, nil)
	indexLearner = prometheus.NewDesc("bowline_serve_index_learners", "Learners in the index in service.", nil, nil)
	indexMemory  = prometheus.NewDesc("bowline_serve_index_memory_bytes", "Memory held by the index in service.", nil, nil)
)

func (c indexCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{runInfoDesc, runLoaded, indexImages, indexLearner, indexMemory} {
		ch <- d
	}
}

func (c indexCollector) Collect(ch chan<- prometheus.Metric) {
	ix := c.m.index.Load()
	if ix == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(runInfoDesc, prometheus.GaugeValue, 1, ix.run)
	ch <- prometheus.MustNewConstMetric(runLoaded, prometheus.GaugeValue, float64(ix.loaded.Unix()))
	ch <- prometheus.MustNewConstMetric(indexImages, prometheus.GaugeValue, float64(ix.images))
	ch <- prometheus.MustNewConstMetric(indexLearner, prometheus.GaugeValue, float64(ix.learners))
	ch <- prometheus.MustNewConstMetric(indexMemory, prometheus.GaugeValue, float64(ix.memory))
}

// handleMetrics answers GET /metrics in the Prometheus text format (or
// what the scraper's Accept header asks for).
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	s.metricsHandler.ServeHTTP(w, r)
}

// newMetricsHandler serves m's registry.
func newMetricsHandler(m *metrics) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
