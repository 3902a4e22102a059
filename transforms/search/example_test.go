package search_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/bowline/bowline/transforms/search"
)

// A finished run is opened once and then answers queries: by the id of an
// image it indexed, and by a photo, which is described and quantised with
// the settings the run recorded. The run here is a small one committed
// under testdata (the 96 shapes at 50 words, SOLIS-ADA).
func ExampleOpen() {
	ctx := context.Background()
	ix, err := search.Open(ctx, "../../testdata/legacy-run", search.Options{})
	if err != nil {
		log.Fatal(err)
	}
	byID, err := ix.SearchID("solis-ada", "class0-00", 3)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range byID.Hits {
		fmt.Println("by id:", h.ImageID)
	}
	photo, err := os.ReadFile("../../testdata/shapes/images/class2/class2-03.jpg")
	if err != nil {
		log.Fatal(err)
	}
	byPhoto, err := ix.SearchImage(ctx, "solis-ada", photo, 3)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range byPhoto.Hits {
		fmt.Println("by photo:", h.ImageID)
	}
	// Output:
	// by id: class4-00
	// by id: class0-05
	// by id: class0-10
	// by photo: class0-03
	// by photo: class3-13
	// by photo: class2-15
}
