package main

import (
	"bytes"
	"image"
	_ "image/jpeg"
	"image/png"
	"mime/multipart"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestPage(t *testing.T) {
	f := newFake("runs/night-3", 12)
	f.serving = "solis-ada"
	s := NewServer(f, testConfig(), quietLog(t))

	w := do(s, "GET", "/", nil)
	page := w.Body.String()
	if w.Code != 200 || !strings.Contains(page, `enctype="multipart/form-data"`) || !strings.Contains(page, "runs/night-3 · 12 images") {
		t.Fatalf("form page: %d\n%s", w.Code, page)
	}
	// The form is sent by its button, once learner and k are set, and
	// the start page offers no result to click.
	if strings.Contains(page, "onchange") || strings.Contains(page, "<script") || !strings.Contains(page, `<button type="submit">`) ||
		!strings.Contains(w.Header().Get("Content-Security-Policy"), "script-src 'none'") {
		t.Fatalf("the form submits by itself or the page runs a script:\n%s", page)
	}
	if strings.Contains(page, "click a result") || strings.Contains(page, "Score:") {
		t.Fatalf("the start page speaks of results:\n%s", page)
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Fatalf("the page refers to an external address")
	}

	// A search by id: one thumbnail and link per hit, in rank order.
	id := f.ids[4]
	w = do(s, "GET", "/?image_id="+id+"&k=6&learner=tfidf", nil)
	page = w.Body.String()
	if w.Code != 200 {
		t.Fatalf("search page: %d\n%s", w.Code, page)
	}
	want := f.rank("tfidf"+id, 6)
	links := regexp.MustCompile(`<a href="/\?image_id=([^&"]+)&amp;learner=tfidf&amp;k=6"`).FindAllStringSubmatch(page, -1)
	thumbs := regexp.MustCompile(`<img src="/v1/image\?image_id=([^&"]+)&amp;size=160"`).FindAllStringSubmatch(page, -1)
	if len(links) != len(want) || len(thumbs) != len(want) {
		t.Fatalf("%d links and %d thumbnails, want %d\n%s", len(links), len(thumbs), len(want), page)
	}
	for i, h := range want {
		// The ids hold a slash, which html/template writes as %2f.
		esc := strings.ReplaceAll(h.ImageID, "/", "%2f")
		if links[i][1] != esc || thumbs[i][1] != esc {
			t.Errorf("hit %d: link %q, thumbnail %q, want %q", i, links[i][1], thumbs[i][1], esc)
		}
	}
	if !strings.Contains(page, `<option selected>tfidf</option>`) {
		t.Errorf("the learner asked for is not the one selected")
	}
	// Each result is labelled; a line says what the score means and how
	// many images matched.
	labels := regexp.MustCompile(`<div class="label">([^<]+)</div>`).FindAllStringSubmatch(page, -1)
	if len(labels) != len(want) {
		t.Fatalf("%d labels, want %d", len(labels), len(want))
	}
	for i, h := range want {
		if l, _ := f.Label(h.ImageID); labels[i][1] != l {
			t.Errorf("hit %d labelled %q, want %q", i, labels[i][1], l)
		}
	}
	if !strings.Contains(page, "Score: ") || !strings.Contains(page, "12 images match, the best 6 shown") || !strings.Contains(page, "click a result") {
		t.Errorf("no explanation of the score, the matches or the links:\n%s", page)
	}

	// An unknown id: the page says so, with the API's status.
	// An unknown id: the page says so plainly, with the API's status, and
	// shows no broken thumbnail and no "top 0".
	w = do(s, "GET", "/?image_id=nope", nil)
	page = w.Body.String()
	if w.Code != 404 || !strings.Contains(page, `class="error">There is no image with the id &#34;nope&#34; in this run (12 images)`) ||
		strings.Contains(page, "/v1/image?image_id=nope") || strings.Contains(page, "top 0") || strings.Contains(page, "match") {
		t.Fatalf("unknown id: %d\n%s", w.Code, page)
	}

	// An upload: results, and the photo itself as a data: URL.
	img := pngBytes(t, 40, 30)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("learner", "tfidf")
	mw.WriteField("k", "3")
	fw, _ := mw.CreateFormFile("image", "photo.png")
	fw.Write(img)
	mw.Close()
	w = do(s, "POST", "/", &form, "Content-Type", mw.FormDataContentType())
	page = w.Body.String()
	first := strings.ReplaceAll(f.rank("tfidf"+string(img), 1)[0].ImageID, "/", "%2f")
	if w.Code != 200 || !strings.Contains(page, `<img src="data:image/jpeg;base64,`) || strings.Count(page, `size=160"`) != 3 || !strings.Contains(page, "image_id="+first+"&amp;") {
		t.Fatalf("upload: %d\n%s", w.Code, page)
	}

	// Re-ranked: the verified results show their inliers, the links and
	// the form carry rerank and expand.
	w = do(s, "GET", "/?image_id="+id+"&k=4&learner=tfidf&rerank=2&expand=3", nil)
	page = w.Body.String()
	inliers := regexp.MustCompile(`<div class="inliers"[^>]*>✓ ([0-9]+) inliers</div>`).FindAllStringSubmatch(page, -1)
	if w.Code != 200 || len(inliers) != 2 || inliers[0][1] != "100" || inliers[1][1] != "101" {
		t.Fatalf("re-ranked page: %d, inliers %v\n%s", w.Code, inliers, page)
	}
	if n := strings.Count(page, `&amp;k=4&amp;rerank=2&amp;expand=3"`); n != 4 {
		t.Errorf("%d of 4 links keep rerank and expand", n)
	}
	if !strings.Contains(page, `name="rerank" min="0" max="1000" value="2"`) || !strings.Contains(page, `name="expand" min="0" max="100" value="3"`) ||
		!strings.Contains(page, "verified spatially") {
		t.Errorf("the form or the explanation lacks rerank and expand:\n%s", page)
	}
	// The form's rerank is read as the query string's.
	form.Reset()
	mw = multipart.NewWriter(&form)
	mw.WriteField("rerank", "1")
	mw.WriteField("k", "3")
	fw, _ = mw.CreateFormFile("image", "photo.png")
	fw.Write(img)
	mw.Close()
	w = do(s, "POST", "/", &form, "Content-Type", mw.FormDataContentType())
	if page = w.Body.String(); w.Code != 200 || strings.Count(page, `class="inliers"`) != 1 {
		t.Fatalf("upload, rerank 1: %d\n%s", w.Code, page)
	}
	form.Reset()
	mw = multipart.NewWriter(&form)
	mw.WriteField("rerank", "-1")
	fw, _ = mw.CreateFormFile("image", "photo.png")
	fw.Write(img)
	mw.Close()
	if w = do(s, "POST", "/", &form, "Content-Type", mw.FormDataContentType()); w.Code != 400 || !strings.Contains(w.Body.String(), "rerank=") {
		t.Fatalf("upload, rerank -1: %d\n%s", w.Code, w.Body.String())
	}

	// An upload that is no image.
	form.Reset()
	mw = multipart.NewWriter(&form)
	fw, _ = mw.CreateFormFile("image", "notes.txt")
	fw.Write([]byte("hello"))
	mw.Close()
	w = do(s, "POST", "/", &form, "Content-Type", mw.FormDataContentType())
	if w.Code != 415 || !strings.Contains(w.Body.String(), `class="error"`) {
		t.Fatalf("upload of text: %d\n%s", w.Code, w.Body.String())
	}
}

func TestImage(t *testing.T) {
	f := newFake("runs/a", 3)
	dir := t.TempDir()
	src := pngBytes(t, 300, 200)
	p := filepath.Join(dir, "a.png")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "a.txt")
	os.WriteFile(text, []byte("not an image"), 0o644)
	f.uris[f.ids[0]] = p
	f.uris[f.ids[1]] = text
	f.uris[f.ids[2]] = filepath.Join(dir, "missing.png")
	s := NewServer(f, testConfig(), quietLog(t))

	w := do(s, "GET", "/v1/image?image_id="+f.ids[0], nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/png" || !bytes.Equal(w.Body.Bytes(), src) {
		t.Fatalf("original: %d %q, %d bytes", w.Code, w.Header().Get("Content-Type"), w.Body.Len())
	}
	w = do(s, "GET", "/v1/image?image_id="+f.ids[0]+"&size=120", nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "image/jpeg" {
		t.Fatalf("thumbnail: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	th, format, err := image.Decode(bytes.NewReader(w.Body.Bytes()))
	if err != nil || format != "jpeg" || th.Bounds().Dx() != 120 || th.Bounds().Dy() != 80 {
		t.Fatalf("thumbnail: %s %v, %v", format, th.Bounds(), err)
	}
	// The thumbnail looks like the image: the gradient's corners.
	want, _ := png.Decode(bytes.NewReader(src))
	for _, c := range [][4]int{{2, 2, 3, 3}, {117, 77, 297, 197}, {117, 2, 297, 3}} {
		r1, g1, _, _ := th.At(c[0], c[1]).RGBA()
		r2, g2, _, _ := want.At(c[2], c[3]).RGBA()
		if d := int(r1>>8) - int(r2>>8); d < -20 || d > 20 {
			t.Errorf("thumbnail at %d,%d: red %d, image %d", c[0], c[1], r1>>8, r2>>8)
		}
		if d := int(g1>>8) - int(g2>>8); d < -20 || d > 20 {
			t.Errorf("thumbnail at %d,%d: green %d, image %d", c[0], c[1], g1>>8, g2>>8)
		}
	}

	for _, c := range []struct {
		target string
		status int
	}{
		{"/v1/image?image_id=" + f.ids[1], 415},
		{"/v1/image?image_id=" + f.ids[1] + "&size=64", 422},
		{"/v1/image?image_id=" + f.ids[2], 502},
	} {
		w := do(s, "GET", c.target, nil)
		if msg := jsonError(t, w); w.Code != c.status {
			t.Errorf("%s: %d %q, want %d", c.target, w.Code, msg, c.status)
		}
	}
}
