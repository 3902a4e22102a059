package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latencyBuckets are the upper bounds, in seconds, of the request latency
// histogram: fine below 50 ms, where id searches fall, coarse up to the
// seconds an image search with SIFT can take.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// metrics are the service's counters, written out by hand in Prometheus's
// text exposition format: the module graph has no Prometheus client, and a
// handful of counters do not need one.
type metrics struct {
	mu       sync.Mutex
	requests map[routeCode]uint64
	latency  map[string]*histogram

	inflight atomic.Int64
	busy     atomic.Uint64
	panics   atomic.Uint64
	reloadOK atomic.Uint64
	reloadKO atomic.Uint64

	index atomic.Pointer[indexInfo]
}

type routeCode struct {
	route string
	code  int
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

// indexInfo is what the metrics show of the index in service.
type indexInfo struct {
	run            string
	images, memory int64
	learners       int
	loaded         time.Time
}

func newMetrics() *metrics {
	return &metrics{requests: map[routeCode]uint64{}, latency: map[string]*histogram{}}
}

// observe counts a finished request.
func (m *metrics) observe(route string, code int, d time.Duration) {
	sec := d.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests[routeCode{route, code}]++
	h := m.latency[route]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		m.latency[route] = h
	}
	i := sort.SearchFloat64s(latencyBuckets, sec) // first bound ≥ sec
	h.counts[i]++
	h.sum += sec
	h.n++
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

// handleMetrics answers GET /metrics.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	var b bytes.Buffer
	s.metrics.write(&b)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

// write writes every metric in the text exposition format.
func (m *metrics) write(w io.Writer) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	head := func(name, typ, help string) {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}

	m.mu.Lock()
	keys := make([]routeCode, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].route != keys[j].route {
			return keys[i].route < keys[j].route
		}
		return keys[i].code < keys[j].code
	})
	head("bowline_serve_requests_total", "counter", "HTTP requests answered, by route and status code.")
	for _, k := range keys {
		fmt.Fprintf(bw, "bowline_serve_requests_total{route=%q,code=\"%d\"} %d\n", k.route, k.code, m.requests[k])
	}
	routes := make([]string, 0, len(m.latency))
	for r := range m.latency {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	head("bowline_serve_request_duration_seconds", "histogram", "Time from a request's arrival to its answer, by route.")
	for _, r := range routes {
		h := m.latency[r]
		var cum uint64
		for i, le := range latencyBuckets {
			cum += h.counts[i]
			fmt.Fprintf(bw, "bowline_serve_request_duration_seconds_bucket{route=%q,le=%q} %d\n", r, formatFloat(le), cum)
		}
		cum += h.counts[len(latencyBuckets)]
		fmt.Fprintf(bw, "bowline_serve_request_duration_seconds_bucket{route=%q,le=\"+Inf\"} %d\n", r, cum)
		fmt.Fprintf(bw, "bowline_serve_request_duration_seconds_sum{route=%q} %s\n", r, formatFloat(h.sum))
		fmt.Fprintf(bw, "bowline_serve_request_duration_seconds_count{route=%q} %d\n", r, h.n)
	}
	m.mu.Unlock()

	head("bowline_serve_inflight", "gauge", "Searches and image reads running now.")
	fmt.Fprintf(bw, "bowline_serve_inflight %d\n", m.inflight.Load())
	head("bowline_serve_busy_total", "counter", "Requests refused with 503 because every slot stayed taken.")
	fmt.Fprintf(bw, "bowline_serve_busy_total %d\n", m.busy.Load())
	head("bowline_serve_panics_total", "counter", "Handler panics answered with 500.")
	fmt.Fprintf(bw, "bowline_serve_panics_total %d\n", m.panics.Load())
	head("bowline_serve_reloads_total", "counter", "Loads of a newly published run, by result; a failed one keeps the run in service.")
	fmt.Fprintf(bw, "bowline_serve_reloads_total{result=\"ok\"} %d\n", m.reloadOK.Load())
	fmt.Fprintf(bw, "bowline_serve_reloads_total{result=\"failed\"} %d\n", m.reloadKO.Load())

	if ix := m.index.Load(); ix != nil {
		head("bowline_serve_run_info", "gauge", "The run in service (always 1).")
		fmt.Fprintf(bw, "bowline_serve_run_info{run=\"%s\"} 1\n", labelValue(ix.run))
		head("bowline_serve_run_loaded_timestamp_seconds", "gauge", "When the run in service was put in service.")
		fmt.Fprintf(bw, "bowline_serve_run_loaded_timestamp_seconds %d\n", ix.loaded.Unix())
		head("bowline_serve_index_images", "gauge", "Images in the index in service.")
		fmt.Fprintf(bw, "bowline_serve_index_images %d\n", ix.images)
		head("bowline_serve_index_learners", "gauge", "Learners in the index in service.")
		fmt.Fprintf(bw, "bowline_serve_index_learners %d\n", ix.learners)
		head("bowline_serve_index_memory_bytes", "gauge", "Memory held by the index in service.")
		fmt.Fprintf(bw, "bowline_serve_index_memory_bytes %d\n", ix.memory)
	}

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	head("go_goroutines", "gauge", "Goroutines that currently exist.")
	fmt.Fprintf(bw, "go_goroutines %d\n", runtime.NumGoroutine())
	head("go_memstats_heap_alloc_bytes", "gauge", "Bytes of allocated heap objects.")
	fmt.Fprintf(bw, "go_memstats_heap_alloc_bytes %d\n", ms.HeapAlloc)
	if rss, ok := residentBytes(); ok {
		head("process_resident_memory_bytes", "gauge", "Resident set size in bytes.")
		fmt.Fprintf(bw, "process_resident_memory_bytes %d\n", rss)
	}
}

// residentBytes reads the process's resident set size from /proc (Linux).
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// labelValue escapes a label value as the exposition format wants:
// backslash, double quote and line feed.
func labelValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// formatFloat writes a float as Prometheus reads it.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
