package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/published"
)

// Parameters are taken as written once: no sign on a number, no parameter
// twice (which one would count was a guess).
func TestParameters(t *testing.T) {
	f := newFake("runs/a", 5)
	s := NewServer(f, testConfig(), quietLog(t))
	for _, target := range []string{
		"/v1/search?k=%2B5&image_id=" + f.ids[0],
		"/v1/search?k=5&k=abc&image_id=" + f.ids[0],
		"/v1/search?k=5&k=6&image_id=" + f.ids[0],
		"/v1/search?image_id=" + f.ids[0] + "&image_id=" + f.ids[1],
		"/v1/search?learner=tfidf&learner=solis-ada&image_id=" + f.ids[0],
		"/v1/image?size=%2B64&image_id=" + f.ids[0],
		"/v1/image?size=64&size=32&image_id=" + f.ids[0],
	} {
		if w := do(s, "GET", target, nil); w.Code != 400 {
			t.Errorf("%s: %d %s, want 400", target, w.Code, w.Body)
		} else {
			jsonError(t, w)
		}
	}
	if got := results(t, do(s, "GET", "/v1/search?k=007&image_id="+f.ids[0], nil)); len(got.Results) != 5-1 && len(got.Results) != 5 {
		t.Errorf("k=007: %d results", len(got.Results))
	}
}

// A query string over 64 KB gets a JSON 414, counted in the metrics, not
// the HTTP server's plain-text 431.
func TestLongQueryString(t *testing.T) {
	f := newFake("runs/a", 5)
	s := NewServer(f, testConfig(), quietLog(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Serve(ctx, ln, s, 5*time.Second, time.Second) }()
	defer func() { cancel(); <-done }()
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/v1/search?image_id=" + strings.Repeat("x", 70<<10))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e errorResponse
	if resp.StatusCode != http.StatusRequestURITooLong || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, "limit") {
		t.Fatalf("70 KB query string: %d %q", resp.StatusCode, body)
	}
	w := do(s, "GET", "/metrics", nil)
	if got := sample(t, w.Body.String(), `bowline_serve_requests_total{code="414",route="search_id"}`); got != 1 {
		t.Fatalf("414 counted %v times", got)
	}
}

// lockedBuffer is a log destination safe for the reloader's goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A garbage published.json fails every check, but is logged once, with
// the run still served; once fixed, the reloads go on.
func TestGarbagePublishedLoggedOnce(t *testing.T) {
	p := newPublisher(t)
	p.publish("night-1")
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rl := NewReloader(p.root, p.load, log)
	ix, err := rl.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(ix, testConfig(), quietLog(t))
	rl.Srv = s
	if err := os.WriteFile(published.Path(p.root), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rl.Watch(ctx, time.Millisecond, nil); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); s.metrics.reloadKO.Load() < 5; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d failed checks", s.metrics.reloadKO.Load())
		}
	}
	cancel()
	<-done
	out := logs.String()
	if n := strings.Count(out, "reload failed"); n != 1 || !strings.Contains(out, "serving=runs/night-1") {
		t.Fatalf("%d failed checks logged %d times:\n%s", s.metrics.reloadKO.Load(), n, out)
	}
}

// rerank=, expand= and near= are read as k is: digits only, bounded,
// once; expand= and near= also take true and false, and near= needs
// rerank=. What is read reaches the index.
func TestRefineParameters(t *testing.T) {
	f := newFake("runs/a", 5)
	f.refined = make(chan Refine, 1)
	cfg := testConfig()
	cfg.MaxRerank, cfg.MaxExpand, cfg.MaxNear = 200, 8, 5
	s := NewServer(f, cfg, quietLog(t))
	id := "&image_id=" + f.ids[0]
	for _, c := range []struct {
		params string
		want   Refine
	}{
		{"", Refine{}},
		{"rerank=0&expand=0", Refine{}},
		{"rerank=100", Refine{Rerank: 100}},
		{"rerank=0200&expand=true", Refine{Rerank: 200, Expand: 8}}, // true: the default count, within the bound
		{"expand=7", Refine{Expand: 7}},
		{"expand=false&rerank=3", Refine{Rerank: 3}},
		{"rerank=100&near=3", Refine{Rerank: 100, NearCopies: 3}},
		{"rerank=100&near=true", Refine{Rerank: 100, NearCopies: 5}}, // true: 10, above the bound
		{"rerank=100&near=false&expand=2", Refine{Rerank: 100, Expand: 2}},
	} {
		w := do(s, "GET", "/v1/search?"+c.params+id, nil)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", c.params, w.Code, w.Body)
		}
		if got := <-f.refined; got != c.want {
			t.Errorf("%s: the index got %+v, want %+v", c.params, got, c.want)
		}
	}
	for _, params := range []string{"rerank=-1", "rerank=%2B5", "rerank=201", "rerank=1e2", "rerank=1&rerank=2",
		"expand=9", "expand=yes", "expand=-3", "expand=1&expand=1", "expand=TRUE",
		"rerank=10&near=6", "rerank=10&near=-1", "rerank=10&near=1&near=1", "near=3", "rerank=0&near=true"} {
		w := do(s, "GET", "/v1/search?"+params+id, nil)
		msg := jsonError(t, w)
		if w.Code != 400 || (!strings.Contains(msg, "rerank") && !strings.Contains(msg, "expand") && !strings.Contains(msg, "near")) {
			t.Errorf("%s: %d %q, want 400 naming the parameter", params, w.Code, msg)
		}
		select {
		case r := <-f.refined:
			t.Errorf("%s: searched with %+v", params, r)
		default:
		}
	}
}

// A run that cannot refine (no geometry files) answers 400 saying why,
// and searches without refinement as before.
func TestRefineRefused(t *testing.T) {
	f := newFake("runs/a", 5)
	f.noGeometry = true
	s := NewServer(f, testConfig(), quietLog(t))
	w := do(s, "GET", "/v1/search?rerank=10&image_id="+f.ids[0], nil)
	if msg := jsonError(t, w); w.Code != 400 || !strings.Contains(msg, "no keypoint geometry") {
		t.Fatalf("rerank without geometry: %d %q", w.Code, msg)
	}
	if got := results(t, do(s, "GET", "/v1/search?image_id="+f.ids[0], nil)); len(got.Results) == 0 {
		t.Fatalf("a plain search: %+v", got)
	}
}

// Verified results carry their inliers in the JSON; the others none.
func TestRefinedResults(t *testing.T) {
	f := newFake("runs/a", 9)
	s := NewServer(f, testConfig(), quietLog(t))
	got := results(t, do(s, "GET", "/v1/search?k=6&rerank=2&image_id="+f.ids[0], nil))
	want := f.found("solis-ada"+f.ids[0], 6, Refine{Rerank: 2}).Hits
	if !slices.Equal(got.Results, want) || got.Results[0].Inliers != 100 || got.Results[2].Inliers != 0 {
		t.Fatalf("results %+v, want %+v", got.Results, want)
	}
	w := do(s, "GET", "/v1/search?k=3&rerank=1&image_id="+f.ids[0], nil)
	if body := w.Body.String(); strings.Count(body, `"inliers":`) != 1 {
		t.Fatalf("one verified result, %d with inliers: %s", strings.Count(body, `"inliers":`), body)
	}
}
