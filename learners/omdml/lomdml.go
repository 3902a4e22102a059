package omdml

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// LOMDML is Low-rank Online Multi-modal Distance Metric Learning
// (Algorithm 2): each metric is kept as M_i = W_iᵀW_i with W_i ∈ R^{r_i×n_i},
// learnt by online gradient descent on the hinge, with Hedge weights θ across
// modalities (package doc). A step costs O(Σ r_i n_i) and never needs a PSD
// projection.
//
// It is not safe for concurrent use, except that Distance, Weights,
// Projection, Metric and Dims may be called concurrently with each other.
type LOMDML struct {
	core
	w []*mat.Dense // W_i, r_i×n_i

	// Per-modality scratch for the current step: a = p − p⁺, b = p − p⁻
	// (length n_i), and W_i a, W_i b (length r_i).
	a, b, wa, wb [][]float64
}

var _ Learner = (*LOMDML)(nil)

// NewLOMDML returns a LOMDML learner for modalities of dimensions dims, with
// r_i = min(p.Rank, n_i), θ_i = 1/m and W₀ as the package doc describes
// (I when r_i = n_i, else a Gaussian random projection drawn from p.Seed).
// Memory is O(Σ r_i n_i).
func NewLOMDML(dims []int, p Params) (*LOMDML, error) {
	c, err := newCore("lomdml", dims, p)
	if err != nil {
		return nil, err
	}
	m := len(dims)
	l := &LOMDML{
		core: c,
		w:    make([]*mat.Dense, m),
		a:    make([][]float64, m),
		b:    make([][]float64, m),
		wa:   make([][]float64, m),
		wb:   make([][]float64, m),
	}
	for i, n := range dims {
		r := min(p.Rank, n)
		data := make([]float64, r*n)
		if r == n {
			for j := range n {
				data[j*n+j] = 1
			}
		} else {
			// A stream per modality, so that a modality's W₀ does not
			// depend on the others.
			rng := rand.New(rand.NewPCG(p.Seed, uint64(i)))
			sd := 1 / math.Sqrt(float64(r)) // E[W₀ᵀW₀] = I
			for k := range data {
				data[k] = sd * rng.NormFloat64()
			}
		}
		l.w[i] = mat.NewDense(r, n, data)
		l.a[i] = make([]float64, n)
		l.b[i] = make([]float64, n)
		l.wa[i] = make([]float64, r)
		l.wb[i] = make([]float64, r)
	}
	return l, nil
}

// Params returns "beta", "gamma", "eta", "rank" and "seed" (the seed is
// exact below 2⁵³).
func (l *LOMDML) Params() map[string]float64 {
	return map[string]float64{
		"beta": l.p.Beta, "gamma": l.p.Gamma, "eta": l.p.Eta,
		"rank": float64(l.p.Rank), "seed": float64(l.p.Seed),
	}
}

// Projection returns a copy of W_i (r_i×n_i): d_i(a, b) = ‖W_i(a − b)‖², so
// an index can store W_i p instead of p and rank by Euclidean distance
// (paper §5.6). It panics if i is not in [0, m).
func (l *LOMDML) Projection(i int) *mat.Dense {
	return mat.DenseCopyOf(l.w[i])
}

// Metric returns M_i = W_iᵀW_i (n_i×n_i), in O(r_i n_i²). It panics if i is
// not in [0, m).
func (l *LOMDML) Metric(i int) *mat.SymDense {
	var m mat.SymDense
	m.SymOuterK(1, l.w[i].T())
	return &m
}

// Distance returns d(a, b) = Σ_i θ_i ‖W_i(a_i − b_i)‖². It does not
// allocate. It panics, as for a programmer error, if CheckSample rejects a
// or b.
func (l *LOMDML) Distance(a, b Sample) float64 {
	l.mustCheck("Distance", pairNames, a, b)
	var d float64
	for i, w := range l.w {
		d += l.theta[i] * projDist(w.RawMatrix(), a[i], b[i])
	}
	return d
}

// projDist returns ‖W(x − y)‖², forming x − y on the fly so that Distance
// needs no buffer.
func projDist(w blas64.General, x, y []float64) float64 {
	x, y = x[:w.Cols], y[:w.Cols]
	var sum float64
	for r := range w.Rows {
		row := w.Data[r*w.Stride : r*w.Stride+w.Cols]
		var q float64
		for j, wj := range row {
			q += wj * (x[j] - y[j])
		}
		sum += q * q
	}
	return sum
}

