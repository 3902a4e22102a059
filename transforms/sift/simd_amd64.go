//go:build !purego

package sift

import "golang.org/x/sys/cpu"

// useAVX reports whether the CPU and the OS support AVX (256-bit float
// vectors): the CPU has AVX and OSXSAVE, and XGETBV says the OS saves the
// XMM and YMM state, the checks Intel's manual prescribes (x/sys/cpu makes
// them).
var useAVX = cpu.X86.HasAVX

// useAVX2 reports whether the CPU also has AVX2, for the lane-crossing
// permutations (VPERMPS) of scatterCellsAVX2.
var useAVX2 = useAVX && cpu.X86.HasAVX2

// convSymAVX is convSym on 8 floats at a time, for out = dst[:n] with n a
// multiple of 8, src pointing at the centre sample of x = 0, and offsets and
// kernel as for convSym (len(offs) = 2·(len(k)−1)). It computes exactly what
// convSymGo computes: no fused multiply-add, taps summed in the same order.
//
//go:noescape
func convSymAVX(dst, src *float32, n int, offs []int, k []float32)

// convSym4AVX is convSym4 on 8 floats at a time, for the rows dst[j·stride:]
// [:n], j = 0 … 3, with n a multiple of 8, rows offsets from src and the
// kernel as for convSym4 (len(rows) = 2·len(k)+2). It computes exactly
// what convSym4Go computes: no fused multiply-add, taps summed in the same
// order.
//
//go:noescape
func convSym4AVX(dst *float32, stride int, src *float32, n int, rows []int, k []float32)

// prefetch asks for the cache lines of p[0 … n) (n > 0) to be loaded, for
// rows that are read in a moment but not in an order the hardware
// prefetchers follow.
//
//go:noescape
func prefetch(p *float32, n int)

// scatterAVX is scatter on n samples, with the results of scatterGo; it
// reads the weights of ⌈n/8⌉ whole blocks.
//
//go:noescape
func scatterAVX(hist *float32, idx *int32, wts *float32, n int)

// scatterCellsAVX2 is scatter on n samples, with the results of
// scatterGo; it reads the weights of ⌈n/8⌉ whole blocks. It returns false
// (having added some of the samples) if an index is outside the histogram
// or its orientation bin, idx mod histRow, is not below descBins.
//
//go:noescape
func scatterCellsAVX2(hist *float32, idx *int32, wts *float32, n int) bool

// isExtremumAVX is isExtremum for the sample p points to, in the plane of
// its layer, with planes plane and rows w floats apart; it reads the rows
// around p in the planes before and the two after (with top, only the one
// after), up to p±w+2, and gives isExtremumGo's answer.
//
//go:noescape
func isExtremumAVX(p *float32, plane, w int, top bool) bool

// convRowsAVX is convRows for len(rows) a multiple of 4: for each t,
// dst[8t:8t+8] is convSymAVX of the 8 samples from src + rows[t]
// (centres), offsets −i and +i, with its sums.
//
//go:noescape
func convRowsAVX(dst, src *float32, rows []int, k []float32)

// dogRefineAVX is dogRefine on the n bytes of mask, n a multiple of 16,
// with d pointing at d[1] and up and dn at up[1] and dn[1]; it reads 8n+1
// values of each row from one before those.
//
//go:noescape
func dogRefineAVX(up, d, dn *float32, mask *uint8, n int)

// orientRowsAVX is orientRows for m ≥ 8, with gl pointing at the sample of
// row 0 and column 0; it reads the samples one before and one after each
// row's m and the rows above and below.
//
//go:noescape
func orientRowsAVX(gl *float32, w, m, rows int, wy, wx, dx, dy, wts *float32)

// gradPolarAVX is gradPolar on the first n values, n a multiple of 8, with
// the same results as gradPolarGo.
//
//go:noescape
func gradPolarAVX(dx, dy, mag, ang *float32, n int)

// subAVX sets dst[i] = b[i] − a[i] for i < n, n a multiple of 8.
//
//go:noescape
func subAVX(dst, a, b *float32, n int)

// dogMaskAVX is dogMask on n values, n a multiple of 8, storing the DoG
// values d[0 … n); it reads lo[−1], hi[−1], lo[n] and hi[n].
//
//go:noescape
func dogMaskAVX(lo, hi *float32, n int, thr float32, mask *uint8, d *float32)

// descWeightsAVX is descWeights on the first n samples, n a multiple of 8,
// with the results of descWeightsGo.
//
//go:noescape
func descWeightsAVX(in *descSamples, n int, ori, binsPerDeg float32, idx *int32, wts *float32)

// gatherRowAVX is gatherRow on the first n samples, n a multiple of 8,
// with the results of gatherRowGo.
//
//go:noescape
func gatherRowAVX(r *rowGather, n int)

// upsampleRowAVX is upsample2's horizontal blend of src row s into the odd
// and even samples d[1 … 2n] of a doubled row, n a multiple of 8; it reads
// s[0 … n].
//
//go:noescape
func upsampleRowAVX(s, d *float32, n int)

// blendRowsAVX is upsample2's vertical blend of rows a and b into m and b,
// on n values, n a multiple of 8.
//
//go:noescape
func blendRowsAVX(a, m, b *float32, n int)

// downsampleRowAVX sets d[x] = s[2x] for x < n, n a multiple of 8.
//
//go:noescape
func downsampleRowAVX(s, d *float32, n int)

// transposeInAVX sets t[8c+j] = rows[j][c] for c < n, n a multiple of 8:
// eight rows made eight-sample columns.
//
//go:noescape
func transposeInAVX(t *float32, rows *[8]*float32, n int)

// transposeOutAVX sets rows[j][x] = t[8x+j] for x < n, n a multiple of 8,
// undoing transposeInAVX.
//
//go:noescape
func transposeOutAVX(rows *[8]*float32, t *float32, n int)

// filterColsAVX is the area resize's horizontal pass on eight rows at
// once, for x < n: the column sums[8x:8x+8] = Σ_k gw[x·taps+k] ·
// cols[8i:8i+8], i = gi[x·taps+k], for k < taps, the products rounded
// before each sum, taps in increasing order from 0, as filterRow.
//
//go:noescape
func filterColsAVX(sums, cols *float32, gi *int32, gw *float32, taps, n int)

// mulAddAVX sets o[x] += w·s[x] for x < n, n a multiple of 8, the product
// rounded before the sum; with set, o[x] = 0 + w·s[x].
//
//go:noescape
func mulAddAVX(o, s *float32, w float32, n int, set bool)

// grayRowAVX2 sets o[x] = float32(s[x]) / 255 for x < n, n a multiple of
// 8: u8[s[x]], the division correctly rounded as Go's.
//
//go:noescape
func grayRowAVX2(o *float32, s *uint8, n int)
