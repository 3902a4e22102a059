package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/cmd/internal/cmdtest/fakejobs"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/ingest"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "describebench", &binary) }

// TestMemoryLimit: --memory_limit refuses a value that is no size, exit
// 2 naming the flag, and the job the command submits has each worker set
// the memory limit in force (fakejobs.CheckMemoryLimit).
func TestMemoryLimit(t *testing.T) {
	if _, stderr, code := cmdtest.Run(t, binary, "--memory_limit", "3XB"); code != 2 || !strings.Contains(stderr, `invalid value "3XB" for flag -memory_limit`) {
		t.Errorf("--memory_limit 3XB: exit %d, stderr:\n%s", code, stderr)
	}
	fakejobs.CheckMemoryLimit(t, binary, "--input", "../../testdata/shapes/labels.csv", "--n", "1", "--reps", "1")
}

// TestDescribeLoop: the loop describes with the options it is given (an
// undoubled image has fewer keypoints than the doubled one, as the job's
// --sift_double=false gives) and counts the CPU it spent.
func TestDescribeLoop(t *testing.T) {
	const labels = "../../testdata/shapes/labels.csv"
	f, err := os.Open(labels)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	images, dead, err := ingest.ParseLabels(f, filepath.Dir(labels), ingest.DefaultColumns())
	if err != nil || len(dead) > 0 {
		t.Fatalf("%s: %v, %d dead letters", labels, err, len(dead))
	}
	images = images[:8]
	keypoints := map[bool]int64{}
	for _, double := range []bool{true, false} {
		opt := describe.DefaultOptions()
		opt.SIFT.DoubleImage, opt.SIFT.DoubleBelow = double, 0
		sec, cpu, kp, err := describeLoop(context.Background(), opt, images, 2)
		if err != nil {
			t.Fatal(err)
		}
		if sec <= 0 || cpu <= 0 {
			t.Errorf("sift_double=%v: %v s wall, %v s CPU; want both positive", double, sec, cpu)
		}
		keypoints[double] = kp
	}
	if keypoints[false] == 0 || keypoints[false] >= keypoints[true] {
		t.Errorf("keypoints %d undoubled, %d doubled: want fewer, but some, undoubled", keypoints[false], keypoints[true])
	}
}
