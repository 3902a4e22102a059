//go:build !amd64 || purego

package sift

// useAVX is false: there is no vector code for this platform (or the
// purego build tag asked for none).
var useAVX = false

// useAVX2 is false for the same reasons.
var useAVX2 = false

func convSymAVX(dst, src *float32, n int, offs []int, k []float32) {
	panic("sift: convSymAVX without AVX")
}

func convSym4AVX(dst *float32, stride int, src *float32, n int, rows []int, k []float32) {
	panic("sift: convSym4AVX without AVX")
}

// prefetch does nothing: prefetching is left to the hardware.
func prefetch(p *float32, n int) {}

func scatterAVX(hist *float32, idx *int32, wts *float32, n int) {
	panic("sift: scatterAVX without AVX")
}

func scatterCellsAVX2(hist *float32, idx *int32, wts *float32, n int) bool {
	panic("sift: scatterCellsAVX2 without AVX2")
}

func isExtremumAVX(p *float32, plane, w int, top bool) bool {
	panic("sift: isExtremumAVX without AVX")
}

func convRowsAVX(dst, src *float32, rows []int, k []float32) {
	panic("sift: convRowsAVX without AVX")
}

func gradPolarAVX(dx, dy, mag, ang *float32, n int) {
	panic("sift: gradPolarAVX without AVX")
}

func subAVX(dst, a, b *float32, n int) { panic("sift: subAVX without AVX") }

func dogMaskAVX(lo, hi *float32, n int, thr float32, mask *uint8, d *float32) {
	panic("sift: dogMaskAVX without AVX")
}

func descWeightsAVX(in *descSamples, n int, ori, binsPerDeg float32, idx *int32, wts *float32) {
	panic("sift: descWeightsAVX without AVX")
}

func gatherRowAVX(r *rowGather, n int) { panic("sift: gatherRowAVX without AVX") }

func upsampleRowAVX(s, d *float32, n int) { panic("sift: upsampleRowAVX without AVX") }

func blendRowsAVX(a, m, b *float32, n int) { panic("sift: blendRowsAVX without AVX") }

func dogRefineAVX(up, d, dn *float32, mask *uint8, n int) {
	panic("sift: dogRefineAVX without AVX")
}

func orientRowsAVX(gl *float32, w, m, rows int, wy, wx, dx, dy, wts *float32) {
	panic("sift: orientRowsAVX without AVX")
}

func downsampleRowAVX(s, d *float32, n int) { panic("sift: downsampleRowAVX without AVX") }

func transposeInAVX(t *float32, rows *[8]*float32, n int) {
	panic("sift: transposeInAVX without AVX")
}

func transposeOutAVX(rows *[8]*float32, t *float32, n int) {
	panic("sift: transposeOutAVX without AVX")
}

func filterColsAVX(sums, cols *float32, gi *int32, gw *float32, taps, n int) {
	panic("sift: filterColsAVX without AVX")
}

func mulAddAVX(o, s *float32, w float32, n int, set bool) {
	panic("sift: mulAddAVX without AVX")
}

func grayRowAVX2(o *float32, s *uint8, n int) {
	panic("sift: grayRowAVX2 without AVX2")
}
