package solis

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"runtime"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// goldenDigest is the SHA-256 of every loss, the final Weights and the
// final State of each learner of lazyCases over goldenStream, as float64
// and float32 bits. It pins the updates bit for bit, so that a refactoring
// of Update (or of what it shares with the other learners) that changes a
// single rounding fails here even where the naive references' tolerance
// would let it pass.
const goldenDigest = "46635d84f621fa5dc4e331c7b55366205a4306463b24f76726aae90870da6510"

// goldenStream is two passes over a Zipf pool of 300 triplet features of 20
// non-zeros on 500 words, scaled by 100 so that w·u is of the order of the
// margin and its last bits reach the losses.
func goldenStream() (dim int, us []sparse.Vector) {
	pool := zipfPool(7, 500, 20, 300)
	for _, u := range pool {
		for k := range u.Val {
			u.Val[k] *= 100
		}
	}
	return 500, append(pool, pool...)
}

func TestUpdatesGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the digest is amd64's")
	}
	dim, us := goldenStream()
	h := sha256.New()
	var b [8]byte
	put64 := func(x float64) { binary.LittleEndian.PutUint64(b[:], math.Float64bits(x)); h.Write(b[:]) }
	for _, tc := range lazyCases() {
		a := tc.lazy(dim)
		h.Write([]byte(tc.name))
		for _, u := range us {
			put64(a.Update(u))
		}
		for _, w := range a.Weights(nil) {
			binary.LittleEndian.PutUint32(b[:4], math.Float32bits(w))
			h.Write(b[:4])
		}
		st := a.State()
		put64(float64(st.Steps))
		for _, v := range st.Vectors {
			for _, x := range v {
				put64(x)
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != goldenDigest {
		t.Fatalf("digest %s, want %s", got, goldenDigest)
	}
}
