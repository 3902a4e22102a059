package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// do sends a request to h and returns the recorded answer.
func do(h http.Handler, method, target string, body io.Reader, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, body)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// jsonError returns the "error" of a JSON refusal, failing the test if the
// answer is not one.
func jsonError(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %q", ct, w.Body.String())
	}
	var e errorResponse
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Fatalf("body %q is not {\"error\": …}: %v", w.Body.String(), err)
	}
	return e.Error
}

// results decodes a successful search.
func results(t *testing.T, w *httptest.ResponseRecorder) SearchResponse {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", w.Code, w.Body.String())
	}
	var r SearchResponse
	if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return r
}

func TestSearch(t *testing.T) {
	f := newFake("runs/a", 20)
	f.serving = "tfidf"
	s := NewServer(f, testConfig(), quietLog(t))
	id := f.ids[3]

	r := results(t, do(s, "GET", "/v1/search?image_id="+id+"&k=5&learner=solis-ada", nil))
	if len(r.Results) != 5 || r.Learner != "solis-ada" || r.Run != "runs/a" || r.TookMS < 0 {
		t.Fatalf("GET: %+v", r)
	}
	want := f.rank("solis-ada"+id, 5)
	for i := range want {
		if r.Results[i] != want[i] {
			t.Fatalf("GET result %d: %+v, want %+v", i, r.Results[i], want[i])
		}
	}

	// Without learner, the index's serving one; without k, DefaultK.
	r = results(t, do(s, "GET", "/v1/search?image_id="+id, nil))
	if r.Learner != "tfidf" || len(r.Results) != DefaultK {
		t.Fatalf("GET with defaults: learner %q, %d results", r.Learner, len(r.Results))
	}

	img := pngBytes(t, 32, 24)
	r = results(t, do(s, "POST", "/v1/search?k=7", bytes.NewReader(img), "Content-Type", "image/png"))
	if len(r.Results) != 7 || r.Results[0] != f.rank("tfidf"+string(img), 1)[0] {
		t.Fatalf("POST: %+v", r)
	}

	// The same photo in a form.
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("image", "photo.png")
	fw.Write(img)
	mw.Close()
	r2 := results(t, do(s, "POST", "/v1/search?k=7", &form, "Content-Type", mw.FormDataContentType()))
	if len(r2.Results) != 7 || r2.Results[0] != r.Results[0] {
		t.Fatalf("POST form: %+v, want %+v", r2.Results, r.Results)
	}

	// --default_learner overrides the serving one.
	cfg := testConfig()
	cfg.DefaultLearner = "solis-ada"
	s2 := NewServer(f, cfg, quietLog(t))
	if r := results(t, do(s2, "GET", "/v1/search?image_id="+id, nil)); r.Learner != "solis-ada" {
		t.Fatalf("--default_learner: learner %q", r.Learner)
	}
}

// TestSearchRefusals sends every kind of bad request the issue lists and
// checks the status and the JSON error.
func TestSearchRefusals(t *testing.T) {
	f := newFake("runs/a", 20)
	f.maxPixels = 100
	f.panicID = f.ids[5]
	cfg := testConfig()
	cfg.MaxBody = 1000
	s := NewServer(f, cfg, quietLog(t))
	id := f.ids[0]
	small, large := pngBytes(t, 8, 8), pngBytes(t, 20, 20)
	if len(large) > int(cfg.MaxBody) {
		t.Fatalf("the 20×20 PNG has %d bytes, over the body limit", len(large))
	}
	var emptyForm bytes.Buffer
	mw := multipart.NewWriter(&emptyForm)
	mw.WriteField("k", "3")
	mw.Close()

	for _, c := range []struct {
		name, method, target string
		body                 []byte
		header               []string
		status               int
		says                 string // part of the error message
	}{
		{"not an image", "POST", "/v1/search", []byte("<html>not found</html>"), nil, 415, "not an image"},
		{"empty body", "POST", "/v1/search", nil, nil, 415, "empty body"},
		{"truncated image", "POST", "/v1/search", small[:20], nil, 415, "not an image"},
		{"form without a file", "POST", "/v1/search", emptyForm.Bytes(), []string{"Content-Type", mw.FormDataContentType()}, 415, `no file named "image"`},
		{"too many pixels", "POST", "/v1/search", large, nil, 422, "too many pixels"},
		{"body over max_body", "POST", "/v1/search", make([]byte, 1001), nil, 413, "limit is 1000 bytes"},
		{"unknown image id", "GET", "/v1/search?image_id=nope.png", nil, nil, 404, `unknown image id "nope.png"`},
		{"unknown learner", "GET", "/v1/search?image_id=" + id + "&learner=lsh", nil, nil, 400, `unknown learner "lsh"`},
		{"unknown learner, POST", "POST", "/v1/search?learner=lsh", small, nil, 400, "unknown learner"},
		{"k zero", "GET", "/v1/search?image_id=" + id + "&k=0", nil, nil, 400, "from 1 to 100"},
		{"k over max_k", "GET", "/v1/search?image_id=" + id + "&k=101", nil, nil, 400, "from 1 to 100"},
		{"k not a number", "GET", "/v1/search?image_id=" + id + "&k=ten", nil, nil, 400, `k="ten"`},
		{"k on a POST", "POST", "/v1/search?k=-1", small, nil, 400, "from 1 to 100"},
		{"malformed query", "GET", "/v1/search?image_id=%zz", nil, nil, 400, "query string"},
		{"GET without image_id", "GET", "/v1/search?k=3", nil, nil, 400, "needs image_id"},
		{"POST with image_id", "POST", "/v1/search?image_id=" + id, small, nil, 400, "image_id is for GET"},
		{"PUT", "PUT", "/v1/search", small, nil, 405, "PUT not allowed"},
		{"DELETE", "DELETE", "/v1/search?image_id=" + id, nil, nil, 405, "DELETE not allowed"},
		{"POST healthz", "POST", "/healthz", nil, nil, 405, "not allowed"},
		{"POST metrics", "POST", "/metrics", nil, nil, 405, "not allowed"},
		{"DELETE page", "DELETE", "/", nil, nil, 405, "not allowed"},
		{"no such path", "GET", "/v2/search", nil, nil, 404, "no such page"},
		{"image without id", "GET", "/v1/image", nil, nil, 400, "image_id is required"},
		{"image of unknown id", "GET", "/v1/image?image_id=nope", nil, nil, 404, "unknown image id"},
		{"image size out of range", "GET", "/v1/image?image_id=" + id + "&size=5000", nil, nil, 400, "from 16 to 1024"},
		{"panic", "GET", "/v1/search?image_id=" + f.panicID, nil, nil, 500, "internal error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := do(s, c.method, c.target, bytes.NewReader(c.body), c.header...)
			msg := jsonError(t, w)
			if w.Code != c.status || !strings.Contains(msg, c.says) {
				t.Errorf("%s %s: %d %q, want %d saying %q", c.method, c.target, w.Code, msg, c.status, c.says)
			}
			if w.Code == 405 && w.Header().Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
		})
	}
	if got := s.metrics.panics.Load(); got != 1 {
		t.Errorf("%d panics counted, want 1", got)
	}
	// After all that, the service still answers.
	results(t, do(s, "GET", "/v1/search?image_id="+id, nil))
}

