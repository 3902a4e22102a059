package nn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/bowline/bowline/formats"

	"github.com/bowline/bowline/transforms/cpuclock"
)

// Real descriptors for BenchmarkIVFQuantizeReal, from a pipeline run's
// outputs: BOWLINE_IVF_FEATURES names a features-*.parquet file
// (formats.Features) and BOWLINE_IVF_CODEBOOK its codebook-*.parquet
// (formats.Word); BOWLINE_IVF_N caps the descriptors read (default 200,000).
// The benchmark is skipped without them.
var realIVF struct {
	once   sync.Once
	desc   []byte
	counts []int // the descriptors of each image, in order
	words  []float32
	err    error
}

// loadRealIVF reads the descriptors (and how many each image has) and the
// words named by the environment, once for all benchmarks.
func loadRealIVF(b *testing.B) ([]byte, []int, []float32) {
	feat, book := os.Getenv("BOWLINE_IVF_FEATURES"), os.Getenv("BOWLINE_IVF_CODEBOOK")
	if feat == "" || book == "" {
		b.Skip("BOWLINE_IVF_FEATURES and BOWLINE_IVF_CODEBOOK not set")
	}
	realIVF.once.Do(func() {
		limit := 200000
		if s := os.Getenv("BOWLINE_IVF_N"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				realIVF.err = fmt.Errorf("BOWLINE_IVF_N=%q: want a positive count", s)
				return
			}
			limit = n
		}
		realIVF.desc, realIVF.counts, realIVF.err = readDescriptors(feat, limit)
		if realIVF.err == nil {
			realIVF.words, realIVF.err = readWords(book)
		}
	})
	if realIVF.err != nil {
		b.Fatal(realIVF.err)
	}
	return realIVF.desc, realIVF.counts, realIVF.words
}

var errEnough = errors.New("enough descriptors")

// readDescriptors returns the first limit descriptors of a features file
// and how many of them each image has.
func readDescriptors(path string, limit int) ([]byte, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	var desc []byte
	var counts []int
	err = formats.Decode(context.Background(), f, st.Size(), func(row *formats.Features) error {
		counts = append(counts, 0)
		for _, d := range row.Descriptors {
			if len(d) != 128 {
				return fmt.Errorf("image %s: descriptor of %d bytes, want 128", row.ImageID, len(d))
			}
			desc = append(desc, d...)
			counts[len(counts)-1]++
			if len(desc) == limit*128 {
				return errEnough
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, nil, fmt.Errorf("features %s: %w", path, err)
	}
	return desc, counts, nil
}

// readWords returns a codebook's centroids in word order.
func readWords(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var rows []formats.Word
	err = formats.Decode(context.Background(), f, st.Size(), func(row *formats.Word) error {
		rows = append(rows, *row)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("codebook %s: %w", path, err)
	}
	words := make([]float32, 128*len(rows))
	for _, w := range rows {
		if int(w.WordID) >= len(rows) || len(w.Centroid) != 128 {
			return nil, fmt.Errorf("codebook %s: word %d of %d coordinates among %d words", path, w.WordID, len(w.Centroid), len(rows))
		}
		copy(words[int(w.WordID)*128:], w.Centroid)
	}
	return words, nil
}

// BenchmarkIVFQuantizeReal quantises real SIFT descriptors against a real
// vocabulary with the default IVF options on one goroutine, as the bags of
// words do (IVF.QuantizeBytes): "image" one call per image, as
// bow.Quantizer calls it, "all" one call for every descriptor (batches of
// IVFOptions.Batch). It reports ns a descriptor, of wall and of CPU time.
// BOWLINE_IVF_WORDS_OUT, if set, receives the words of "image" (uint32,
// little-endian), to compare two builds bit for bit.
func BenchmarkIVFQuantizeReal(b *testing.B) {
	desc, counts, words := loadRealIVF(b)
	v, err := newIVF(words, 128, DefaultIVFOptions())
	if err != nil {
		b.Fatal(err)
	}
	n := len(desc) / 128
	quantize := func(out []uint32, s *IVFScratch, perImage bool) []uint32 {
		if !perImage {
			return v.QuantizeBytes(out, desc, s)
		}
		lo := 0
		for _, c := range counts {
			out = v.QuantizeBytes(out, desc[lo*128:(lo+c)*128], s)
			lo += c
		}
		return out
	}
	for _, perImage := range []bool{true, false} {
		name := "all"
		if perImage {
			name = "image"
		}
		b.Run(name, func(b *testing.B) {
			var s IVFScratch
			out := make([]uint32, 0, n)
			if path := os.Getenv("BOWLINE_IVF_WORDS_OUT"); path != "" && perImage {
				out = quantize(out[:0], &s, perImage)
				buf := make([]byte, 0, 4*n)
				for _, w := range out {
					buf = append(buf, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
				}
				if err := os.WriteFile(path, buf, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			cpu0, _ := cpuclock.Process()
			for b.Loop() {
				out = quantize(out[:0], &s, perImage)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/desc")
			if cpu1, _ := cpuclock.Process(); cpu1 > cpu0 {
				cpu := cpu1 - cpu0
				// The process's CPU time: on a shared machine, what the
				// search itself cost (run with -cpu 1).
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/desc")
			}
			b.ReportMetric(float64(n)/float64(len(counts)), "desc/image")
		})
	}
}
