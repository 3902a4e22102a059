package ssml

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/sparse"
)

// Params are SSML's hyper-parameters (package doc).
type Params struct {
	// Alpha (α > 0) weighs staying close to the Euclidean metric against
	// fitting the tag graph; in units of τ (package doc, Scale). A
	// dimension keeps a positive weight when the spread of tag-similar
	// pairs along it, relative to the mean spread, is below α.
	Alpha float64
	// Beta (β ≥ 0) weighs the ℓ2,1 row sparsity, in units of τ: a
	// dimension survives only if its row of αI − K̂ has norm above β/2.
	// β = 0 gives M = αI − K̂ before the projection.
	Beta float64
	// Epsilon (ε > 0) keeps D_ll = 1/(2‖m_l‖ + ε) finite when a row
	// vanishes.
	Epsilon float64
	// MaxIter (≥ 1) caps the number of updates.
	MaxIter int
	// Tol (≥ 0) stops the iteration once ‖M_{s+1} − M_s‖_F ≤
	// Tol·‖M_s‖_F; 0 runs all MaxIter updates.
	Tol float64
	// ZeroTol (in [0, 1)) sets to zero, before the PSD projection, every
	// row whose norm is at most ZeroTol times the largest row norm.
	ZeroTol float64
}

// DefaultParams returns α = 1 (keep the dimensions whose tag-neighbour
// spread is below average), β = 1 (drop the rows of αI − K̂ with norm below
// ½), ε = 10⁻¹⁰, at most 1000 updates (each costs O(d)), Tol = 10⁻¹² and
// ZeroTol = 10⁻⁶. The paper tunes α and β by cross-validation; so should
// callers with labelled validation data.
func DefaultParams() Params {
	return Params{Alpha: 1, Beta: 1, Epsilon: 1e-10, MaxIter: 1000, Tol: 1e-12, ZeroTol: 1e-6}
}

// Validate reports every parameter out of range. NaN is always an error.
func (p Params) Validate() error {
	var errs []error
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !finite(p.Alpha) || p.Alpha <= 0 {
		errs = append(errs, fmt.Errorf("ssml: Alpha must be finite and > 0, got %v", p.Alpha))
	}
	if !finite(p.Beta) || p.Beta < 0 {
		errs = append(errs, fmt.Errorf("ssml: Beta must be finite and >= 0, got %v", p.Beta))
	}
	if !finite(p.Epsilon) || p.Epsilon <= 0 {
		errs = append(errs, fmt.Errorf("ssml: Epsilon must be finite and > 0, got %v", p.Epsilon))
	}
	if p.MaxIter < 1 {
		errs = append(errs, fmt.Errorf("ssml: MaxIter must be >= 1, got %d", p.MaxIter))
	}
	if !finite(p.Tol) || p.Tol < 0 {
		errs = append(errs, fmt.Errorf("ssml: Tol must be finite and >= 0, got %v", p.Tol))
	}
	if !finite(p.ZeroTol) || p.ZeroTol < 0 || p.ZeroTol >= 1 {
		errs = append(errs, fmt.Errorf("ssml: ZeroTol must be in [0, 1), got %v", p.ZeroTol))
	}
	return errors.Join(errs...)
}

// Model is a learned SSML metric. It is immutable and safe for concurrent
// use.
type Model struct {
	p          Params
	metric     *mat.SymDense // final PSD M
	factor     *mat.Dense    // U with M = UUᵀ, d×r
	raw        *mat.Dense    // M_T before zeroing and projection
	objective  []float64     // J_ε(M_0), J_ε(M_1), …
	tau        float64
	iterations int
	converged  bool
}