// TestBodyLimitUnknownLength sends a body over the limit without a
// Content-Length: the limit holds while reading.
func TestBodyLimitUnknownLength(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBody = 1000
	s := NewServer(newFake("runs/a", 5), cfg, quietLog(t))
	r := httptest.NewRequest("POST", "/v1/search", io.MultiReader(bytes.NewReader(pngBytes(t, 4, 4)), bytes.NewReader(make([]byte, 5000))))
	r.ContentLength = -1
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if msg := jsonError(t, w); w.Code != 413 {
		t.Fatalf("%d %q, want 413", w.Code, msg)
	}
	// A body that fails to read is a bad request, not a 500.
	r = httptest.NewRequest("POST", "/v1/search", iotest.ErrReader(io.ErrUnexpectedEOF))
	w = httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if msg := jsonError(t, w); w.Code != 400 {
		t.Fatalf("unreadable body: %d %q, want 400", w.Code, msg)
	}
}

// TestBusyAndTimeout fills the one slot: the next request waits QueueWait
// and gets 503; a search past the timeout gets 504; each body names the
// limit and its value, not the context's "deadline exceeded".
func TestBusyAndTimeout(t *testing.T) {
	f := newFake("runs/a", 5)
	entered, release := make(chan struct{}), make(chan struct{})
	f.entered, f.release = entered, release
	cfg := testConfig()
	cfg.MaxInflight = 1
	cfg.QueueWait = 20 * time.Millisecond
	s := NewServer(f, cfg, quietLog(t))
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- do(s, "GET", "/v1/search?image_id="+f.ids[0], nil) }()
	<-entered
	w := do(s, "GET", "/v1/search?image_id="+f.ids[1], nil)
	if msg := jsonError(t, w); w.Code != 503 || msg != "the service is busy, try again: the one slot of searches by id and image reads (--max_inflight) stayed taken for --queue_wait 20ms" {
		t.Fatalf("with the slot taken: %d %q, want 503", w.Code, msg)
	}
	close(release)
	results(t, <-first)
	if got := s.metrics.busy.Load(); got != 1 {
		t.Fatalf("busy counted %d, want 1", got)
	}

	f.release = make(chan struct{}) // never released
	go func() {
		for range entered {
		}
	}()
	cfg.Timeout = 30 * time.Millisecond
	s = NewServer(f, cfg, quietLog(t))
	w = do(s, "POST", "/v1/search", bytes.NewReader(pngBytes(t, 4, 4)))
	if msg := jsonError(t, w); w.Code != 504 || msg != "the search took longer than the service's --timeout 30ms" {
		t.Fatalf("past the timeout: %d %q, want 504 naming --timeout 30ms", w.Code, msg)
	}
	close(entered)
}

func TestHealthz(t *testing.T) {
	s := NewServer(newFake("runs/a", 7), testConfig(), quietLog(t))
	w := do(s, "GET", "/healthz", nil)
	var h struct {
		Status, Run, Learner string
		Images               int
	}
	if err := json.Unmarshal(w.Body.Bytes(), &h); err != nil || w.Code != 200 || h.Status != "ok" || h.Run != "runs/a" || h.Images != 7 || h.Learner != "solis-ada" {
		t.Fatalf("%d %s (%v)", w.Code, w.Body.String(), err)
	}
}
