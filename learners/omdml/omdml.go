package omdml

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// OMDML is Online Multi-modal Distance Metric Learning (Algorithm 1): a full
// Mahalanobis matrix M_i per modality, learnt by passive-aggressive steps with
// a PSD projection, and Hedge weights θ across modalities (package doc). A
// step costs O(Σ n_i²), plus an O(n_i³) eigendecomposition for every modality
// whose update may have left M_i indefinite.
//
// It is not safe for concurrent use, except that Distance, Weights, Metric
// and Dims may be called concurrently with each other.
type OMDML struct {
	core
	m  []*mat.SymDense // M_i, upper triangle stored
	lb []float64       // L_i ≤ λ_min(M_i) (package doc, OMDML 2)

	a, b []float64    // scratch: p − p⁺ and p − p⁻, length max n_i
	eig  mat.EigenSym // reused across projections

	projections, skipped int64
}

var _ Learner = (*OMDML)(nil)

// NewOMDML returns an OMDML learner for modalities of dimensions dims, with
// M_i = I and θ_i = 1/m. Memory is O(Σ n_i²).
func NewOMDML(dims []int, p Params) (*OMDML, error) {
	c, err := newCore("omdml", dims, p)
	if err != nil {
		return nil, err
	}
	o := &OMDML{core: c, m: make([]*mat.SymDense, len(dims)), lb: make([]float64, len(dims))}
	maxN := 0
	for i, n := range dims {
		m := mat.NewSymDense(n, nil)
		for j := range n {
			m.SetSym(j, j, 1)
		}
		o.m[i] = m
		o.lb[i] = 1 // λ_min(I)
		maxN = max(maxN, n)
	}
	o.a = make([]float64, maxN)
	o.b = make([]float64, maxN)
	return o, nil
}

// Params returns "c", "beta" and "gamma".
func (o *OMDML) Params() map[string]float64 {
	return map[string]float64{"c": o.p.C, "beta": o.p.Beta, "gamma": o.p.Gamma}
}

// Metric returns a copy of M_i. It panics if i is not in [0, m).
func (o *OMDML) Metric(i int) *mat.SymDense {
	m := mat.NewSymDense(o.dims[i], nil)
	m.CopySym(o.m[i])
	return m
}

// Projections returns how many eigendecompositions Update has done and how
// many it skipped because the step provably kept M_i PSD (package doc,
// OMDML 2).
func (o *OMDML) Projections() (done, skipped int64) { return o.projections, o.skipped }

// Distance returns d(a, b) = Σ_i θ_i (a_i − b_i)ᵀ M_i (a_i − b_i), which is
// ≥ 0 up to rounding. It does not allocate. It panics, as for a programmer
// error, if CheckSample rejects a or b.
func (o *OMDML) Distance(a, b Sample) float64 {
	o.mustCheck("Distance", pairNames, a, b)
	var d float64
	for i, m := range o.m {
		d += o.theta[i] * quad(m.RawSymmetric(), a[i], b[i])
	}
	return d
}

// Update performs one step of Algorithm 1 on the triplet (p, pos, neg) and
// returns the loss max(0, f + γ) suffered before it (package doc). It
// panics, as for a programmer error, if CheckSample rejects p, pos or neg,
// and does so before changing any state. It also panics if an
// eigendecomposition fails to converge, which takes non-finite entries in
// M_i: features so large that products of them overflow.
func (o *OMDML) Update(p, pos, neg Sample) float64 {
	o.mustCheck("Update", tripletNames, p, pos, neg)
	for i, m := range o.m {
		raw := m.RawSymmetric()
		o.f[i] = quad(raw, p[i], pos[i]) - quad(raw, p[i], neg[i])
	}
	o.steps++
	loss := o.combine() + o.p.Gamma
	if !(loss > 0) {
		return 0
	}
	o.hedge()
	for i := range o.m {
		o.step(i, p[i], pos[i], neg[i])
	}
	return loss
}

