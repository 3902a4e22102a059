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
	"slices"
	"strconv"

	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

//go:embed faiss_assign.py
var faissScript []byte

// faissRef is a python3-faiss process (faiss_assign.py) that finds the
// exact nearest centroid of every benchmark point by exhaustive search with
// BLAS matrix products: exact Lloyd at K = 10⁵ on 10⁶ points is out of reach
// of nn.Nearest's scan on this machine, and an exact reference is what
// the AKM objective must be measured against.
type faissRef struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	n, dim int
	dir    string
	buf    []byte
}

// startFAISS writes pts to a temporary file and starts the script on it
// with the given Python interpreter, FAISS and OpenBLAS limited to threads
// threads. One thread is the fair reference: on this 2-core machine a
// second thread left Debian's FAISS 1.7.3 no faster in wall time (2,311
// against 2,592 descriptors/s at K = 10⁵) and doubled its CPU time, which
// would double the CPU speed-up credited to AKM.
func startFAISS(python string, threads int, pts []float32, dim int) (*faissRef, error) {
	dir, err := os.MkdirTemp("", "akmbench-faiss")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "faiss_assign.py")
	data := filepath.Join(dir, "points.f32")
	if err := os.WriteFile(script, faissScript, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := writeFloats(data, pts); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	n := len(pts) / dim
	cmd := exec.Command(python, script, data, strconv.Itoa(n), strconv.Itoa(dim))
	cmd.Stderr = os.Stderr
	t := strconv.Itoa(threads)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+t, "OPENBLAS_NUM_THREADS="+t)
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s (it needs python3-faiss; give -python): %w", python, err)
	}
	return &faissRef{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), n: n, dim: dim, dir: dir}, nil
}

// writeFloats writes x to path as little-endian float32.
func writeFloats(path string, x []float32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b [4]byte
	for _, v := range x {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// assign sets labels to the nearest of the centroids cent for every point
// and returns the CPU seconds the FAISS process spent on it.
func (r *faissRef) assign(cent []float32, labels []int32) (cpu float64, err error) {
	k := len(cent) / r.dim
	r.buf = binary.LittleEndian.AppendUint32(r.buf[:0], uint32(k))
	for _, v := range cent {
		r.buf = binary.LittleEndian.AppendUint32(r.buf, math.Float32bits(v))
	}
	if _, err := r.in.Write(r.buf); err != nil {
		return 0, fmt.Errorf("faiss: sending centroids: %w", err)
	}
	r.buf = slices.Grow(r.buf[:0], 4*r.n+8)[:4*r.n+8]
	if _, err := io.ReadFull(r.out, r.buf); err != nil {
		return 0, fmt.Errorf("faiss: reading labels: %w", err)
	}
	for i := range labels {
		l := int32(binary.LittleEndian.Uint32(r.buf[4*i:]))
		if l < 0 || int(l) >= k {
			return 0, fmt.Errorf("faiss: point %d has label %d of %d centroids", i, l, k)
		}
		labels[i] = l
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(r.buf[4*r.n:])), nil
}

// close ends the process and removes its files.
func (r *faissRef) close() error {
	defer os.RemoveAll(r.dir)
	r.in.Write([]byte{0, 0, 0, 0})
	r.in.Close()
	return r.cmd.Wait()
}

// lloydFAISS refines cent by Lloyd iterations as kmeans.TrainFrom does with
// Tol = 0 and kmeans.ReseedSplit (same updates, re-seeding and stopping
// rule), with every point's nearest centroid found
// by ref; the squared distance to it is computed here, as kmeans does, so
// the objective is exact for the labels FAISS chose (FAISS's own distances,
// ‖x‖² + ‖c‖² − 2x·c in float32, can pick another centroid only among
// near-ties). It returns the result and the CPU seconds ref spent.
func lloydFAISS(ref *faissRef, pts, cent []float32, dim, k, maxIter int) (kmeans.Result, float64, error) {
	n := len(pts) / dim
	cent = slices.Clone(cent)
	labels := make([]int32, n)
	next := make([]int32, n)
	dist := make([]float32, n)
	for i := range labels {
		labels[i] = -1
	}
	sums := kmeans.NewSums(k, dim)
	var refCPU float64
	assign := func() (changed int, err error) {
		cpu, err := ref.assign(cent, next)
		if err != nil {
			return 0, err
		}
		refCPU += cpu
		for i, l := range next {
			if l != labels[i] {
				labels[i] = l
				changed++
			}
			_, dist[i] = nn.Nearest(cent[int(l)*dim:(int(l)+1)*dim], dim, pts[i*dim:(i+1)*dim])
		}
		sums.Reset()
		sums.Add(pts, labels, dist)
		return changed, nil
	}
	if _, err := assign(); err != nil {
		return kmeans.Result{}, refCPU, err
	}
	res := kmeans.Result{K: k, Dim: dim}
	obj := sums.SSE / float64(n)
	for obj > 0 && res.Iterations < maxIter {
		empty := kmeans.Update(cent, sums)
		kmeans.Split(cent, dim, sums.Count, empty)
		res.Iterations++
		changed, err := assign()
		if err != nil {
			return kmeans.Result{}, refCPU, err
		}
		prev := obj
		obj = sums.SSE / float64(n)
		if (changed == 0 && len(empty) == 0) || prev-obj <= 0 {
			res.Converged = true
			break
		}
	}
	res.Centroids = cent
	res.Objective = obj
	return res, refCPU, nil
}