// Train learns an SSML metric from the rows of X (n×d dense global features)
// and the tags of the same images (tags[i] belongs to row i; indices are tag
// ids, values non-negative weights, e.g. 1 or TF-IDF). Images without tags
// are allowed; at least two images must share a tag.
func Train(X *mat.Dense, tags []sparse.Vector, p Params) (*Model, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if X == nil {
		return nil, errors.New("ssml: nil feature matrix")
	}
	n, d := X.Dims()
	if len(tags) != n {
		return nil, fmt.Errorf("ssml: X has %d rows but there are %d tag vectors", n, len(tags))
	}
	for i := range n {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("ssml: X[%d,%d] = %v is not finite", i, j, v)
			}
		}
	}
	K, err := laplacianForm(X, tags)
	if err != nil {
		return nil, err
	}
	// Scale (package doc): K̂ = XᵀLX/τ, τ = tr(XᵀLX)/d.
	tau := K.Trace() / float64(d)
	if !(tau > 0) {
		return nil, errors.New("ssml: tr(XᵀLX) = 0: no two images with shared tags differ in their features")
	}
	K.ScaleSym(1/tau, K)

	// C = αI − K̂ and its row norms ‖c_l‖.
	C := mat.NewDense(d, d, nil)
	cnorm := make([]float64, d)
	for l := range d {
		row := C.RawRowView(l)
		for j := range d {
			row[j] = -K.At(l, j)
		}
		row[l] += p.Alpha
		cnorm[l] = mat.Norm(mat.NewVecDense(d, row), 2)
	}
	obj := newObjective(K, C, p)

	// M₀ = I (package doc). Its rows have norm 1; J_ε(I) = Tr K̂ + (β/2)·d·φ_ε(1).
	rnorm := make([]float64, d) // ‖m_l^s‖; M_s = diag(q_s)·C for s ≥ 1
	for l := range rnorm {
		rnorm[l] = 1
	}
	objective := []float64{K.Trace() + p.Beta/2*float64(d)*phi(1, p.Epsilon)}

	m := &Model{p: p, tau: tau}
	var prev []float64 // q_s; M₀ = I is not a row scaling of C, s = 0 is special
	for s := range p.MaxIter {
		next := make([]float64, d)
		for l := range d {
			// D_ll = 1/(2‖m_l‖₂ + ε), smoothed additively, not as the
			// paper's footnote 4 does (package doc, "Iteration").
			D := 1 / (2*rnorm[l] + p.Epsilon)
			// Paper Eq. (16), row l: m_l ← c_l/(α + β D_ll).
			next[l] = 1 / (p.Alpha + p.Beta*D)
		}
		var diff, base float64
		if s == 0 {
			diff, base = distFromIdentity(next, C), math.Sqrt(float64(d))
		} else {
			for l := range d {
				dl := (next[l] - prev[l]) * cnorm[l]
				diff += dl * dl
				bl := prev[l] * cnorm[l]
				base += bl * bl
			}
			diff, base = math.Sqrt(diff), math.Sqrt(base)
		}
		for l := range d {
			rnorm[l] = next[l] * cnorm[l]
		}
		objective = append(objective, obj.value(next))
		prev = next
		m.iterations = s + 1
		if diff <= p.Tol*base {
			m.converged = true
			break
		}
	}
	q := prev

	raw := mat.NewDense(d, d, nil)
	for l := range d {
		dst := raw.RawRowView(l)
		for j, c := range C.RawRowView(l) {
			dst[j] = q[l] * c
		}
	}
	m.raw = raw
	m.objective = objective
	m.metric, m.factor, err = project(raw, rnorm, p.ZeroTol)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// laplacianForm returns XᵀLX (d×d) for the cosine tag graph (package doc,
