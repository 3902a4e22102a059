package lego

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// name is the learner's registered name and State.Learner.
const name = "lego"

// maxDim bounds d = Σ dims so that d² cannot overflow an int on any
// platform; memory (8d² bytes for A, as much again for its factor) is the
// real limit.
const maxDim = 1 << 15

// Params are LEGO's hyper-parameters (package doc, "Parameters").
type Params struct {
	// Eta (η > 0) is the paper's learning rate: a pair step closes about
	// the fraction η ŷ²/(1 + η ŷ²) of the gap between the pair's distance
	// ŷ and its target.
	Eta float64
	// Target (u > 0) is the target distance of a triplet's similar pair
	// (x, x⁺), in units of squared distance.
	Target float64
	// Margin (γ > 0) is the triplet margin of Update's hinge loss
	// max(0, γ + d⁺ − d⁻); u + γ is the target distance of the dissimilar
	// pair (x, x⁻).
	Margin float64
}

// DefaultParams returns η = 0.01, u = 1 and γ = 4, which suit features
// whose squared distances between images are of order 10 (package doc,
// "Parameters"); the paper tunes η per data set.
func DefaultParams() Params { return Params{Eta: 0.01, Target: 1, Margin: 4} }

// Validate reports every parameter out of range: Eta, Target and Margin
// must be finite and > 0. NaN is always an error.
func (p Params) Validate() error {
	var errs []error
	if !finite(p.Eta) || p.Eta <= 0 {
		errs = append(errs, fmt.Errorf("lego: learning rate eta must be finite and > 0, got %v", p.Eta))
	}
	if !finite(p.Target) || p.Target <= 0 {
		errs = append(errs, fmt.Errorf("lego: target distance must be finite and > 0, got %v", p.Target))
	}
	if !finite(p.Margin) || p.Margin <= 0 {
		errs = append(errs, fmt.Errorf("lego: margin must be finite and > 0, got %v", p.Margin))
	}
	if finite(p.Target) && finite(p.Margin) && !finite(p.Target+p.Margin) {
		errs = append(errs, fmt.Errorf("lego: target + margin overflows (%v + %v)", p.Target, p.Margin))
	}
	return errors.Join(errs...)
}

// LEGO is the online LogDet metric learner of the package doc as a
// learners.DenseOnline: it keeps A (d×d, symmetric positive definite,
// A₀ = I) over the concatenation of the modalities of dimensions Dims, and
// learns from triplets (Update) or from the paper's pairs with target
// distances (UpdatePair).
//
// Retrieval is by learners.Euclidean between Item(x) = Query(x) = U x,
// A = UᵀU, the factor computed once after an Update or SetState and
// cached. Item, Query, Distance, Matrix, State and the other read-only
// methods are safe for concurrent use with each other; Update, UpdatePair
// and SetState are not safe for concurrent use with anything.
type LEGO struct {
	p    Params
	dims []int
	d    int
	t    int64     // steps so far
	a    []float64 // A, d×d row-major, exactly symmetric
	// scratch for Update: the pair differences and A times them
	zp, zn, g, h []float64

	mu  sync.Mutex // serialises computing emb
	emb atomic.Pointer[embedding]
}

var _ learners.DenseOnline = (*LEGO)(nil)

// embedding is a factor L of A = LᵀL: the upper-triangular Cholesky factor
// tri, or, when full.Data is not nil, the eigen-factor full.
type embedding struct {
	tri  blas64.Triangular
	full blas64.General
}

// New returns LEGO for modalities of dimensions dims, with A = I. Σ dims
// must be at most 32768; the learner needs about 16(Σ dims)² bytes once
// it embeds.
func New(dims []int, p Params) (*LEGO, error) {
	d, err := learners.Width(name, dims, maxDim)
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	a := make([]float64, d*d)
	for i := range d {
		a[i*d+i] = 1
	}
	return &LEGO{
		p: p, dims: slices.Clone(dims), d: d, a: a,
		zp: make([]float64, d), zn: make([]float64, d), g: make([]float64, d), h: make([]float64, d),
	}, nil
}

// Name returns "lego".
func (l *LEGO) Name() string { return name }

// Dims returns a copy of the modality dimensions; inputs have Σ n_i = Dim()
// values.
func (l *LEGO) Dims() []int { return slices.Clone(l.dims) }

// Dim returns d = Σ n_i; A is d×d.
func (l *LEGO) Dim() int { return l.d }

// Params returns "eta", "target" and "margin", the names the registered
// factory takes.
func (l *LEGO) Params() map[string]float64 {
	return map[string]float64{"eta": l.p.Eta, "target": l.p.Target, "margin": l.p.Margin}
}

// Steps returns the number of successful Update and UpdatePair calls,
// zero-loss triplets included.
func (l *LEGO) Steps() int64 { return l.t }

