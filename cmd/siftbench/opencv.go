package main

import (
	"bufio"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bowline/bowline/transforms/sift"
)

//go:embed opencv_sift.py
var opencvScript []byte

// opencv is the running reference extractor (opencv_sift.py).
type opencv struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	version string
}

// startOpenCV writes the embedded script to dir and starts it with python.
func startOpenCV(python, dir string) (*opencv, error) {
	script := filepath.Join(dir, "opencv_sift.py")
	if err := os.WriteFile(script, opencvScript, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", python, err)
	}
	cv := &opencv{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if !cv.out.Scan() {
		cv.close()
		return nil, fmt.Errorf("%s %s did not start (is python3-opencv installed for it?)", python, script)
	}
	f := strings.Fields(cv.out.Text())
	if len(f) != 2 || f[0] != "ready" {
		cv.close()
		return nil, fmt.Errorf("opencv_sift.py: unexpected greeting %q", cv.out.Text())
	}
	cv.version = f[1]
	return cv, nil
}

func (cv *opencv) call(format string, args ...any) ([]string, error) {
	if _, err := fmt.Fprintf(cv.in, format+"\n", args...); err != nil {
		return nil, err
	}
	if !cv.out.Scan() {
		return nil, fmt.Errorf("opencv_sift.py exited: %v", cv.out.Err())
	}
	f := strings.Fields(cv.out.Text())
	if len(f) == 0 || f[0] != "ok" {
		return nil, fmt.Errorf("opencv_sift.py: %s", cv.out.Text())
	}
	return f[1:], nil
}

func (cv *opencv) close() {
	fmt.Fprintln(cv.in, "quit")
	cv.in.Close()
	cv.cmd.Wait()
}

// features is one extractor's output on one image.
type features struct {
	kps  []sift.Keypoint
	desc []byte // sift.DescriptorSize bytes per keypoint
}

// extract runs OpenCV on png and reads back its keypoints and descriptors,
// converted to this package's conventions (Scale = size/2, Angle in
// radians); only X, Y and the descriptors are used for scoring.
func (cv *opencv) extract(png, bin string) (features, error) {
	if _, err := cv.call("extract %s %s", png, bin); err != nil {
		return features{}, err
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return features{}, err
	}
	if len(b) < 4 {
		return features{}, fmt.Errorf("%s: truncated", bin)
	}
	n := int(int32(binary.LittleEndian.Uint32(b)))
	const rec = 24
	if n < 0 || len(b) != 4+n*(rec+sift.DescriptorSize) {
		return features{}, fmt.Errorf("%s: %d bytes for %d keypoints", bin, len(b), n)
	}
	f := features{kps: make([]sift.Keypoint, n), desc: b[4+n*rec:]}
	for i := range f.kps {
		r := b[4+i*rec : 4+(i+1)*rec]
		v := func(j int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(r[4*j:])) }
		f.kps[i] = sift.Keypoint{
			X: v(0), Y: v(1), Scale: v(2) / 2, Angle: v(3) * math.Pi / 180, Response: v(4),
			Octave: int32(int8(binary.LittleEndian.Uint32(r[20:]))),
		}
	}
	return f, nil
}

// timing is the wall-clock and thread CPU time of one run.
type timing struct{ wall, cpu time.Duration }

// time runs OpenCV reps times on png (decoded once, untimed) and returns the
// keypoint count and the times of each run.
func (cv *opencv) time(png string, reps int) (int, []timing, error) {
	f, err := cv.call("time %s %d", png, reps)
	if err != nil {
		return 0, nil, err
	}
	if len(f) != 2*reps+1 {
		return 0, nil, fmt.Errorf("opencv_sift.py: time: %d fields", len(f))
	}
	n, _ := strconv.Atoi(f[0])
	var ts []timing
	for i := 1; i < len(f); i += 2 {
		w, err1 := strconv.ParseFloat(f[i], 64)
		c, err2 := strconv.ParseFloat(f[i+1], 64)
		if err1 != nil || err2 != nil {
			return 0, nil, fmt.Errorf("opencv_sift.py: time: bad fields %q %q", f[i], f[i+1])
		}
		ts = append(ts, timing{time.Duration(w * 1e9), time.Duration(c * 1e9)})
	}
	return n, ts, nil
}
