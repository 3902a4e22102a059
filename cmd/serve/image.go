package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/image/draw"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/transforms/ingest"
)

// Thumbnail sides a request may ask for, in pixels.
const (
	minThumb = 16
	maxThumb = 1024
)

// handleImage answers GET /v1/image?image_id=…[&size=N]: the corpus image
// as stored, or with size a JPEG that fits in size×size pixels.
func (s *Server) handleImage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "method %s not allowed", r.Method)
		return
	}
	v, err := urlQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := once(v, "image_id", "size"); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	id := v.Get("image_id")
	if id == "" {
		writeError(w, http.StatusBadRequest, "image_id is required")
		return
	}
	size := 0
	if ss := v.Get("size"); ss != "" {
		size, err = cmdline.WholeNumber(ss)
		if err != nil || size < minThumb || size > maxThumb {
			writeError(w, http.StatusBadRequest, "size=%.20q: want a whole number of pixels from %d to %d", ss, minThumb, maxThumb)
			return
		}
	}
	ix := s.Index()
	uri, ok := ix.URI(id)
	if !ok {
		writeError(w, http.StatusNotFound, "%v %.200q in run %s", errUnknownImage, id, ix.Run())
		return
	}
	if !blob.IsRemote(uri) && !filepath.IsAbs(uri) && s.cfg.ImageRoot != "" {
		uri = blob.Join(s.cfg.ImageRoot, uri)
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	release, err := s.acquire(ctx, s.slots)
	if err != nil {
		writeError(w, statusOf(err), "%v", err)
		return
	}
	defer release()
	data, _, err := blob.Read(ctx, uri)
	if err != nil {
		if err := s.explain(err, fmt.Sprintf("reading image %.200q", id)); errors.As(err, new(explained)) {
			writeError(w, statusOf(err), "%v", err)
			return
		}
		s.log.Error("reading a corpus image", "image_id", id, "uri", uri, "err", err)
		writeError(w, http.StatusBadGateway, "image %.200q cannot be read from the corpus", id)
		return
	}
	ctype := http.DetectContentType(data)
	if size > 0 {
		data, err = thumbnail(data, size, s.cfg.MaxPixels)
		if err != nil {
			writeError(w, http.StatusUnprocessableEntity, "image %.200q: %v", id, err)
			return
		}
		ctype = "image/jpeg"
	} else if !strings.HasPrefix(ctype, "image/") {
		writeError(w, http.StatusUnsupportedMediaType, "image %.200q is stored as %s, not an image a browser shows", id, ctype)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// A new run may change an id's image: cache briefly.
	w.Header().Set("Cache-Control", "private, max-age=300")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		w.Write(data)
	}
}

// thumbnail decodes an image (upright, as the job describes it, refusing
// more than maxPixels) and returns it as a JPEG fitting in size×size; an
// image already that small is only re-encoded.
func thumbnail(data []byte, size int, maxPixels int64) ([]byte, error) {
	d := ingest.Decoder{MaxPixels: maxPixels}
	src, _, err := d.Decode(data)
	if err != nil {
		if errors.Is(err, ingest.ErrTooLarge) {
			return nil, classed{err, errTooLarge} // its text says "image too large" already
		}
		return nil, fmt.Errorf("%w: %v", errBadImage, err)
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > size || h > size {
		if w >= h {
			w, h = size, max(1, h*size/w)
		} else {
			w, h = max(1, w*size/h), size
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	// JPEG has no alpha: transparent pixels go on white, not black.
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85}); err != nil {
		return nil, fmt.Errorf("encoding the thumbnail: %w", err)
	}
	return buf.Bytes(), nil
}