// Metric returns learners.Euclidean: the embeddings' squared distance is
// the learnt d_A.
func (l *LEGO) Metric() learners.Metric { return learners.Euclidean }

// Matrix returns a copy of A.
func (l *LEGO) Matrix() *mat.SymDense {
	return mat.NewSymDense(l.d, slices.Clone(l.a))
}

// Distance returns d_A(a, b) = (a − b)ᵀA(a − b) in O(d²). It panics if
// len(a) or len(b) is not Dim().
func (l *LEGO) Distance(a, b []float64) float64 {
	if len(a) != l.d || len(b) != l.d {
		panic(fmt.Sprintf("lego: Distance of vectors of lengths %d and %d, want %d", len(a), len(b), l.d))
	}
	z := make([]float64, l.d)
	for j := range z {
		z[j] = a[j] - b[j]
	}
	return l.quad(z)
}

// quad returns zᵀAz.
func (l *LEGO) quad(z []float64) float64 {
	zv := vec(z)
	var s float64
	for i, zi := range z {
		if zi != 0 {
			s += zi * blas64.Dot(vec(l.a[i*l.d:(i+1)*l.d]), zv)
		}
	}
	return s
}

// checkVectors returns an error naming the method and the argument if a
// vector does not have Dim() values or has one that is NaN or infinite.
func (l *LEGO) checkVectors(method string, names []string, vs ...[]float64) error {
	for k, v := range vs {
		if len(v) != l.d {
			return fmt.Errorf("lego: %s: len(%s) = %d, want %d", method, names[k], len(v), l.d)
		}
		for j, e := range v {
			if !finite(e) {
				return fmt.Errorf("lego: %s: %s[%d] is %v", method, names[k], j, e)
			}
		}
	}
	return nil
}

// UpdatePair takes the paper's step on the pair (u, v) with the target
// distance y ≥ 0 (package doc, "The paper's update"), and returns the
// distance ŷ = d_A(u, v) before it. A pair with u = v leaves A as it is
// (ŷ = 0) but counts as a step. It returns an error, changing nothing, if a
// length is not Dim(), a value is not finite, y is negative, or the step
// would overflow.
func (l *LEGO) UpdatePair(u, v []float64, y float64) (float64, error) {
	if err := l.checkVectors("UpdatePair", []string{"u", "v"}, u, v); err != nil {
		return 0, err
	}
	if !finite(y) || y < 0 {
		return 0, fmt.Errorf("lego: UpdatePair: target distance %v, want finite and >= 0", y)
	}
	z, g := l.zp, l.g
	for j := range z {
		z[j] = u[j] - v[j]
	}
	l.mulA(z, nil, g, nil)
	yhat := blas64.Dot(vec(z), vec(g))
	if !finite(yhat) {
		return 0, fmt.Errorf("lego: UpdatePair: d_A(u, v) overflows (%v)", yhat)
	}
	var beta float64
	if yhat > 0 {
		beta = stepCoef(l.p.Eta, y, yhat)
	}
	if !l.stepFinite(beta, g, 0, nil) {
		return 0, fmt.Errorf("lego: UpdatePair: the step overflows (d_A(u, v) = %v, target %v)", yhat, y)
	}
	l.rankTwo(beta, g, 0, nil)
	l.t++
	return yhat, nil
}