// step is the passive-aggressive update of M_i (Eq. 5) and its projection.
func (o *OMDML) step(i int, p, pos, neg []float64) {
	li := o.f[i] + o.p.Gamma // ℓ_i = max(0, f_i + γ): package doc, "Margin"
	if !(li > 0) {
		return
	}
	n := o.dims[i]
	a, b := o.a[:n], o.b[:n]
	var aa, bb, ab float64
	for j := range a {
		a[j] = p[j] - pos[j]
		b[j] = p[j] - neg[j]
		aa += a[j] * a[j]
		bb += b[j] * b[j]
		ab += a[j] * b[j]
	}
	// ‖V‖²_F = tr(V²) = ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² (package doc), computed
	// without V.
	// The same quantity is evaluated as s² + 2g, with g ≥ 0 the Gram
	// determinant of a and b (Cauchy–Schwarz), which cannot round to a
	// negative number when a ≈ ±b.
	s := bb - aa
	g := max(0, aa*bb-ab*ab)
	vv := s*s + 2*g
	if !(vv > 0) {
		// V = 0 (a = ±b), where every τ gives M_i − τV = M_i.
		return
	}
	tau := li / vv
	if !(tau > 0) {
		return // ‖V‖²_F overflowed to +Inf
	}
	tau = min(o.p.C, tau)
	raw := o.m[i].RawSymmetric()
	// M_i − τV = M_i + τbbᵀ − τaaᵀ.
	blas64.Syr(tau, blas64.Vector{N: n, Inc: 1, Data: b}, raw)
	blas64.Syr(-tau, blas64.Vector{N: n, Inc: 1, Data: a}, raw)

	// Weyl: λ_min(M_i − τV) ≥ L_i + τλ₋(bbᵀ − aaᵀ) (package doc, OMDML 2).
	o.lb[i] += tau * lambdaMinus(s, g)
	if o.lb[i] >= 0 {
		o.skipped++
		return
	}
	o.project(i)
}

// lambdaMinus returns the smallest eigenvalue of bbᵀ − aaᵀ, given
// s = ‖b‖² − ‖a‖² and g = ‖a‖²‖b‖² − (a·b)² ≥ 0. On span{a, b} the matrix
// has trace s and determinant −g, so its eigenvalues are the roots of
// λ² − sλ − g = 0; the negative one is (s − √(s² + 4g))/2, evaluated without
// cancellation when s > 0.
func lambdaMinus(s, g float64) float64 {
	r := math.Sqrt(s*s + 4*g)
	if s > 0 {
		return -2 * g / (s + r)
	}
	return (s - r) / 2
}

// project replaces M_i by its projection onto the PSD cone, clipping its
// negative eigenvalues to zero, and resets L_i.
//
// PSD(X) = QΛ⁺Qᵀ is computed as X − Σ_{λ_k<0} λ_k q_k q_kᵀ, equal in exact
// arithmetic, which costs O(n²) per clipped eigenvalue instead of an O(n³)
// product; X has at most one negative eigenvalue (package doc, OMDML 1),
// more only through rounding.
//
// mat.EigenSym allocates its n×n copy of X on every call; that is O(n²)
// against the O(n³) of the decomposition itself.
func (o *OMDML) project(i int) {
	m := o.m[i]
	n := o.dims[i]
	if !o.eig.Factorize(m, true) {
		panic(fmt.Sprintf("omdml.Update: eigendecomposition of M_%d (%d×%d) did not converge; are the features finite and below 1e75?", i, n, n))
	}
	o.projections++
	vals := o.eig.RawValues() // ascending
	if vals[0] >= 0 {
		// Nothing to clip; the smallest eigenvalue, less the error bound of
		// a backward-stable symmetric eigensolver (a small multiple of
		// nε‖M‖₂), is the tightest safe bound.
		tol := float64(n) * 0x1p-52 * max(math.Abs(vals[0]), math.Abs(vals[n-1]))
		o.lb[i] = max(0, vals[0]-tol)
		return
	}
	q := o.eig.RawQ().(*mat.Dense).RawMatrix()
	raw := m.RawSymmetric()
	for k := 0; k < n && vals[k] < 0; k++ {
		blas64.Syr(-vals[k], blas64.Vector{N: n, Inc: q.Stride, Data: q.Data[k:]}, raw)
	}
	o.lb[i] = 0
}

