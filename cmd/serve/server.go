package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bowline/bowline/cmd/internal/cmdline"
)

// Index is what the service needs of a loaded run: *search.Index through
// searchIndex, or a fake in tests. It must be safe for concurrent use.
type Index interface {
	Run() string
	Learners() []string
	// ServingLearner is the learner of requests that name none, unless
	// --default_learner says otherwise.
	ServingLearner() string
	Images() int
	MemoryBytes() int64
	// URI is where the corpus image is (local path or gs://), for
	// thumbnails.
	URI(imageID string) (string, bool)
	// Label is the indexed image's label, shown with results.
	Label(imageID string) (string, bool)
	// SearchID and SearchImage re-rank and expand as r asks; the zero
	// Refine is the learner's ranking as it is.
	SearchID(learner, imageID string, k int, r Refine) (Found, error)
	SearchImage(ctx context.Context, learner string, data []byte, k int, r Refine) (Found, error)
}

// Refine is a request's rerank=, expand= and near= (search.Refine): how
// many of the best results are verified spatially and put first, most
// inliers first, with how many verified results the query is averaged and
// searched again, and how many near-copy candidates are verified with
// them.
type Refine struct {
	Rerank, Expand, NearCopies int
}

// Found is a search's answer: the best matching images (at most k), and
// how many matched in all. Only matches are results: an image that shares
// nothing with the query (score 0 under a learner of bags of words) is
// none, so k results are never padded with ties in id order.
type Found struct {
	Hits    []Hit
	Matched int
}

// Hit is one result: an indexed image, its label and its similarity to the
// query.
type Hit struct {
	ImageID string  `json:"image_id"`
	Label   string  `json:"label,omitempty"`
	Score   float64 `json:"score"`
	// Inliers is, for a result that spatial verification verified (a
	// request with rerank or expand), the number of the query's keypoints
	// it found where one affine map of the query puts them; absent
	// otherwise.
	Inliers int `json:"inliers,omitempty"`
}

// Errors an Index's errors wrap, one per kind of bad request, so that the
// handler can choose the status.
var (
	errUnknownImage   = errors.New("unknown image id")
	errUnknownLearner = errors.New("unknown learner")
	errBadImage       = errors.New("not an image the service can decode")
	errTooLarge       = errors.New("image has too many pixels")
	errNoFeatures     = errors.New("no features found")
	// errCannotRefine: the run or the learner cannot do a request's
	// rerank or expand (a run without geometry files, or expansion of a
	// learner of binary codes).
	errCannotRefine = errors.New("cannot refine")
)

// Config holds the service's limits.
type Config struct {
	// MaxBody is the largest request body accepted, in bytes.
	MaxBody int64
	// MaxPixels is the pixel limit the index was opened with; the page's
	// thumbnails of uploads decode under it too.
	MaxPixels int64
	// Timeout bounds each request's work (its context's deadline).
	Timeout time.Duration
	// MaxInflight is the number of searches by id and image reads running
	// at once; QueueWait is how long a request waits for a slot before it
	// gets 503.
	MaxInflight int
	QueueWait   time.Duration
	// MaxPhotoInflight is the number of photo searches running at once,
	// in slots of their own: a photo takes a core and up to hundreds of MB
	// for up to Timeout, an id search a few milliseconds, so photos must
	// neither take the id searches' slots nor decode without bound.
	MaxPhotoInflight int
	// MemoryIdle is how long the photo slots stay empty before the memory
	// of the photos described is returned to the operating system (a
	// large photo's SIFT scratch, hundreds of MB, would otherwise stay for
	// minutes); 0 returns it as soon as the last photo search ends.
	MemoryIdle time.Duration
	// DefaultLearner answers requests that name none; "" means the
	// index's serving learner.
	DefaultLearner string
	// MaxK is the largest k a request may ask for.
	MaxK int
	// MaxRerank, MaxExpand and MaxNear are the largest rerank, expand and
	// near a request may ask for: each result verified costs up to a few
	// tens of microseconds, each expansion result a search's worth of
	// postings.
	MaxRerank, MaxExpand, MaxNear int
	// ImageRoot is the directory relative image URIs are read from: a job
	// given a relative input records its images' paths relative to where
	// it ran ("": the working directory).
	ImageRoot string
}

// DefaultK is the number of results when a request does not say.
const DefaultK = 10

