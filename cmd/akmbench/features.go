package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// queryImageShare is the share of a job's photos whose descriptors
// -features draws the queries from (one in queryImageShare, chosen by a
// hash of the image id): words and queries then come from different
// photos, as a vocabulary meets the descriptors of photos it was not
// trained on.
const queryImageShare = 10

// bottomK keeps the descriptors of smallest priority among those offered:
// a uniform sample of max of them that depends only on the priorities,
// not on the order descriptors arrive in.
type bottomK struct {
	max  int
	prio []uint64
	desc []byte
}

// offer adds d (dim bytes) with priority p, trimming to max once twice
// that many are held.
func (b *bottomK) offer(p uint64, d []byte) {
	b.prio = append(b.prio, p)
	b.desc = append(b.desc, d...)
	if len(b.prio) >= 2*b.max {
		b.trim()
	}
}

// trim keeps the max descriptors of smallest priority, in priority order
// (ties by arrival).
func (b *bottomK) trim() {
	idx := make([]int, len(b.prio))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case b.prio[i] < b.prio[j]:
			return -1
		case b.prio[i] > b.prio[j]:
			return 1
		}
		return 0
	})
	idx = idx[:min(b.max, len(idx))]
	prio := make([]uint64, len(idx))
	desc := make([]byte, len(idx)*dim)
	for k, i := range idx {
		prio[k] = b.prio[i]
		copy(desc[k*dim:(k+1)*dim], b.desc[i*dim:(i+1)*dim])
	}
	b.prio, b.desc = prio, desc
}

// mix64 is splitmix64's finaliser: a bijection of uint64 whose outputs
// look uniform for consecutive inputs. It is not the pipeline's
// splitmix.Mix64, which adds SplitMix64's increment first (mix64(x) is
// Mix64(x − 0x9e3779b97f4a7c15)) and which Go's internal rule keeps from
// cmd/: the benchmark's query/word split and samples are drawn with this
// one, so its recorded figures reproduce.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// featureDescriptors reads the SIFT descriptors of every features Parquet
// file matching pattern (formats.Features rows, a bowline run's
// features-*.parquet) and returns a uniform sample of nq of them from one
// photo in queryImageShare as queries, and a uniform sample of nw from the
// other photos as the pool words are drawn from, each in a random order,
// with the number of photos and descriptors read. The samples depend on
// seed and the files' contents only.
func featureDescriptors(pattern string, nq, nw int, seed uint64) (queries, pool []byte, photos, total int, err error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("-features %q: %w", pattern, err)
	}
	if len(files) == 0 {
		return nil, nil, 0, 0, fmt.Errorf("-features %q matches no file", pattern)
	}
	slices.Sort(files)
	q, w := &bottomK{max: nq}, &bottomK{max: nw}
	for _, f := range files {
		err := fileio.ReadEach(context.Background(), f, func(row *formats.Features) error {
			h := fnv.New64a()
			h.Write([]byte(row.ImageID))
			img := mix64(h.Sum64() ^ mix64(seed))
			to := w
			if img%queryImageShare == 0 {
				to = q
			}
			photos++
			for i, d := range row.Descriptors {
				if len(d) != dim {
					return fmt.Errorf("image %s: descriptor %d has %d bytes, want %d", row.ImageID, i, len(d), dim)
				}
				to.offer(mix64(img+uint64(i)+1), d)
				total++
			}
			return nil
		})
		if err != nil {
			return nil, nil, 0, 0, fmt.Errorf("reading %s: %w", f, err)
		}
	}
	q.trim()
	w.trim()
	return q.desc, w.desc, photos, total, nil
}
