//go:build !amd64 || purego

package nn

// useFMA is false: there is no vector kernel for this platform (or the
// purego build tag asked for none).
var useFMA = false

func panelFMA(xs, panel *float32, dim int, norms, thr, out *float32) uint64 {
	panic("nn: panelFMA without AVX2")
}

func sqDist4AVX(x *float32, dim int, c, bound *float32, out *[4]float32) {
	panic("nn: sqDist4AVX without AVX")
}

func panelFMARows(rows *[]float32, panel *float32, dim int, norms, thr, out *float32) uint64 {
	panic("nn: panelFMARows without AVX2")
}