// Tag graph), without forming an n×n matrix.
func laplacianForm(X *mat.Dense, tags []sparse.Vector) (*mat.SymDense, error) {
	n, d := X.Dims()
	// Compact tag ids: only the tags in use get a row of G.
	id := map[uint32]int{}
	for i, y := range tags {
		if err := y.Validate(math.MaxUint32 + 1); err != nil {
			return nil, fmt.Errorf("ssml: tags of image %d: %w", i, err)
		}
		for k, t := range y.Idx {
			if y.Val[k] < 0 {
				return nil, fmt.Errorf("ssml: tags of image %d: weight %v of tag %d is negative", i, y.Val[k], t)
			}
			if _, ok := id[t]; !ok {
				id[t] = len(id)
			}
		}
	}
	if len(id) == 0 {
		// Checked here because G below would have no rows, which mat
		// does not allow.
		return nil, errors.New("ssml: no image has a tag, the tag graph has no edges")
	}
	// Centre X: XᵀLX is unchanged because L1 = 0, and the difference
	// Σ D_ii x_i x_iᵀ − GGᵀ cancels less.
	mean := make([]float64, d)
	for i := range n {
		for j, v := range X.RawRowView(i) {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	norms := make([]float64, n)
	sum := make([]float64, len(id)) // Σ_j ŷ_j
	for i, y := range tags {
		var s float64
		for _, v := range y.Val {
			s += float64(v) * float64(v)
		}
		norms[i] = math.Sqrt(s)
		if norms[i] == 0 {
			continue
		}
		for k, t := range y.Idx {
			sum[id[t]] += float64(y.Val[k]) / norms[i]
		}
	}
	Xd := mat.NewDense(n, d, nil) // rows √D_ii (x_i − μ)
	G := mat.NewDense(len(id), d, nil)
	var edges float64
	for i, y := range tags {
		if norms[i] == 0 {
			continue
		}
		var deg float64
		for k, t := range y.Idx {
			deg += float64(y.Val[k]) / norms[i] * sum[id[t]]
		}
		edges += deg - 1 // minus the self-loop W_ii = 1
		sq := math.Sqrt(deg)
		x, dst := X.RawRowView(i), Xd.RawRowView(i)
		for j, v := range x {
			dst[j] = sq * (v - mean[j])
		}
		for k, t := range y.Idx {
			w := float64(y.Val[k]) / norms[i]
			g := G.RawRowView(id[t])
			for j, v := range x {
				g[j] += w * (v - mean[j])
			}
		}
	}
	if edges <= 1e-12 {
		return nil, errors.New("ssml: no two images share a tag, the tag graph has no edges")
	}
	K := mat.NewSymDense(d, nil)
	K.SymOuterK(1, Xd.T())
	var GG mat.SymDense
	GG.SymOuterK(1, G.T())
	K.AddSym(K, scaledSym(&GG, -1))
	return K, nil
}

func scaledSym(a *mat.SymDense, f float64) *mat.SymDense {
	var s mat.SymDense
	s.ScaleSym(f, a)
	return &s
}

// phi is φ_ε(r) = r − (ε/2) ln(2r + ε), the smoothed row norm whose IRLS
// weight is D = 1/(2r + ε) (package doc).
func phi(r, eps float64) float64 { return r - eps/2*math.Log(2*r+eps) }

// objective evaluates J_ε(diag(q)·C) in O(d) from quantities computed once.
type objective struct {
	p      Params
	trKC   []float64 // (C K̂)_ll, so Tr(K̂ diag(q) C) = Σ q_l (C K̂)_ll
	cdiag  []float64 // C_ll
	cnorm2 []float64 // ‖c_l‖²
	d      float64
}

func newObjective(K *mat.SymDense, C *mat.Dense, p Params) objective {
	d, _ := C.Dims()
	o := objective{p: p, trKC: make([]float64, d), cdiag: make([]float64, d), cnorm2: make([]float64, d), d: float64(d)}
	for l := range d {
		row := C.RawRowView(l)
		var s, n2 float64
		for j, c := range row {
			s += c * K.At(j, l)
			n2 += c * c
		}
		o.trKC[l], o.cdiag[l], o.cnorm2[l] = s, row[l], n2
	}
	return o
}

// value returns J_ε(M) = Tr(K̂M) + (α/2)‖M − I‖²_F + (β/2)Σ φ_ε(‖m_l‖) for
// M = diag(q)·C, using ‖M − I‖² = ‖M‖² − 2 Tr M + d.
func (o objective) value(q []float64) float64 {
	var tr, trM, fro, pen float64
	for l, ql := range q {
		tr += ql * o.trKC[l]
		trM += ql * o.cdiag[l]
		fro += ql * ql * o.cnorm2[l]
		pen += phi(ql*math.Sqrt(o.cnorm2[l]), o.p.Epsilon)
	}
	return tr + o.p.Alpha/2*(fro-2*trM+o.d) + o.p.Beta/2*pen
}

// distFromIdentity returns ‖diag(q)·C − I‖_F.
func distFromIdentity(q []float64, C *mat.Dense) float64 {
	var s float64
	for l, ql := range q {
		for j, c := range C.RawRowView(l) {
			v := ql * c
			if j == l {
				v--
			}
			s += v * v
		}
	}
	return math.Sqrt(s)
}

// project zeroes the rows of M with norm ≤ zeroTol·max norm and returns the
// nearest PSD matrix supported on the remaining rows and columns (package
// doc, Projection), with its factor U (M = UUᵀ).
func project(M *mat.Dense, rnorm []float64, zeroTol float64) (*mat.SymDense, *mat.Dense, error) {
	d, _ := M.Dims()
	cut := zeroTol * slices.Max(rnorm)
	var support []int
	for l, r := range rnorm {
		if r > cut {
			support = append(support, l)
		}
	}
	out := mat.NewSymDense(d, nil)
	if len(support) == 0 {
		return out, mat.NewDense(d, 1, nil), nil
	}
	k := len(support)
	S := mat.NewSymDense(k, nil)
	for a, i := range support {
		for b := a; b < k; b++ {
			j := support[b]
			S.SetSym(a, b, (M.At(i, j)+M.At(j, i))/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(S, true) {
		return nil, nil, errors.New("ssml: PSD projection: eigendecomposition did not converge")
	}
	vals := eig.Values(nil)
	var V mat.Dense
	eig.VectorsTo(&V)
	var keep []int
	for e, v := range vals {
		if v > 0 {
			keep = append(keep, e)
		}
	}
	r := max(len(keep), 1)
	U := mat.NewDense(d, r, nil)
	for c, e := range keep {
		s := math.Sqrt(vals[e])
		for a, i := range support {
			U.Set(i, c, s*V.At(a, e))
		}
	}
	out.SymOuterK(1, U)
	// SymOuterK leaves exact zeros outside the support, so the sparsity
	// of the rows survives the projection.
	return out, U, nil
}

// Metric returns a copy of the learned d×d PSD metric M.
func (m *Model) Metric() *mat.SymDense {
	return mat.NewSymDense(m.metric.SymmetricDim(), slices.Clone(m.metric.RawSymmetric().Data))
}

// Factor returns a copy of U (d×r, r the number of positive eigenvalues of
// M, at least 1) with M = UUᵀ, so that d_M(a, b) = ‖Uᵀ(a − b)‖² (the
// paper's Eq. 2): indexing Uᵀx with a Euclidean index retrieves by d_M.
func (m *Model) Factor() *mat.Dense { return mat.DenseCopyOf(m.factor) }

// Unprojected returns a copy of the last iterate M_T = (αI + βD)⁻¹(αI − K̂),
// before the rows are zeroed and the PSD projection; it is not symmetric in
// general.
func (m *Model) Unprojected() *mat.Dense { return mat.DenseCopyOf(m.raw) }

// Distance returns d_M(a, b) = (a − b)ᵀ M (a − b), the paper's Eq. (1),
// which is ≥ 0 up to rounding. It panics if a and b do not both have the
// metric's dimension.
func (m *Model) Distance(a, b []float64) float64 {
	d := m.metric.SymmetricDim()
	if len(a) != d || len(b) != d {
		panic(fmt.Sprintf("ssml: Distance of vectors of length %d and %d with a %d-dimensional metric", len(a), len(b), d))
	}
	diff := make([]float64, d)
	for i := range diff {
		diff[i] = a[i] - b[i]
	}
	v := mat.NewVecDense(d, diff)
	return mat.Inner(v, m.metric, v)
}

// RowNorms returns ‖m_l‖₂ for every row of the final metric.
func (m *Model) RowNorms() []float64 {
	d := m.metric.SymmetricDim()
	out := make([]float64, d)
	for l := range d {
		var s float64
		for j := range d {
			v := m.metric.At(l, j)
			s += v * v
		}
		out[l] = math.Sqrt(s)
	}
	return out
}

// Sparsity returns the share of exactly-zero rows of the final metric, the
// feature dimensions that the ℓ2,1 norm removed.
func (m *Model) Sparsity() float64 {
	norms := m.RowNorms()
	zeros := 0
	for _, r := range norms {
		if r == 0 {
			zeros++
		}
	}
	return float64(zeros) / float64(len(norms))
}

// Objective returns J_ε (package doc) at M₀ = I and after every update; it
// never increases.
func (m *Model) Objective() []float64 { return slices.Clone(m.objective) }

// Iterations returns the number of updates run.
func (m *Model) Iterations() int { return m.iterations }

// Converged reports whether the iteration met Tol before MaxIter.
func (m *Model) Converged() bool { return m.converged }

// Tau returns τ = tr(XᵀLX)/d, the unit of α and β (package doc, Scale): the
// paper's parameters for the same model are α·τ and β·τ.
func (m *Model) Tau() float64 { return m.tau }

// Params returns the parameters the model was trained with.
func (m *Model) Params() Params { return m.p }
