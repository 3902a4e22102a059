package main

import (
	"testing"

	"github.com/bowline/bowline/transforms/describe"
)

// The photo table runs describe's SIFT as OpenCV runs its own: every
// image doubled (cv2.SIFT_create has no bound), the rest describe's.
func TestPhotoOptionsDoubleAsOpenCV(t *testing.T) {
	got, want := photoOptions(), describe.DefaultOptions()
	if !got.SIFT.DoubleImage || got.SIFT.DoubleBelow != 0 {
		t.Errorf("double %v below %d, want every image doubled", got.SIFT.DoubleImage, got.SIFT.DoubleBelow)
	}
	got.SIFT.DoubleImage, got.SIFT.DoubleBelow = want.SIFT.DoubleImage, want.SIFT.DoubleBelow
	if got != want {
		t.Errorf("options %+v, want describe's %+v", got, want)
	}
}
