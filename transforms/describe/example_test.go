package describe_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/describe"
)

// Describing one photo: a Describer reads the bytes through its ReadFunc
// (here the local file system), decodes them and extracts SIFT. A photo
// that cannot be read or decoded gives a dead letter naming the stage
// instead, and the caller goes on with the next.
func ExampleDescriber_Describe() {
	read := func(_ context.Context, uri string) ([]byte, error) { return os.ReadFile(uri) }
	d, err := describe.NewDescriber(describe.DefaultOptions(), read)
	if err != nil {
		log.Fatal(err)
	}
	dir := filepath.Join("..", "..", "testdata", "shapes", "images", "class0")
	for _, img := range []formats.Image{
		{ImageID: "class0-00", URI: filepath.Join(dir, "class0-00.jpg"), Label: "class0"},
		{ImageID: "missing", URI: filepath.Join(dir, "no-such-photo.jpg")},
	} {
		feat, dead := d.Describe(context.Background(), img)
		if dead != nil {
			fmt.Printf("%s: dead letter from stage %q\n", dead.ImageID, dead.Stage)
			continue
		}
		fmt.Printf("%s (%s): %d×%d, %d keypoints, %d bytes a descriptor\n",
			feat.ImageID, feat.Label, feat.Width, feat.Height, len(feat.Descriptors), len(feat.Descriptors[0]))
	}
	// Output:
	// class0-00 (class0): 192×192, 114 keypoints, 128 bytes a descriptor
	// missing: dead letter from stage "read"
}
