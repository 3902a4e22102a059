//go:build !purego

package nn

import "golang.org/x/sys/cpu"

// useFMA reports whether the CPU has AVX, AVX2 and FMA and the OS saves
// the YMM registers (XGETBV), the checks Intel's manual prescribes before
// using 256-bit vectors (x/sys/cpu makes them). Without them the portable
// kernel runs.
var useFMA = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

// panelFMA is panelGo with AVX2 fused multiply-adds: xs points at a strip
// of stripRows points and panel at a panel of panelCols centroids, both
// dim (a multiple of 4) long, norms at the panel's 16 squared norms, thr at
// the strip's 6 thresholds and out at 96 floats. The dot products round
// differently from panelGo's (one rounding per fused step), within the
// same error bound.
//
//go:noescape
func panelFMA(xs, panel *float32, dim int, norms, thr, out *float32) uint64

// sqDist4AVX is sqDist of the four consecutive points of dimension dim (a
// multiple of 16) at x to c, each bounded by its entry of bound[0:4], into
// out, with sqDist's operations in sqDist's order: the exact values of the
// points under their bounds, values at or above the bounds of the others.
//
//go:noescape
func sqDist4AVX(x *float32, dim int, c, bound *float32, out *[4]float32)

// panelFMARows is panelFMA with the strip's stripRows points read from
// their own rows (rows points at stripRows slices, each at least dim
// long) instead of a packed strip, so that a point searched against
// several centroid sets is not packed for each: the same fused
// multiply-adds in the same order, and so the same scores and mask.
//
//go:noescape
func panelFMARows(rows *[]float32, panel *float32, dim int, norms, thr, out *float32) uint64