// The bounds of rerank and expand when the configuration gives none: a
// thousand verifications are some tens of milliseconds of a core.
const (
	DefaultMaxRerank = 1000
	DefaultMaxExpand = 100
	DefaultMaxNear   = 100
)

// Server is the HTTP search service. Its index is swapped whole
// (SetIndex): a request reads the pointer once and finishes on the index it
// started with.
type Server struct {
	cfg     Config
	log     *slog.Logger
	cur     atomic.Pointer[loaded]
	slots   chan struct{} // of id searches and image reads
	photos  chan struct{} // of photo searches
	metrics *metrics
	mux     *http.ServeMux

	metricsHandler http.Handler

	// photoGen counts the photo searches ended, so that only the last of
	// a burst returns the memory; freeMemory returns it (returnMemory, or
	// a test's hook).
	photoGen   atomic.Int64
	freeMemory func()
}

// loaded is an index and when it was put in service.
type loaded struct {
	ix    Index
	since time.Time
}

// NewServer returns a server answering from ix.
func NewServer(ix Index, cfg Config, log *slog.Logger) *Server {
	if cfg.MaxInflight < 1 {
		panic(fmt.Sprintf("serve: MaxInflight %d", cfg.MaxInflight))
	}
	if cfg.MaxPhotoInflight < 1 {
		cfg.MaxPhotoInflight = 1
	}
	if cfg.MaxK < 1 {
		cfg.MaxK = 1000
	}
	if cfg.MaxRerank < 1 {
		cfg.MaxRerank = DefaultMaxRerank
	}
	if cfg.MaxExpand < 1 {
		cfg.MaxExpand = DefaultMaxExpand
	}
	if cfg.MaxNear < 1 {
		cfg.MaxNear = DefaultMaxNear
	}
	s := &Server{cfg: cfg, log: log, slots: make(chan struct{}, cfg.MaxInflight), photos: make(chan struct{}, cfg.MaxPhotoInflight),
		metrics: newMetrics(), freeMemory: returnMemory}
	s.metricsHandler = newMetricsHandler(s.metrics)
	s.SetIndex(ix)
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/v1/search", s.handleSearch)
	s.mux.HandleFunc("/v1/image", s.handleImage)
	s.mux.HandleFunc("/healthz", s.handleHealth)
	s.mux.HandleFunc("/readyz", s.handleReady)
	s.mux.HandleFunc("/metrics", s.handleMetrics)
	s.mux.HandleFunc("/{$}", s.handlePage)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such page: %s", r.URL.Path)
	})
	return s
}

// SetIndex puts ix in service; requests already running finish on the
// index they started with.
func (s *Server) SetIndex(ix Index) {
	s.cur.Store(&loaded{ix: ix, since: time.Now()})
	s.metrics.setIndex(ix)
}

// Index returns the index in service.
func (s *Server) Index() Index { return s.cur.Load().ix }

// current returns the index in service with its serving learner.
func (s *Server) current() *loaded { return s.cur.Load() }

// ServeHTTP routes the request, times and counts it, and turns a panic into
// a 500 so that no input brings the service down.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	route := routeOf(r)
	if len(r.URL.RawQuery) > maxQuery {
		defer func() { s.metrics.observe(route, sw.code(), time.Since(start)) }()
		writeError(sw, http.StatusRequestURITooLong, "query string of %d bytes: the limit is %d", len(r.URL.RawQuery), maxQuery)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.metrics.panics.Add(1)
			s.log.Error("handler panicked", "method", r.Method, "url", r.URL.String(), "panic", p, "stack", string(debug.Stack()))
			if sw.status == 0 {
				writeError(sw, http.StatusInternalServerError, "internal error")
			}
		}
		s.metrics.observe(route, sw.code(), time.Since(start))
	}()
	s.mux.ServeHTTP(sw, r)
}

// maxQuery is the longest query string answered: every parameter is short,
// and Serve's MaxHeaderBytes leaves room for longer ones so that they get
// a JSON 414 counted in the metrics rather than the HTTP server's plain
// text 431.
const maxQuery = 64 << 10