// quad returns (x − y)ᵀ M (x − y) from the upper triangle of M, forming x − y
// on the fly so that Distance needs no buffer.
func quad(m blas64.Symmetric, x, y []float64) float64 {
	n, s, d := m.N, m.Stride, m.Data
	x, y = x[:n], y[:n]
	var sum float64
	for i := range n {
		row := d[i*s+i : i*s+n]
		xi, yi := x[i+1:], y[i+1:]
		var off float64
		for j, mij := range row[1:] {
			off += mij * (xi[j] - yi[j])
		}
		di := x[i] - y[i]
		sum += di * (row[0]*di + 2*off)
	}
	return sum
}

// State returns a copy of the model as a learners.State, in O(Σ n_i²):
//
//	Vectors[0]   = θ (length m)
//	Vectors[1+i] = M_i, row-major with both triangles (n_i²)
//	Vectors[1+m] = the bounds L_i ≤ λ_min(M_i) that let Update skip
//	               projections (package doc, OMDML 2; length m)
//
// Element-wise averages (learners.Average) stay valid: θ stays on the
// simplex, the M_i stay PSD, and λ_min is concave, so the average of the L_i
// bounds λ_min of the average M_i. Exporting L_i, rather than recomputing
// it, makes State followed by SetState change nothing.
func (o *OMDML) State() learners.State {
	m := len(o.dims)
	vs := make([][]float64, 0, m+2)
	vs = append(vs, append([]float64(nil), o.theta...))
	for i, n := range o.dims {
		raw := o.m[i].RawSymmetric()
		v := make([]float64, n*n)
		for r := range n {
			for c := r; c < n; c++ {
				x := raw.Data[r*raw.Stride+c]
				v[r*n+c], v[c*n+r] = x, x
			}
		}
		vs = append(vs, v)
	}
	vs = append(vs, append([]float64(nil), o.lb...))
	return learners.State{Learner: o.name, Steps: o.steps, Vectors: vs}
}

// SetState replaces the model by st, which must have this learner's name
// and dimensions, finite values, θ ≥ 0 not all zero (renormalised unless it
// sums to 1 within 1e-9), exactly symmetric M_i and L_i ≤ min_j (M_i)_jj. It
// cannot check cheaply that M_i is PSD and L_i ≤ λ_min(M_i): a state from
// this package, or an element-wise average of such states, satisfies both.
// On error the learner is unchanged.
func (o *OMDML) SetState(st learners.State) error {
	m := len(o.dims)
	want := make([]int, 0, m+2)
	want = append(want, m)
	for _, n := range o.dims {
		want = append(want, n*n)
	}
	want = append(want, m)
	if err := o.checkState(st, want); err != nil {
		return err
	}
	lb := st.Vectors[1+m]
	for i, n := range o.dims {
		v := st.Vectors[1+i]
		minDiag := math.Inf(1)
		for r := range n {
			minDiag = min(minDiag, v[r*n+r])
			for c := r + 1; c < n; c++ {
				if v[r*n+c] != v[c*n+r] {
					return fmt.Errorf("omdml: SetState: M_%d is not symmetric at (%d,%d): %v ≠ %v", i, r, c, v[r*n+c], v[c*n+r])
				}
			}
		}
		if lb[i] > minDiag {
			return fmt.Errorf("omdml: SetState: bound L_%d = %v exceeds the smallest diagonal entry %v of M_%d, so it is no lower bound on λ_min", i, lb[i], minDiag, i)
		}
	}
	for i, n := range o.dims {
		v := st.Vectors[1+i]
		raw := o.m[i].RawSymmetric()
		for r := range n {
			copy(raw.Data[r*raw.Stride+r:r*raw.Stride+n], v[r*n+r:r*n+n])
		}
	}
	copy(o.lb, lb)
	o.setTheta(st.Vectors[0], st.Steps)
	return nil
}
