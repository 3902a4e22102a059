package formats

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
)

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
	case len(w.Centroid) != t.dim:
		return fmt.Errorf("word %d has %d values, want %d", w.WordID, len(w.Centroid), t.dim)
	}
	for _, v := range w.Centroid {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("word %d has a non-finite centroid", w.WordID)
		}
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
	h := sha256.New()
	buf := make([]byte, 0, 64<<10)
	for _, v := range cent {
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
	}
	h.Write(buf)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
