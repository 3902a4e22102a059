package main

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

//go:embed page.html
var pageHTML string

// pageTmpl is the search page: a form to upload a photo and the results as
// labelled thumbnails, each a link that searches by it. It is rendered on
// the server and needs no script and no asset but the service's own
// thumbnails; the form is sent by its button, once learner and k are set.
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"inc": func(i int) int { return i + 1 },
}).Parse(pageHTML))

// pageData is what the page shows.
type pageData struct {
	Run      string
	Images   int
	Learners []string
	Learner  string
	K, MaxK  int
	// Rerank, Expand and Near are the search's (Refine), carried by the
	// form and the results' links.
	Rerank, Expand, Near          int
	MaxRerank, MaxExpand, MaxNear int
	QueryID                       string
	QueryThumb                    template.URL // the uploaded photo as a data: URL
	Results                       []Hit
	Matched                       int
	Searched                      bool // a search was answered (Results may still be empty)
	TookMS                        float64
	Error                         string
}

// handlePage answers GET / (the form; with image_id, a search by it) and
// POST / (a search by the uploaded photo).
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	cur := s.current()
	ix := cur.ix
	d := pageData{Run: ix.Run(), Images: ix.Images(), Learners: ix.Learners(), Learner: s.defaultLearner(cur), K: DefaultK, MaxK: s.cfg.MaxK,
		MaxRerank: s.cfg.MaxRerank, MaxExpand: s.cfg.MaxExpand, MaxNear: s.cfg.MaxNear}
	status := http.StatusOK
	fail := func(err error) {
		status = statusOf(err)
		d.Error = err.Error()
		d.Results, d.Searched = nil, false
	}
	var found Found
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q, err := s.parseQuery(r)
		if err != nil {
			fail(err)
			break
		}
		s.fillQuery(&d, q)
		if q.imageID == "" {
			break
		}
		found, _, d.Learner, err = s.search(r.Context(), q, nil)
		d.Results, d.Matched, d.Searched = found.Hits, found.Matched, true
		if err != nil {
			fail(err)
		}
		if errors.Is(err, errUnknownImage) {
			d.Error = fmt.Sprintf("There is no image with the id %q in this run (%d images): upload a photo, or pick an id from a search's results.", q.imageID, d.Images)
		}
	case http.MethodPost:
		data, q, err := s.readForm(w, r)
		if err != nil {
			fail(err)
			break
		}
		s.fillQuery(&d, q)
		found, _, d.Learner, err = s.search(r.Context(), q, data)
		d.Results, d.Matched, d.Searched = found.Hits, found.Matched, true
		if err != nil {
			fail(err)
			break
		}
		// Decoding the photo again is photo work: in a photo slot, or not
		// at all when none is free (the page shows no thumbnail then).
		if release, err := s.acquire(r.Context(), s.photos); err == nil {
			th, err := thumbnail(data, 200, s.cfg.MaxPixels)
			release()
			if err == nil {
				d.QueryThumb = template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(th))
			}
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	d.TookMS = float64(time.Since(start).Microseconds()) / 1000
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, d); err != nil {
		panic(fmt.Sprintf("serve: rendering the page: %v", err))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The page loads nothing from elsewhere and runs no script; say so to
	// the browser.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'none'")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// fillQuery copies a query's parameters to the page.
func (s *Server) fillQuery(d *pageData, q query) {
	d.QueryID, d.K = q.imageID, q.k
	d.Rerank, d.Expand, d.Near = q.refine.Rerank, q.refine.Expand, q.refine.NearCopies
	if q.learner != "" {
		d.Learner = q.learner
	}
}

// readForm reads the page's form: the photo, k, learner, rerank, expand
// and near.
func (s *Server) readForm(w http.ResponseWriter, r *http.Request) ([]byte, query, error) {
	if r.ContentLength > s.cfg.MaxBody {
		return nil, query{}, fmt.Errorf("%w: %d bytes, the limit is %d bytes", errBodyTooLarge, r.ContentLength, s.cfg.MaxBody)
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	// The whole body fits in MaxBody: keep it in memory, no temporary files.
	if err := r.ParseMultipartForm(s.cfg.MaxBody); err != nil {
		return nil, query{}, s.bodyErr(err)
	}
	defer r.MultipartForm.RemoveAll()
	q := query{k: DefaultK, learner: r.FormValue("learner")}
	if err := s.parseNumbers(&q, r.FormValue); err != nil {
		return nil, q, err
	}
	f, _, err := r.FormFile("image")
	if errors.Is(err, http.ErrMissingFile) {
		return nil, q, fmt.Errorf("%w: choose a photo to search with", errBadImage)
	}
	if err != nil {
		return nil, q, s.bodyErr(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, q, s.bodyErr(err)
	}
	if b.Len() == 0 {
		return nil, q, fmt.Errorf("%w: the photo is empty", errBadImage)
	}
	return b.Bytes(), q, nil
}
