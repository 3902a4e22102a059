package describe

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bowline/bowline/formats"
)

// slowReader reads local files, every seventh of them slowly, and records
// how far reading ran ahead of the images handed out.
type slowReader struct {
	started, handed atomic.Int64
	most            atomic.Int64
}

func (r *slowReader) read(ctx context.Context, uri string) ([]byte, error) {
	ahead := r.started.Add(1) - r.handed.Load()
	for m := r.most.Load(); ahead > m && !r.most.CompareAndSwap(m, ahead); m = r.most.Load() {
	}
	if filepath.Ext(uri) == ".slow" {
		time.Sleep(20 * time.Millisecond)
		uri = uri[:len(uri)-len(".slow")]
	}
	return readFile(ctx, uri)
}

func images(n int) []formats.Image {
	imgs := make([]formats.Image, n)
	for i := range imgs {
		uri := shape
		switch {
		case i%7 == 0:
			uri += ".slow"
		case i == 11:
			uri = filepath.Join("no", "such", "file.jpg")
		}
		imgs[i] = formats.Image{ImageID: fmt.Sprintf("i%03d", i), URI: uri, Label: "class0"}
	}
	return imgs
}

// TestDescribeAllInOrder checks that results come out in the order of the
// images, dead letters included, and that reading never runs more than the
// window ahead of what was handed out: what bounds a part's memory.
func TestDescribeAllInOrder(t *testing.T) {
	const workers, window = 3, 5
	imgs := images(40)
	var r slowReader
	var got []string
	err := DescribeAll(context.Background(), DefaultOptions(), r.read, imgs, nil, workers, window, func(res Result) error {
		r.handed.Add(1)
		if res.Dead != nil {
			got = append(got, res.Dead.ImageID)
		} else {
			got = append(got, res.Features.ImageID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(imgs) {
		t.Fatalf("%d results for %d images", len(got), len(imgs))
	}
	for i, id := range got {
		if id != imgs[i].ImageID {
			t.Fatalf("result %d is %s, want %s", i, id, imgs[i].ImageID)
		}
	}
	// A read is counted before its image's result is handed out, so at
	// most window images are read and not yet handed out, plus the one
	// being read.
	if m := r.most.Load(); m > window+1 {
		t.Errorf("reading ran %d images ahead, want at most %d", m, window+1)
	}
}

// TestDescribeAllStops checks that an error from out stops the work and
// is returned, and that out is not called again.
func TestDescribeAllStops(t *testing.T) {
	imgs := images(200)
	var r slowReader
	stop := errors.New("disk full")
	calls := 0
	err := DescribeAll(context.Background(), DefaultOptions(), r.read, imgs, nil, 2, 4, func(Result) error {
		calls++
		if calls == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("error %v, want %v", err, stop)
	}
	if calls != 5 {
		t.Errorf("out called %d times, want 5", calls)
	}
	if n := r.started.Load(); n > 5+4+2 {
		t.Errorf("%d images read after out failed at the fifth", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := DescribeAll(ctx, DefaultOptions(), r.read, imgs, nil, 2, 4, func(Result) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v, want %v", err, context.Canceled)
	}
}