// routeOf names the request's route for the metrics: a fixed set, so that
// arbitrary paths cannot grow the label space.
func routeOf(r *http.Request) string {
	switch r.URL.Path {
	case "/v1/search":
		if r.Method == http.MethodPost {
			return "search_image"
		}
		return "search_id"
	case "/v1/image":
		return "image"
	case "/healthz":
		return "healthz"
	case "/readyz":
		return "readyz"
	case "/metrics":
		return "metrics"
	case "/":
		return "page"
	}
	return "other"
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// SearchResponse is the body of a successful search.
type SearchResponse struct {
	Results []Hit `json:"results"`
	// Matched is the number of images that match the query in all, of
	// which Results are the best k.
	Matched int     `json:"matched"`
	TookMS  float64 `json:"took_ms"`
	Learner string  `json:"learner"`
	Run     string  `json:"run"`
}

// errorResponse is the body of every refusal.
type errorResponse struct {
	Error string `json:"error"`
}

// handleSearch answers GET /v1/search?image_id=… and POST /v1/search with
// the image as body.
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed: GET with image_id, or POST the image", r.Method)
		return
	}
	q, err := s.parseQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var data []byte
	if r.Method == http.MethodPost {
		if q.imageID != "" {
			writeError(w, http.StatusBadRequest, "POST searches with the image in the body; image_id is for GET")
			return
		}
		if data, err = s.readImage(w, r); err != nil {
			writeError(w, statusOf(err), "%v", err)
			return
		}
	} else if q.imageID == "" {
		writeError(w, http.StatusBadRequest, "GET needs image_id (or POST the image)")
		return
	}
	found, ix, learner, err := s.search(r.Context(), q, data)
	if err != nil {
		s.refuse(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, SearchResponse{
		Results: found.Hits,
		Matched: found.Matched,
		TookMS:  float64(time.Since(start).Microseconds()) / 1000,
		Learner: learner,
		Run:     ix.Run(),
	})
}

// query is a search request's parameters.
type query struct {
	imageID, learner string
	k                int
	refine           Refine
}

// parseQuery reads k, learner, image_id, rerank, expand and near.
func (s *Server) parseQuery(r *http.Request) (query, error) {
	v, err := urlQuery(r)
	if err != nil {
		return query{}, err
	}
	if err := once(v, "k", "image_id", "learner", "rerank", "expand", "near"); err != nil {
		return query{}, err
	}
	q := query{k: DefaultK, imageID: v.Get("image_id"), learner: v.Get("learner")}
	if err := s.parseNumbers(&q, v.Get); err != nil {
		return query{}, err
	}
	return q, nil
}

// parseNumbers reads k, rerank, expand and near through get (of the query
// string, or of the page's form): digits only, bounded; expand and near
// may also be true (defaultExpand, defaultNear) or false (0).
func (s *Server) parseNumbers(q *query, get func(string) string) error {
	if ks := get("k"); ks != "" {
		k, err := cmdline.WholeNumber(ks)
		if err != nil || k < 1 || k > s.cfg.MaxK {
			return fmt.Errorf("%w: k=%.20q: want a whole number from 1 to %d", errBadRequest, ks, s.cfg.MaxK)
		}
		q.k = k
	}
	if rs := get("rerank"); rs != "" {
		n, err := cmdline.WholeNumber(rs)
		if err != nil || n > s.cfg.MaxRerank {
			return fmt.Errorf("%w: rerank=%.20q: want a whole number from 0 to %d (how many of the best results to verify)", errBadRequest, rs, s.cfg.MaxRerank)
		}
		q.refine.Rerank = n
	}
	var err error
	if q.refine.Expand, err = countOrSwitch(get, "expand", defaultExpand, s.cfg.MaxExpand, "the most verified results to expand the query with"); err != nil {
		return err
	}
	if q.refine.NearCopies, err = countOrSwitch(get, "near", defaultNear, s.cfg.MaxNear, "the near-copy candidates verified with rerank"); err != nil {
		return err
	}
	if q.refine.NearCopies > 0 && q.refine.Rerank == 0 {
		return fmt.Errorf("%w: near=%d needs rerank=N, whose verification the near copies join", errBadRequest, q.refine.NearCopies)
	}
	return nil
}

// countOrSwitch reads parameter name through get: absent is 0, else what
// cmdline.CountOrSwitch reads, true being def (at most max), bounded by
// max; what says what it counts, for the error.
func countOrSwitch(get func(string) string, name string, def, max int, what string) (int, error) {
	v := get(name)
	if v == "" {
		return 0, nil
	}
	n, err := cmdline.CountOrSwitch(v, min(def, max))
	if err != nil || n > max {
		return 0, fmt.Errorf("%w: %s=%.20q: want true, false or a whole number from 0 to %d (%s)", errBadRequest, name, v, max, what)
	}
	return n, nil
}

