package formats

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
)

// Check reports a centroid that is not of dim finite values, naming the
// word.
func (w *Word) Check(dim int) error {
	if len(w.Centroid) != dim {
		return fmt.Errorf("word %d has %d values, want %d", w.WordID, len(w.Centroid), dim)
	}
	for _, v := range w.Centroid {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("word %d has a non-finite centroid", w.WordID)
		}
	}
	return nil
}

// CentroidTable lays out the centroids of a codebook of K words of dim
// values from its rows, read one at a time in any order: a reader of a
// codebook file holds its centroids once, never its rows as well (512 MB
// each at 1M words).
type CentroidTable struct {
	dim  int
	cent []float32
	seen []bool
	n    int
}

// NewCentroidTable returns an empty table of k words of dim values.
func NewCentroidTable(k, dim int) *CentroidTable {
	return &CentroidTable{dim: dim, cent: make([]float32, k*dim), seen: make([]bool, k)}
}

// Add puts w's centroid at row w.WordID: an error if the id is outside
// 0…K−1 or came before, or the centroid does not hold dim finite values.
func (t *CentroidTable) Add(w *Word) error {
	k := len(t.seen)
	switch {
	case int64(w.WordID) >= int64(k):
		return fmt.Errorf("word id %d outside the %d words 0…%d", w.WordID, k, k-1)
	case t.seen[w.WordID]:
		return fmt.Errorf("word %d twice", w.WordID)
	}
	if err := w.Check(t.dim); err != nil {
		return err
	}
	copy(t.cent[int(w.WordID)*t.dim:], w.Centroid)
	t.seen[w.WordID] = true
	t.n++
	return nil
}

// Centroids returns the K centroids, row-major: an error unless every word
// was added.
func (t *CentroidTable) Centroids() ([]float32, error) {
	if k := len(t.seen); t.n != k {
		for i, ok := range t.seen {
			if !ok {
				return nil, fmt.Errorf("%d of %d words: word %d missing", t.n, k, i)
			}
		}
	}
	return t.cent, nil
}

// CentroidsContent returns the content identity of a codebook's
// centroids (row-major, as CentroidTable lays them out): "sha256:" and the
// SHA-256, in hex, of their IEEE 754 bits, little-endian. Equal contents
// are equal codebooks bit for bit, wherever they are stored.
func CentroidsContent(cent []float32) string {
	h := NewCentroidsHash()
	h.Add(cent)
	return h.Content()
}

// CentroidsHash computes CentroidsContent of centroids given block by
// block, in word order, so that a writer or reader of a codebook need not
// hold all of its words at once.
type CentroidsHash struct {
	h   hash.Hash
	buf []byte
}

// NewCentroidsHash returns the hash of no centroids.
func NewCentroidsHash() *CentroidsHash {
	return &CentroidsHash{h: sha256.New(), buf: make([]byte, 0, 64<<10)}
}

// Add hashes the next values, row-major.
func (c *CentroidsHash) Add(cent []float32) {
	for _, v := range cent {
		if len(c.buf) == cap(c.buf) {
			c.h.Write(c.buf)
			c.buf = c.buf[:0]
		}
		c.buf = binary.LittleEndian.AppendUint32(c.buf, math.Float32bits(v))
	}
}

// Content returns CentroidsContent of every value added.
func (c *CentroidsHash) Content() string {
	c.h.Write(c.buf)
	c.buf = c.buf[:0]
	return "sha256:" + hex.EncodeToString(c.h.Sum(nil))
}
