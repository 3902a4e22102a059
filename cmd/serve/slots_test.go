package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bowline/bowline/transforms/search"
)

// Photo searches have slots of their own: with every photo slot taken by a
// slow upload, the next upload gets 503 but searches by id still answer
// (issue 21: four uploads made every id search 503 for 15 s).
func TestPhotosDoNotStarveIDSearches(t *testing.T) {
	f := newFake("runs/a", 5)
	entered, release := make(chan struct{}), make(chan struct{})
	f.entered, f.release, f.photosOnly = entered, release, true
	cfg := testConfig()
	cfg.MaxInflight, cfg.MaxPhotoInflight = 1, 2
	cfg.QueueWait = 20 * time.Millisecond
	s := NewServer(f, cfg, quietLog(t))
	done := make(chan *httptest.ResponseRecorder)
	for range cfg.MaxPhotoInflight {
		go func() { done <- do(s, "POST", "/v1/search", bytes.NewReader(pngBytes(t, 4, 4))) }()
		<-entered
	}
	if w := do(s, "POST", "/v1/search", bytes.NewReader(pngBytes(t, 4, 4))); w.Code != 503 {
		t.Fatalf("an upload with the photo slots taken: %d %s, want 503", w.Code, w.Body)
	}
	for i := range 3 {
		results(t, do(s, "GET", "/v1/search?image_id="+f.ids[i], nil))
	}
	if w := do(s, "GET", "/readyz", nil); w.Code != 200 || !strings.Contains(w.Body.String(), `"photo_saturated":true`) {
		t.Fatalf("readyz with id slots free: %d %s", w.Code, w.Body)
	}
	close(release)
	for range cfg.MaxPhotoInflight {
		results(t, <-done)
	}
}

// /readyz is 503 while every slot of id searches is taken; /healthz, the
// liveness, stays 200.
func TestReadyz(t *testing.T) {
	f := newFake("runs/a", 5)
	entered, release := make(chan struct{}), make(chan struct{})
	f.entered, f.release = entered, release
	cfg := testConfig()
	cfg.MaxInflight = 1
	s := NewServer(f, cfg, quietLog(t))
	if w := do(s, "GET", "/readyz", nil); w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"ready"`) {
		t.Fatalf("idle: %d %s", w.Code, w.Body)
	}
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- do(s, "GET", "/v1/search?image_id="+f.ids[0], nil) }()
	<-entered
	if w := do(s, "GET", "/readyz", nil); w.Code != 503 || !strings.Contains(w.Body.String(), `"status":"saturated"`) {
		t.Fatalf("saturated: %d %s", w.Code, w.Body)
	}
	if w := do(s, "GET", "/healthz", nil); w.Code != 200 {
		t.Fatalf("healthz while saturated: %d", w.Code)
	}
	close(release)
	results(t, <-done)
}

// The memory of photo searches is returned once the photo slots empty,
// after the last search of a burst, not while one runs.
func TestMemoryReturnedAfterPhotos(t *testing.T) {
	f := newFake("runs/a", 5)
	entered, release := make(chan struct{}), make(chan struct{})
	f.entered, f.release, f.photosOnly = entered, release, true
	cfg := testConfig()
	cfg.MaxPhotoInflight = 2
	s := NewServer(f, cfg, quietLog(t))
	var calls atomic.Int32
	freed := make(chan struct{}, 10)
	s.freeMemory = func() { calls.Add(1); freed <- struct{}{} }
	done := make(chan *httptest.ResponseRecorder)
	for range 2 {
		go func() { done <- do(s, "POST", "/v1/search", bytes.NewReader(pngBytes(t, 4, 4))) }()
		<-entered
	}
	release <- struct{}{} // the first ends, the second still runs
	results(t, <-done)
	results(t, do(s, "GET", "/v1/search?image_id="+f.ids[0], nil))
	if n := calls.Load(); n != 0 {
		t.Fatalf("memory returned %d times with a photo search running", n)
	}
	release <- struct{}{}
	results(t, <-done)
	select {
	case <-freed:
	case <-time.After(10 * time.Second):
		t.Fatal("memory not returned after the last photo search")
	}
}

// A photo without features is 422 "no features found", through the real
// index's error.
func TestNoFeaturesStatus(t *testing.T) {
	err := classify(fmt.Errorf("photo: %w: no keypoint", search.ErrNoFeatures))
	if got := statusOf(err); got != 422 || !errors.Is(err, errNoFeatures) {
		t.Fatalf("status %d for %v", got, err)
	}
}
