package oasis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
)

// maxFullDim bounds Full's dimension so that d² cannot overflow an int on
// any platform; memory (8d² bytes, 128 MB at d = 4096) is the real limit.
const maxFullDim = 1 << 15

// Full is OASIS with a full matrix W ∈ R^{d×d}, for dense features of up to
// a few thousand dimensions (package doc):
//
//	S_W(a, b) = aᵀWb,   L = max(0, 1 − xᵀW(x⁺ − x⁻)),
//	τ = min(C, L/(‖x‖²‖x⁺ − x⁻‖²)),   W ← W + τ·x(x⁺ − x⁻)ᵀ,   W₀ = I.
//
// The update is a rank-one BLAS update (Dger), so V = x(x⁺ − x⁻)ᵀ is never
// formed. W is not
// kept symmetric: OASIS does not impose symmetry or positivity (the
// paper's Eq. (3) and the text after it). An Update or a Similarity costs
// O(d²) time and allocates nothing. Full is not safe for concurrent use.
type Full struct {
	p    Params
	d    int
	t    int64
	w    blas64.General // W, d×d, row-major with stride d
	diff []float64      // scratch: x⁺ − x⁻
}

// NewFull returns a full-matrix OASIS learner for dense features of dim
// dimensions, with W = I. It needs 8·dim² bytes.
func NewFull(dim int, p Params) (*Full, error) {
	if dim <= 0 || dim > maxFullDim {
		return nil, fmt.Errorf("oasis: Full dimension must be in [1, %d], got %d", maxFullDim, dim)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.NonNeg {
		return nil, fmt.Errorf("oasis: Full has no non-negative option (Params.NonNeg is Diagonal's)")
	}
	w := blas64.General{Rows: dim, Cols: dim, Stride: dim, Data: make([]float64, dim*dim)}
	for i := range dim {
		w.Data[i*dim+i] = 1
	}
	return &Full{p: p, d: dim, w: w, diff: make([]float64, dim)}, nil
}

// Name returns "oasis-full".
func (f *Full) Name() string { return "oasis-full" }

// Dim returns d, the dimension of the features; W is d×d.
func (f *Full) Dim() int { return f.d }

// Steps returns the number of Updates so far (zero-loss steps included).
func (f *Full) Steps() int64 { return f.t }

// Params returns "c".
func (f *Full) Params() map[string]float64 { return map[string]float64{"c": f.p.C} }

// mustDim panics, as for a programmer error, unless every vector has length
// d, naming the method and the argument.
func (f *Full) mustDim(method string, names []string, vs ...[]float64) {
	for k, v := range vs {
		if len(v) != f.d {
			panic(fmt.Sprintf("oasis: Full.%s: len(%s) = %d, want %d", method, names[k], len(v), f.d))
		}
	}
}

// bilinear returns aᵀWb = Σ_i a_i (W_i·b), skipping the rows where a_i = 0.
func (f *Full) bilinear(a, b []float64) float64 {
	d := f.d
	bv := blas64.Vector{N: d, Inc: 1, Data: b}
	var s float64
	for i, ai := range a {
		if ai == 0 {
			continue
		}
		s += ai * blas64.Dot(blas64.Vector{N: d, Inc: 1, Data: f.w.Data[i*d : i*d+d]}, bv)
	}
	return s
}

// Similarity returns S_W(a, b) = aᵀWb. It panics if len(a) or len(b) is not
// Dim().
func (f *Full) Similarity(a, b []float64) float64 {
	f.mustDim("Similarity", []string{"a", "b"}, a, b)
	return f.bilinear(a, b)
}

// Update performs one passive-aggressive step on the triplet (x, pos, neg),
// x being more similar to pos than to neg, and returns the loss
// max(0, 1 − S_W(x, pos) + S_W(x, neg)) suffered before it, computed as
// max(0, 1 − xᵀW(pos − neg)). It panics if a length is not Dim(), before
// changing any state. If x = 0 or pos = neg, V = 0: the loss is 1 and W does
// not change. Non-finite inputs are not detected.
func (f *Full) Update(x, pos, neg []float64) float64 {
	f.mustDim("Update", []string{"x", "pos", "neg"}, x, pos, neg)
	d := f.d
	diff := f.diff
	var dd, xx float64
	for j := range diff {
		diff[j] = pos[j] - neg[j]
		dd += diff[j] * diff[j]
		xx += x[j] * x[j]
	}
	f.t++
	loss := max(0, 1-f.bilinear(x, diff))
	if loss == 0 {
		return 0
	}
	// ‖x(x⁺ − x⁻)ᵀ‖²_F = ‖x‖²·‖x⁺ − x⁻‖² (an outer product's Frobenius
	// norm is the product of the vectors' norms), so V is never formed.
	// A zero product (V = 0) gives τ = C and a zero step.
	tau := min(f.p.C, loss/(xx*dd))
	if math.IsNaN(tau) {
		return loss
	}
	blas64.Ger(tau, blas64.Vector{N: d, Inc: 1, Data: x}, blas64.Vector{N: d, Inc: 1, Data: diff}, f.w)
	return loss
}

// Matrix returns a copy of W.
func (f *Full) Matrix() *mat.Dense {
	return mat.NewDense(f.d, f.d, append([]float64(nil), f.w.Data...))
}

// State returns a copy of the model as a learners.State, in O(d²), so that a
// sharded trainer can average full-matrix learners (learners.Average):
//
//	Steps      = the number of Updates
//	Vectors[0] = W, row-major (d² values)
//
// An element-wise average of W is a valid model: OASIS does not constrain
// W, so any finite matrix is one it could reach.
func (f *Full) State() learners.State {
	return learners.State{Learner: f.Name(), Steps: f.t, Vectors: [][]float64{append([]float64(nil), f.w.Data...)}}
}

// SetState replaces W and the step count by those of st, laid out as State
// describes; C stays. It returns an error, leaving the learner as it was,
// if st is not of "oasis-full", Vectors is not one vector of Dim()² values,
// or a value is not finite (learners.CheckState).
func (f *Full) SetState(st learners.State) error {
	if err := learners.CheckState(st, f.Name(), f.d*f.d); err != nil {
		return err
	}
	f.t = st.Steps
	copy(f.w.Data, st.Vectors[0])
	return nil
}
