package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestCountsLineAddsUp: a run with a refused input row and images that
// were not described says which dead letters are which, so that images −
// described = dead letters − refused rows; it read "30 images (7 dead
// letters, 24 described)".
func TestCountsLineAddsUp(t *testing.T) {
	r := Report{Counts: Counts{Images: 30, DeadLetters: 7, Described: 24, Keypoints: 900, Vocabulary: 20, Triplets: 400}}
	r.DeadLetters.Total = 7
	r.DeadLetters.Kinds = []DeadKind{{Stage: "describe", Count: 4}, {Stage: "ingest", Count: 1}, {Stage: "describe", Count: 2}}
	var b bytes.Buffer
	r.WriteTable(&b)
	first, _, _ := strings.Cut(b.String(), "\n")
	want := "30 images, 24 described, 7 dead letters (1 of them a row or file of the input refused at ingest, not listed as an image); 900 keypoints, 20 words, 400 triplets"
	if first != want {
		t.Errorf("first line\n%q, want\n%q", first, want)
	}
	r = Report{Counts: Counts{Images: 96, Described: 96, Keypoints: 11235, Vocabulary: 1000, Triplets: 1560}}
	b.Reset()
	r.WriteTable(&b)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "96 images, 96 described, 0 dead letters; 11235 keypoints, 1000 words, 1560 triplets" {
		t.Errorf("without dead letters: %q", first)
	}
	// A retrain's counts: the bags of words it read, no images.
	r = Report{Counts: Counts{Described: 3280, Vocabulary: 10000, Triplets: 52480}}
	b.Reset()
	r.WriteTable(&b)
	if first, _, _ := strings.Cut(b.String(), "\n"); first != "3280 bags of words of a finished run, 10000 words, 52480 triplets" {
		t.Errorf("a retrain: %q", first)
	}
}
