package sift_test

import (
	"fmt"
	"image"
	_ "image/jpeg"
	"log"
	"os"
	"path/filepath"

	"github.com/bowline/bowline/transforms/sift"
)

// Extracting SIFT from a photo: decode it, convert it to gray, and run an
// Extractor with OpenCV's defaults. Each keypoint comes with a descriptor
// of DescriptorSize bytes, in the same order.
func ExampleExtractor_Extract() {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "shapes", "images", "class0", "class0-00.jpg"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	photo, _, err := image.Decode(f)
	if err != nil {
		log.Fatal(err)
	}

	ex, err := sift.NewExtractor(sift.DefaultOptions())
	if err != nil {
		log.Fatal(err)
	}
	gray := sift.FromImage(photo, nil)
	kps, desc := ex.Extract(gray)

	fmt.Printf("%d×%d photo: %d keypoints, %d descriptor bytes each\n",
		gray.Width, gray.Height, len(kps), len(desc)/len(kps))
	// Output:
	// 192×192 photo: 114 keypoints, 128 descriptor bytes each
}
