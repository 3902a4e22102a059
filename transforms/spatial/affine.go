package spatial

import "math"

// Affine is a map from query pixels to candidate pixels:
//
//	x' = A11·x + A12·y + Tx
//	y' = A21·x + A22·y + Ty
//
// A similarity (scale s, rotation θ) is the case A11 = A22 = s·cos θ,
// A21 = −A12 = s·sin θ.
type Affine struct {
	A11, A12, A21, A22 float64
	Tx, Ty             float64
}

// Identity is the affine map that moves nothing.
func Identity() Affine { return Affine{A11: 1, A22: 1} }

// Similarity returns the map that scales by s, rotates by theta (radians,
// from +x towards +y) and then translates by (tx, ty).
func Similarity(s, theta, tx, ty float64) Affine {
	sin, cos := math.Sincos(theta)
	return Affine{A11: s * cos, A12: -s * sin, A21: s * sin, A22: s * cos, Tx: tx, Ty: ty}
}

// Apply maps the query point (x, y) to the candidate.
func (t Affine) Apply(x, y float64) (float64, float64) {
	return t.A11*x + t.A12*y + t.Tx, t.A21*x + t.A22*y + t.Ty
}

// Scale is the map's change of scale, √|det A|: the factor by which it
// multiplies areas, square-rooted, which is s for a similarity.
func (t Affine) Scale() float64 { return math.Sqrt(math.Abs(t.A11*t.A22 - t.A12*t.A21)) }

// Rotation is the angle, in (−π, π], of the rotation nearest to A's linear
// part, atan2(A21 − A12, A11 + A22): θ for a similarity.
func (t Affine) Rotation() float64 { return math.Atan2(t.A21-t.A12, t.A11+t.A22) }

// xf is a transform as the inlier test uses it, in float32 so that the
// test is the same arithmetic wherever it runs: the linear part, the
// translation, and the log-scale change and rotation that a
// correspondence's own frames must agree with.
type xf struct {
	a11, a12, a21, a22, tx, ty float32
	lr, dt                     float32
}

// similarity is the transform that maps correspondence h's query frame
// onto its candidate frame: s = σ_c/σ_q = e^lr, θ = dt, and the
// translation that takes the query point onto the candidate point.
func similarity(h *corr) xf {
	s := math.Exp(float64(h.lr))
	sin, cos := math.Sincos(float64(h.dt))
	a, b := float32(s*cos), float32(s*sin)
	return xf{
		a11: a, a12: -b, a21: b, a22: a,
		tx: h.qx - (a*h.px - b*h.py),
		ty: h.qy - (b*h.px + a*h.py),
		lr: h.lr, dt: h.dt,
	}
}

// affine returns t as an xf, its scale and rotation from Scale and
// Rotation, and whether it is usable: finite, and preserving orientation
// (det A > 0; a mirror image is no view of the same scene).
func affine(t Affine) (xf, bool) {
	det := t.A11*t.A22 - t.A12*t.A21
	if !(det > 0) || math.IsInf(det, 0) || math.IsNaN(t.Tx) || math.IsNaN(t.Ty) ||
		math.IsInf(t.Tx, 0) || math.IsInf(t.Ty, 0) {
		return xf{}, false
	}
	return xf{
		a11: float32(t.A11), a12: float32(t.A12), a21: float32(t.A21), a22: float32(t.A22),
		tx: float32(t.Tx), ty: float32(t.Ty),
		lr: float32(0.5 * math.Log(det)),
		dt: float32(wrap(t.Rotation())),
	}, true
}

// toAffine widens x's map.
func (x *xf) toAffine() Affine {
	return Affine{A11: float64(x.a11), A12: float64(x.a12), A21: float64(x.a21), A22: float64(x.a22),
		Tx: float64(x.tx), Ty: float64(x.ty)}
}

// wrap returns a modulo 2π, in [0, 2π).
func wrap(a float64) float64 {
	a -= 2 * math.Pi * math.Floor(a/(2*math.Pi))
	if a >= 2*math.Pi { // a tiny negative a rounds up to 2π
		a = 0
	}
	return a
}

// fitAffine fits the affine map from query to candidate points of the
// correspondences idx by least squares, minimising Σ‖A·p + t − q‖². With
// centred coordinates p̃ = p − p̄, q̃ = q − q̄ the two rows of A solve the
// same 2×2 normal equations M·aᵀ = Σ p̃·q̃ᵀ with M = Σ p̃·p̃ᵀ, and
// t = q̄ − A·p̄. It reports false when the query points are (nearly)
// collinear, det M ≤ 10⁻⁹·(tr M)², where the fit is not determined.
func fitAffine(corrs []corr, idx []int32) (Affine, bool) {
	if len(idx) < 3 {
		return Affine{}, false
	}
	var mpx, mpy, mqx, mqy float64
	for _, k := range idx {
		c := &corrs[k]
		mpx += float64(c.px)
		mpy += float64(c.py)
		mqx += float64(c.qx)
		mqy += float64(c.qy)
	}
	n := float64(len(idx))
	mpx, mpy, mqx, mqy = mpx/n, mpy/n, mqx/n, mqy/n
	var sxx, sxy, syy, sxu, syu, sxv, syv float64
	for _, k := range idx {
		c := &corrs[k]
		x, y := float64(c.px)-mpx, float64(c.py)-mpy
		u, v := float64(c.qx)-mqx, float64(c.qy)-mqy
		sxx += x * x
		sxy += x * y
		syy += y * y
		sxu += x * u
		syu += y * u
		sxv += x * v
		syv += y * v
	}
	det := sxx*syy - sxy*sxy
	tr := sxx + syy
	if !(det > 1e-9*tr*tr) {
		return Affine{}, false
	}
	t := Affine{
		A11: (syy*sxu - sxy*syu) / det,
		A12: (sxx*syu - sxy*sxu) / det,
		A21: (syy*sxv - sxy*syv) / det,
		A22: (sxx*syv - sxy*sxv) / det,
	}
	t.Tx = mqx - (t.A11*mpx + t.A12*mpy)
	t.Ty = mqy - (t.A21*mpx + t.A22*mpy)
	return t, true
}