// Update performs one step of Algorithm 2 on the triplet (p, pos, neg) and
// returns the loss max(0, f + γ) suffered before it (package doc). It does
// not allocate. It panics, as for a programmer error, if CheckSample rejects
// p, pos or neg, and does so before changing any state.
func (l *LOMDML) Update(p, pos, neg Sample) float64 {
	l.mustCheck("Update", tripletNames, p, pos, neg)
	for i, w := range l.w {
		a, b, wa, wb := l.a[i], l.b[i], l.wa[i], l.wb[i]
		pi, ppos, pneg := p[i], pos[i], neg[i]
		for j := range a {
			a[j] = pi[j] - ppos[j]
			b[j] = pi[j] - pneg[j]
		}
		raw := w.RawMatrix()
		blas64.Gemv(blas.NoTrans, 1, raw, vec(a), 0, vec(wa))
		blas64.Gemv(blas.NoTrans, 1, raw, vec(b), 0, vec(wb))
		// f_i = ‖W a‖² − ‖W b‖² = d_i(p, p⁺) − d_i(p, p⁻).
		l.f[i] = blas64.Dot(vec(wa), vec(wa)) - blas64.Dot(vec(wb), vec(wb))
	}
	l.steps++
	loss := l.combine() + l.p.Gamma
	if !(loss > 0) {
		return 0
	}
	l.hedge()
	for i, w := range l.w {
		// ℓ_i = max(0, f_i + γ) (package doc, "Margin"); its gradient is 0
		// where ℓ_i = 0.
		if !(l.f[i]+l.p.Gamma > 0) {
			continue
		}
		// Eq. (7) with the paper's gradient (package doc, "LOMDML"),
		//	2(q⁻ − q⁺)pᵀ + 2(q⁺ − q)p⁺ᵀ + 2(q − q⁻)p⁻ᵀ = 2[(Wa)aᵀ − (Wb)bᵀ],
		// the same matrix regrouped by a = p − p⁺ and b = p − p⁻:
		//	W ← W − 2η(Wa)aᵀ + 2η(Wb)bᵀ.
		// wa and wb were computed from W before this step, as the
		// gradient requires.
		raw := w.RawMatrix()
		blas64.Ger(-2*l.p.Eta, vec(l.wa[i]), vec(l.a[i]), raw)
		blas64.Ger(2*l.p.Eta, vec(l.wb[i]), vec(l.b[i]), raw)
	}
	return loss
}

// vec wraps a slice as a unit-stride blas64.Vector.
func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

// State returns a copy of the model as a learners.State, in O(Σ r_i n_i):
//
//	Vectors[0]   = θ (length m)
//	Vectors[1+i] = W_i, row-major (r_i n_i)
//
// An element-wise average (learners.Average) is a valid model, though the
// average of the W_i is not that of the M_i = W_iᵀW_i (package doc,
// "Sharded training").
func (l *LOMDML) State() learners.State {
	vs := make([][]float64, 0, 1+len(l.w))
	vs = append(vs, append([]float64(nil), l.theta...))
	for _, w := range l.w {
		raw := w.RawMatrix()
		v := make([]float64, 0, raw.Rows*raw.Cols)
		for r := range raw.Rows {
			v = append(v, raw.Data[r*raw.Stride:r*raw.Stride+raw.Cols]...)
		}
		vs = append(vs, v)
	}
	return learners.State{Learner: l.name, Steps: l.steps, Vectors: vs}
}

// SetState replaces the model by st, which must have this learner's name
// and dimensions (r_i n_i values per W_i), finite values, and θ ≥ 0 not all
// zero (renormalised unless it sums to 1 within 1e-9). On error the learner
// is unchanged.
func (l *LOMDML) SetState(st learners.State) error {
	want := make([]int, 0, 1+len(l.w))
	want = append(want, len(l.w))
	for _, w := range l.w {
		r, n := w.Dims()
		want = append(want, r*n)
	}
	if err := l.checkState(st, want); err != nil {
		return err
	}
	for i, w := range l.w {
		raw := w.RawMatrix()
		v := st.Vectors[1+i]
		for r := range raw.Rows {
			copy(raw.Data[r*raw.Stride:r*raw.Stride+raw.Cols], v[r*raw.Cols:(r+1)*raw.Cols])
		}
	}
	l.setTheta(st.Vectors[0], st.Steps)
	return nil
}