// once refuses a query string that gives one of names more than once: which
// value would count is a guess (Get takes the first).
func once(v url.Values, names ...string) error {
	for _, n := range names {
		if len(v[n]) > 1 {
			return fmt.Errorf("%w: %s given %d times: give it once", errBadRequest, n, len(v[n]))
		}
	}
	return nil
}

// search runs a query on the index in service, within the concurrency
// limit and the request timeout, and returns the index it used.
func (s *Server) search(ctx context.Context, q query, data []byte) (Found, Index, string, error) {
	cur := s.current()
	ix := cur.ix
	learner := q.learner
	if learner == "" {
		learner = s.defaultLearner(cur)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	slots := s.slots
	if data != nil {
		slots = s.photos
	}
	release, err := s.acquire(ctx, slots)
	if err != nil {
		return Found{Hits: []Hit{}}, ix, learner, err
	}
	defer func() {
		release()
		if data != nil {
			s.photoDone()
		}
	}()
	var found Found
	if data != nil {
		found, err = ix.SearchImage(ctx, learner, data, q.k, q.refine)
	} else {
		found, err = ix.SearchID(learner, q.imageID, q.k, q.refine)
	}
	if err == nil {
		s.metrics.refined(q.refine, found)
	}
	if found.Hits == nil {
		found.Hits = []Hit{}
	}
	return found, ix, learner, s.explain(err, "the search")
}

// explain gives err, of what (a search, an image read), the words a
// caller needs in place of the context's: that it took longer than
// --timeout, and how long that is, or that it was cancelled. It keeps err
// for errors.Is, and so its status (statusOf).
func (s *Server) explain(err error, what string) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return explained{fmt.Sprintf("%s took longer than the service's --timeout %v", what, s.cfg.Timeout), err}
	case errors.Is(err, context.Canceled):
		return explained{what + " was cancelled: the client went away or the service is stopping", err}
	}
	return err
}

// explained is an error with a message of its own in place of err's.
type explained struct {
	msg string
	err error
}

func (e explained) Error() string { return e.msg }
func (e explained) Unwrap() error { return e.err }

// defaultLearner is the learner of requests that name none: the one
// --default_learner names, or else the index's serving learner.
func (s *Server) defaultLearner(cur *loaded) string {
	if s.cfg.DefaultLearner != "" {
		return s.cfg.DefaultLearner
	}
	return cur.ix.ServingLearner()
}

// errBusy is the refusal of a request that found every slot taken.
var errBusy = errors.New("the service is busy, try again")

// acquire takes one of slots (s.slots or s.photos), waiting at most
// QueueWait (and never past ctx's deadline). Its error, an errBusy, says
// which slots, how many, and how long it waited.
func (s *Server) acquire(ctx context.Context, slots chan struct{}) (release func(), err error) {
	select {
	case slots <- struct{}{}:
	default:
		kind := "slot of searches by id and image reads (--max_inflight)"
		if slots == s.photos {
			kind = "slot of photo searches (--max_photo_inflight)"
		}
		which := "the one " + kind
		if n := cap(slots); n > 1 {
			which = fmt.Sprintf("all %d %s", n, strings.Replace(kind, "slot", "slots", 1))
		}
		t := time.NewTimer(s.cfg.QueueWait)
		defer t.Stop()
		select {
		case slots <- struct{}{}:
		case <-t.C:
			s.metrics.busy.Add(1)
			return nil, fmt.Errorf("%w: %s stayed taken for --queue_wait %v", errBusy, which, s.cfg.QueueWait)
		case <-ctx.Done():
			s.metrics.busy.Add(1)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: %s stayed taken for the request's --timeout %v", errBusy, which, s.cfg.Timeout)
			}
			return nil, fmt.Errorf("%w: %s stayed taken until the client went away", errBusy, which)
		}
	}
	s.metrics.inflight.Add(1)
	return func() {
		s.metrics.inflight.Add(-1)
		<-slots
	}, nil
}

