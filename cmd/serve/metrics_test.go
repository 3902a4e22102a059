package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sample returns the value of the metric line that starts with series.
func sample(t *testing.T, metrics, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(metrics, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no %s in\n%s", series, metrics)
	return 0
}

func TestMetrics(t *testing.T) {
	f := newFake("runs/with \"quotes\"\nand a line", 20)
	s := NewServer(f, testConfig(), quietLog(t))
	for range 3 {
		do(s, "GET", "/v1/search?image_id="+f.ids[0], nil)
	}
	do(s, "GET", "/v1/search?image_id=nope", nil)
	do(s, "POST", "/v1/search", strings.NewReader("text"))
	do(s, "GET", "/no/such/page", nil)
	do(s, "GET", "/healthz", nil)

	w := do(s, "GET", "/metrics", nil)
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %q", w.Code, w.Header().Get("Content-Type"))
	}
	m := w.Body.String()
	for series, want := range map[string]float64{
		`bowline_serve_requests_total{code="200",route="search_id"}`:                    3,
		`bowline_serve_requests_total{code="404",route="search_id"}`:                    1,
		`bowline_serve_requests_total{code="415",route="search_image"}`:                 1,
		`bowline_serve_requests_total{code="404",route="other"}`:                        1,
		`bowline_serve_requests_total{code="200",route="healthz"}`:                      1,
		`bowline_serve_request_duration_seconds_count{route="search_id"}`:               4,
		`bowline_serve_request_duration_seconds_bucket{route="search_id",le="+Inf"}`:    4,
		`bowline_serve_request_duration_seconds_bucket{route="search_image",le="+Inf"}`: 1,
		`bowline_serve_index_images`:                                                    20,
		`bowline_serve_index_learners`:                                                  2,
		`bowline_serve_inflight`:                                                        0,
		`bowline_serve_run_info{run="runs/with \"quotes\"\nand a line"}`:                1,
	} {
		if got := sample(t, m, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if rss := sample(t, m, "process_resident_memory_bytes"); rss < 1<<20 {
		t.Errorf("resident memory %v bytes", rss)
	}
	// The Go runtime's and the process's figures, which show a burst of
	// photos' memory and whether it was given back.
	for _, series := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_heap_released_bytes", "go_memstats_sys_bytes",
		"go_gc_duration_seconds_count", "go_goroutines", "process_cpu_seconds_total", "process_open_fds", "process_virtual_memory_bytes"} {
		if v := sample(t, m, series); v < 0 {
			t.Errorf("%s = %v", series, v)
		}
	}

	// Every line is a comment or a sample; every histogram's buckets grow.
	line := regexp.MustCompile(`^[a-z_]+(\{([a-z]+="([^"\\]|\\.)*",?)+\})? [0-9.e+-]+$`)
	prev := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(w.Body.Bytes()))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			continue
		}
		if !line.MatchString(l) {
			t.Errorf("not an exposition line: %q", l)
			continue
		}
		if strings.Contains(l, "_bucket{") {
			route := l[:strings.Index(l, ",le=")]
			v := sample(t, l, l[:strings.LastIndex(l, " ")])
			if v < prev[route] {
				t.Errorf("bucket counts fall: %q after %v", l, prev[route])
			}
			prev[route] = v
		}
	}
}

// FuzzSearchHandler sends arbitrary query strings, methods and bodies to
// the search API and the page: the handler must never panic, and must
// answer JSON (HTML for the page) with a status the API documents.
func FuzzSearchHandler(f *testing.F) {
	ix := newFake("runs/fuzz", 20)
	ix.maxPixels = 400
	png8 := pngBytes(f, 8, 8)
	for _, c := range []struct {
		method, query string
		body          []byte
	}{
		{"GET", "image_id=" + url.QueryEscape(ix.ids[1]) + "&k=5", nil},
		{"GET", "image_id=" + url.QueryEscape(ix.ids[2]) + "&learner=tfidf&k=100", nil},
		{"GET", "image_id=x&k=0", nil},
		{"GET", "image_id=%zz&k=1", nil},
		{"GET", "k=99999999999999999999", nil},
		{"POST", "k=3", png8},
		{"POST", "learner=solis-ada", pngBytes(f, 30, 30)},
		{"POST", "", []byte("GIF89a\x01\x00\x01\x00")},
		{"POST", "k=2", []byte("\x89PNG\r\n\x1a\n")},
		{"POST", "", nil},
		{"PUT", "", png8},
		{"PAGE", "image_id=" + url.QueryEscape(ix.ids[3]), nil},
		{"PAGE", "k=-1", nil},
	} {
		f.Add(c.method, c.query, c.body)
	}
	cfg := testConfig()
	cfg.MaxBody = 4096
	cfg.MaxK = 100
	s := NewServer(ix, cfg, quietLog(f))
	allowed := map[int]bool{200: true, 400: true, 404: true, 405: true, 413: true, 415: true, 422: true}
	f.Fuzz(func(t *testing.T, method, query string, body []byte) {
		path := "/v1/search"
		if method == "PAGE" {
			method, path = "GET", "/"
		}
		r, err := http.NewRequest(method, "http://serve"+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a client can send
		}
		r.URL.RawQuery = query
		w := httptest.NewRecorder()
		// The inner mux, not ServeHTTP, so that a panic fails the test
		// rather than becoming a 500.
		s.mux.ServeHTTP(w, r)
		if !allowed[w.Code] {
			t.Fatalf("%s %s?%q: status %d: %s", method, path, query, w.Code, w.Body.String())
		}
		ct := w.Header().Get("Content-Type")
		if path == "/" && strings.HasPrefix(ct, "text/html") {
			return
		}
		if ct != "application/json" {
			t.Fatalf("%s %s?%q: Content-Type %q", method, path, query, ct)
		}
		var v map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s %s?%q: body %q: %v", method, path, query, w.Body.String(), err)
		}
		_, isErr := v["error"]
		_, isResult := v["results"]
		if isErr == (w.Code == 200) || isResult != (w.Code == 200) {
			t.Fatalf("%s %s?%q: status %d with %s", method, path, query, w.Code, w.Body.String())
		}
	})
}

// Re-ranked and expanded searches are counted, and the verified results
// they answered.
func TestRefinedMetrics(t *testing.T) {
	f := newFake("runs/a", 20)
	s := NewServer(f, testConfig(), quietLog(t))
	do(s, "GET", "/v1/search?k=5&rerank=3&image_id="+f.ids[0], nil)             // 3 verified
	do(s, "GET", "/v1/search?k=2&rerank=3&expand=true&image_id="+f.ids[1], nil) // 2 verified
	do(s, "GET", "/v1/search?expand=4&image_id="+f.ids[2], nil)
	do(s, "GET", "/v1/search?image_id="+f.ids[3], nil)
	do(s, "GET", "/v1/search?rerank=2&image_id=nope", nil) // refused: not counted
	m := do(s, "GET", "/metrics", nil).Body.String()
	for series, want := range map[string]float64{
		`bowline_serve_refined_searches_total{refine="rerank"}`: 2,
		`bowline_serve_refined_searches_total{refine="expand"}`: 2,
		`bowline_serve_verified_results_total`:                  5,
	} {
		if got := sample(t, m, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