// Update learns from the triplet (x, pos, neg), x being more similar to pos
// than to neg, and returns the hinge loss max(0, γ + d_A(x, pos) −
// d_A(x, neg)) suffered before the step. When the loss is positive it
// takes the paper's step on (x, pos) toward the target u if d_A(x, pos) >
// u, then on (x, neg) toward u + γ if d_A(x, neg) < u + γ (package doc,
// "Triplets"). It returns an error, changing nothing (the step count
// included), if a length is not Dim(), a value is NaN or infinite, or a
// distance or the step overflows. It costs O(d²) time and allocates
// nothing.
func (l *LEGO) Update(x, pos, neg []float64) (float64, error) {
	if err := l.checkVectors("Update", tripletArgs[:], x, pos, neg); err != nil {
		return 0, err
	}
	zp, zn, g, h := l.zp, l.zn, l.g, l.h
	for j := range zp {
		zp[j] = x[j] - pos[j]
		zn[j] = x[j] - neg[j]
	}
	l.mulA(zp, zn, g, h) // g = A z⁺, h = A z⁻
	dp := blas64.Dot(vec(zp), vec(g))
	dn := blas64.Dot(vec(zn), vec(h))
	if !finite(dp) || !finite(dn) {
		return 0, fmt.Errorf("lego: Update: a distance overflows (d⁺ = %v, d⁻ = %v)", dp, dn)
	}
	loss := max(0, l.p.Margin+dp-dn)
	if !finite(loss) {
		return 0, fmt.Errorf("lego: Update: the loss overflows (d⁺ = %v, d⁻ = %v)", dp, dn)
	}
	if loss == 0 {
		l.t++
		return 0, nil
	}
	// Step 1, on (x, pos) if d⁺ > u: A' = A − β₁ g gᵀ.
	u, v := l.p.Target, l.p.Target+l.p.Margin
	var b1 float64
	if dp > u {
		b1 = stepCoef(l.p.Eta, u, dp)
	}
	// Step 2, on (x, neg) if d⁻ < u + γ, under A': A'z⁻ = h − β₁ g (g·z⁻),
	// and A'' = A' − β₂ (A'z⁻)(A'z⁻)ᵀ. h becomes A'z⁻ in place.
	var b2 float64
	if dn < v {
		if b1 != 0 {
			blas64.Axpy(-b1*blas64.Dot(vec(g), vec(zn)), vec(g), vec(h))
		}
		// d_{A'}(x, neg) ≤ d⁻ (A' ⪯ A); it is 0 only if x = neg, up to
		// rounding, and then the pair says nothing.
		if dn1 := blas64.Dot(vec(zn), vec(h)); dn1 > 0 {
			b2 = stepCoef(l.p.Eta, v, dn1)
		}
	}
	if !l.stepFinite(b1, g, b2, h) {
		return 0, fmt.Errorf("lego: Update: the step overflows (d⁺ = %v, d⁻ = %v)", dp, dn)
	}
	l.rankTwo(b1, g, b2, h)
	l.t++
	return loss, nil
}

var tripletArgs = [3]string{"x", "pos", "neg"}

// stepCoef returns the coefficient β = η(ȳ − y)/(1 + η(ȳ − y)ŷ) of the step
// A ← A − β (Az)(Az)ᵀ on a pair at distance ŷ > 0 with target y, computed
// as η(ȳ − y)ȳ/ŷ with ȳ in the form that does not cancel (package doc,
// "Numerics").
func stepCoef(eta, y, yhat float64) float64 {
	b := eta*y*yhat - 1
	s := math.Hypot(b, 2*math.Sqrt(eta)*yhat) // √(b² + 4ηŷ²)
	var ybar float64
	if b >= 0 {
		ybar = (b + s) / (2 * eta * yhat)
	} else {
		ybar = 2 * yhat / (s - b)
	}
	return eta * (ybar - y) * ybar / yhat
}

// stepFinite reports whether the update of rankTwo with these arguments
// keeps A finite: β₁, β₂ finite and |β₁| max g² + |β₂| max h² finite.
func (l *LEGO) stepFinite(b1 float64, g []float64, b2 float64, h []float64) bool {
	maxSq := func(v []float64) float64 {
		var m float64
		for _, e := range v {
			m = max(m, e*e)
		}
		return m
	}
	if !finite(b1) || !finite(b2) {
		return false
	}
	var s float64
	if b1 != 0 {
		s += math.Abs(b1) * maxSq(g)
	}
	if b2 != 0 {
		s += math.Abs(b2) * maxSq(h)
	}
	return finite(s)
}

// mulA sets g = A z⁺ and, if zn is not nil, h = A z⁻, in one pass over A
// (A is symmetric, so row i of A dotted with z is (Az)_i).
func (l *LEGO) mulA(zp, zn, g, h []float64) {
	d := l.d
	for i := range d {
		row := vec(l.a[i*d : (i+1)*d])
		g[i] = blas64.Dot(row, vec(zp))
		if zn != nil {
			h[i] = blas64.Dot(row, vec(zn))
		}
	}
}

// rankTwo sets A ← A − β₁ g gᵀ − β₂ h hᵀ (h is ignored when β₂ = 0) and
// invalidates the embedding. Element (i, j) subtracts β₁(g_i g_j) +
// β₂(h_i h_j), the same floating-point value as (j, i), so A stays exactly
// symmetric.
func (l *LEGO) rankTwo(b1 float64, g []float64, b2 float64, h []float64) {
	if b1 == 0 && b2 == 0 {
		return
	}
	d := l.d
	for i := range d {
		row := l.a[i*d : (i+1)*d]
		gi := g[i]
		if b2 == 0 {
			for j := range row {
				row[j] -= b1 * (gi * g[j])
			}
			continue
		}
		hi := h[i]
		for j := range row {
			row[j] -= b1*(gi*g[j]) + b2*(hi*h[j])
		}
	}
	l.emb.Store(nil)
}