// photoDone returns the memory of photo searches once the photo slots have
// stayed empty for MemoryIdle: a burst of large photos leaves the SIFT
// scratch of each (hundreds of MB) in the search package's pool and the
// heap, which the runtime would otherwise give back only over minutes.
// Every photo search moves photoGen on, so only the timer of the last one
// of a burst returns it.
func (s *Server) photoDone() {
	gen := s.photoGen.Add(1)
	time.AfterFunc(s.cfg.MemoryIdle, func() {
		if s.photoGen.Load() == gen && len(s.photos) == 0 {
			s.freeMemory()
		}
	})
}

// returnMemory returns the free heap to the operating system. Twice: the
// first collection only moves pooled scratch to sync.Pool's victim cache,
// the second frees it.
func returnMemory() {
	debug.FreeOSMemory()
	debug.FreeOSMemory()
}

// errBodyTooLarge marks a body over MaxBody.
var errBodyTooLarge = errors.New("request body too large")

// readImage reads the image of a POST: the body itself or, from a form,
// the file part named "image". The body may hold at most MaxBody bytes.
func (s *Server) readImage(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > s.cfg.MaxBody {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d bytes", errBodyTooLarge, r.ContentLength, s.cfg.MaxBody)
	}
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	var src io.Reader = body
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		part, err := formFile(body, params["boundary"])
		if err != nil {
			return nil, s.bodyErr(err)
		}
		src = part
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, s.bodyErr(err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty body: POST the image's bytes", errBadImage)
	}
	return data, nil
}

// bodyErr classifies an error reading the body.
func (s *Server) bodyErr(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return fmt.Errorf("%w: the limit is %d bytes", errBodyTooLarge, s.cfg.MaxBody)
	}
	if errors.Is(err, errBadImage) {
		return err
	}
	return fmt.Errorf("%w: reading the body: %v", errBadRequest, err)
}

// errBadRequest marks a request the service cannot parse.
var errBadRequest = errors.New("bad request")

// urlQuery parses the query string, refusing a malformed one rather than
// dropping the parameters it cannot parse as URL.Query does.
func urlQuery(r *http.Request) (url.Values, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: query string: %v", errBadRequest, err)
	}
	return v, nil
}

// formFile returns the content of a multipart form's file part named
// "image".
func formFile(body io.Reader, boundary string) (io.Reader, error) {
	if boundary == "" {
		return nil, fmt.Errorf("%w: multipart form without a boundary", errBadRequest)
	}
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: the form has no file named \"image\"", errBadImage)
		}
		if err != nil {
			return nil, err
		}
		if p.FormName() == "image" && p.FileName() != "" {
			return p, nil
		}
	}
}

// statusOf is the HTTP status of a search's error.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errBodyTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errTooLarge), errors.Is(err, errNoFeatures):
		return http.StatusUnprocessableEntity
	case errors.Is(err, errBadImage):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, errUnknownImage):
		return http.StatusNotFound
	case errors.Is(err, errUnknownLearner), errors.Is(err, errBadRequest), errors.Is(err, errCannotRefine):
		return http.StatusBadRequest
	case errors.Is(err, errBusy):
		return http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		// The client went away or the service is stopping.
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// refuse answers a failed search with its status; a failure of the
// service's own (500) is logged, as a client's mistake is not.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		s.log.Error("search failed", "url", r.URL.String(), "err", err)
	}
	writeError(w, status, "%v", err)
}

// writeJSON writes v as the response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("serve: encoding a response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError writes {"error": message}.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, errorResponse{Error: strings.ToValidUTF8(fmt.Sprintf(format, args...), "\uFFFD")})
}

// handleReady answers whether the service can take a search now: 503 when
// every slot of id searches is taken (photo searches have slots of their
// own, reported beside), so that a load balancer sends queries elsewhere
// while /healthz, the process's liveness, stays 200.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	busy, photos := len(s.slots), len(s.photos)
	status, code := "ready", http.StatusOK
	if busy >= cap(s.slots) {
		status, code = "saturated", http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{
		"status":          status,
		"searches":        busy,
		"max_searches":    cap(s.slots),
		"photo_searches":  photos,
		"max_photos":      cap(s.photos),
		"photo_saturated": photos >= cap(s.photos),
	})
}

// handleHealth answers 200 with the run in service.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	cur := s.cur.Load()
	writeJSON(w, http.StatusOK, map[string]any{
		"status":   "ok",
		"run":      cur.ix.Run(),
		"images":   cur.ix.Images(),
		"learners": cur.ix.Learners(),
		"learner":  s.defaultLearner(cur),
		"since":    cur.since.UTC().Format(time.RFC3339),
	})
}
