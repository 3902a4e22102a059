//go:build !amd64 || purego

package lumajpeg

// useAVX2 is false off amd64 (or with the purego tag): idct runs in Go.
var useAVX2 = false

// idctStore is idctStoreGo of b, or of its transpose if transposed.
func idctStore(b *block, dst []byte, stride int, transposed bool) {
	if transposed {
		transpose(b)
	}
	idctStoreGo(b, dst, stride)
}

// idctScaled4 is idctScaled4Go.
func idctScaled4(b *block, dst []byte, stride int) { idctScaled4Go(b, dst, stride) }