// State returns a copy of the model as a learners.State, in O(d²):
//
//	Steps      = the number of steps (Steps)
//	Vectors[0] = A, row-major (d² values)
//
// The element-wise average of such states (learners.Average) is a valid
// model: symmetric positive definite matrices form a convex cone.
func (l *LEGO) State() learners.State {
	return learners.State{Learner: name, Steps: l.t, Vectors: [][]float64{slices.Clone(l.a)}}
}

// SetState replaces A and the step count by those of st, laid out as State
// describes; the parameters stay. It returns an error, leaving the learner
// as it was, if st is not a "lego" state of one vector of Dim()² finite
// values (learners.CheckState), or that vector is not an exactly symmetric
// matrix that Cholesky factorises (positive definite). It costs O(d³); the
// factor is kept as the embedding.
func (l *LEGO) SetState(st learners.State) error {
	d := l.d
	if err := learners.CheckState(st, name, d*d); err != nil {
		return err
	}
	a := st.Vectors[0]
	for i := range d {
		for j := i + 1; j < d; j++ {
			if a[i*d+j] != a[j*d+i] {
				return fmt.Errorf("lego: SetState: A is not symmetric: A[%d,%d] = %v but A[%d,%d] = %v", i, j, a[i*d+j], j, i, a[j*d+i])
			}
		}
	}
	e, ok := cholesky(a, d)
	if !ok {
		return errors.New("lego: SetState: A is not positive definite (its Cholesky factorisation fails)")
	}
	l.a = slices.Clone(a)
	l.t = st.Steps
	l.emb.Store(e)
	return nil
}

// Item writes the embedding U x of x, A = UᵀU, into dst (grown if its
// capacity is short) and returns dst[:Dim()], so that ‖Item(a) − Item(b)‖²
// = d_A(a, b). The first call after an Update or SetState computes U in
// O(d³); later ones cost O(d²) and do not allocate when dst is large
// enough. dst must not overlap x. It panics if len(x) is not Dim().
func (l *LEGO) Item(dst, x []float64) []float64 {
	if len(x) != l.d {
		panic(fmt.Sprintf("lego: Item or Query of a %d-vector, want %d", len(x), l.d))
	}
	e := l.embedding()
	if cap(dst) < l.d {
		dst = make([]float64, l.d)
	}
	dst = dst[:l.d]
	if e.full.Data != nil {
		blas64.Gemv(blas.NoTrans, 1, e.full, vec(x), 0, vec(dst))
		return dst
	}
	copy(dst, x)
	blas64.Trmv(blas.NoTrans, e.tri, vec(dst))
	return dst
}

// Query is Item: the distance is symmetric, so queries and database images
// embed alike.
func (l *LEGO) Query(dst, x []float64) []float64 { return l.Item(dst, x) }

// embedding returns the factor of the current A, computing it if an Update
// has invalidated it. The atomic pointer lets concurrent Item calls read it
// without locking; the mutex makes the first of them compute it once while
// the others wait.
func (l *LEGO) embedding() *embedding {
	if e := l.emb.Load(); e != nil {
		return e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.emb.Load(); e != nil {
		return e
	}
	e := factor(l.a, l.d)
	l.emb.Store(e)
	return e
}

// factor returns a factor L of the symmetric d×d matrix a (row-major),
// a = LᵀL: the Cholesky factor, or, if a is not numerically positive
// definite, Λ^{1/2}Qᵀ from a = QΛQᵀ with negative eigenvalues clipped to
// 0. It panics if the eigendecomposition does not converge, which needs
// values near the float64 range.
func factor(a []float64, d int) *embedding {
	if e, ok := cholesky(a, d); ok {
		return e
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(d, slices.Clone(a)), true) {
		panic(fmt.Sprintf("lego: eigendecomposition of A (%d×%d) did not converge", d, d))
	}
	vals := eig.RawValues()
	var q mat.Dense
	eig.VectorsTo(&q) // eigenvectors in columns
	L := make([]float64, d*d)
	for k, v := range vals {
		s := math.Sqrt(max(0, v))
		for j := range d {
			L[k*d+j] = s * q.At(j, k)
		}
	}
	return &embedding{full: blas64.General{Rows: d, Cols: d, Stride: d, Data: L}}
}

// cholesky returns the upper-triangular U with a = UᵀU, if a (d×d,
// row-major, symmetric; only its upper triangle is read) is numerically
// positive definite.
func cholesky(a []float64, d int) (*embedding, bool) {
	var c mat.Cholesky
	if !c.Factorize(mat.NewSymDense(d, slices.Clone(a))) {
		return nil, false
	}
	var u mat.TriDense
	c.UTo(&u)
	return &embedding{tri: u.RawTriangular()}, true
}

// vec wraps a slice as a unit-stride BLAS vector.
func vec(v []float64) blas64.Vector { return blas64.Vector{N: len(v), Inc: 1, Data: v} }

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
