// Package ssml implements Sparse Semantic Metric Learning (SSML; Wang et al.,
// "Sparse semantic metric learning for image retrieval"): a batch learner of
// a Mahalanobis metric
//
//	d_M(a, b) = (a − b)ᵀ M (a − b),   M ∈ R^{d×d}, M ⪰ 0,
//
// over dense global image features, from images that carry user tags. The
// metric should make images with similar tags close, stay near the Euclidean
// metric (tags are noisy), and be row-sparse so that noisy feature dimensions
// drop out. Where the package departs from the paper or fills a gap it
// leaves, the sections below say why, and the code says so next to the
// formula.
//
// # Shapes
//
// This package stores one image per row: X is n×d. The paper stores one
// image per column (its X is d×n), so the paper's X L Xᵀ is XᵀLX here; both
// are d×d. The tags of image i are a sparse bag-of-tags vector y_i (binary
// or TF-IDF weights, as in the paper; non-negative).
//
// # Tag graph
//
// Following the paper (Eq. 4), the graph is the full graph of cosine tag
// similarities, W_ij = y_iᵀy_j / (‖y_i‖‖y_j‖), with degrees D_ii = Σ_j W_ij
// and the unnormalised Laplacian L = D − W; an image without tags is
// isolated. The n×n matrices are never formed: with ŷ_i = y_i/‖y_i‖ and
// G = Σ_i x_i ŷ_iᵀ (d×t),
//
//	XᵀLX = Σ_i D_ii x_i x_iᵀ − G Gᵀ,   D_ii = ŷ_iᵀ Σ_j ŷ_j,
//
// which costs O(n d² + nnz(Y) d + t d²) instead of O(n² d). X is centred
// first; XᵀLX does not change (L1 = 0) and the subtraction loses less to
// rounding.
//
// # Scale
//
// XᵀLX = ½ Σ_ij W_ij (x_i − x_j)(x_i − x_j)ᵀ grows with n, with the density
// of the tag graph and with the features' scale, so fixed α and β would mean
// different things on different data (the paper tunes both over 10⁻⁶…10⁶).
// Train divides it by τ = tr(XᵀLX)/d, the mean per-dimension spread of
// tag-similar pairs, and uses K̂ = XᵀLX/τ. This only re-expresses the
// parameters: the iterates equal those of the paper's update with α·τ and
// β·τ (Model.Tau reports τ).
//
// # Iteration
//
// With C = αI − K̂, the paper's update (16) is
//
//	M_{s+1} = (αI + βD_s)⁻¹ C,   (D_s)_ll = 1 / (2‖m_l^s‖₂ + ε),
//
// m_l the l-th row of M_s (the paper's Table 1: rows). The paper's D_ll is
// 1/(2‖m_l‖₂), which is infinite when a row vanishes, as the ℓ2,1 term is
// meant to make rows do; its footnote 4 smooths it as 1/(2√(‖m_l‖² + ε)).
// This package smooths additively instead: ε is then on the scale of a
// row norm rather than of its square, D_ll ≤ 1/ε, and J_ε below is the
// objective that goes with this choice. Both smoothings tend to the
// paper's D_ll as ε → 0.
//
// The iteration starts from M₀ = I (the paper does not say; I is the
// Euclidean metric its regulariser pulls towards) and stops when
// ‖M_{s+1} − M_s‖_F ≤ Tol·‖M_s‖_F or after MaxIter updates.
//
// The paper derives (16) from Eq. (10) by a first-order Taylor expansion of
// a matrix inverse, so (16) does not minimise (10) and its Theorem 1 does not
// apply to it as written; (10) is not even defined for the non-symmetric
// iterates. What (16) does minimise exactly is (10) with the LogDet
// divergence Tr M − log det M replaced by its second-order expansion at I,
// ½‖M − I‖²_F + const: setting the gradient of
//
//	J_ε(M) = Tr(K̂M) + (α/2)‖M − I‖²_F + (β/2) Σ_l φ_ε(‖m_l‖₂),
//	φ_ε(r) = r − (ε/2) ln(2r + ε)
//
// to zero with the weights D_s frozen gives (16), and because φ_ε(√t) is
// concave, (β/2)Tr(MᵀD_sM) + const majorises the last term (the argument of
// the paper's Eqs. 17–22). So (16) is a majorise-minimise step and J_ε never
// increases; Model.Objective records it. As ε → 0, φ_ε(r) → r and J_ε →
// the surrogate of (10) with the paper's (β/2)‖M‖_{2,1}.
//
// Every iterate after M₀ is a row scaling of C, M_s = diag(q_s)·C, so the
// update only needs the row norms of C: q_l ← 1/(α + β/(2 q_l ‖c_l‖ + ε)).
// Train runs it in that form, O(d) per iteration after the O(d²) set-up,
// and materialises M once at the end. Its fixed point makes the metric's
// meaning plain: as ε → 0, ‖m_l‖ → max(0, (‖c_l‖ − β/2)/α), a group
// soft-threshold, so a feature dimension survives only if its row of
// αI − K̂ has norm above β/2. Dimensions along which tag-similar images
// differ little (K̂_ll < α) keep a positive diagonal; those along which
// they differ a lot get a negative one, which the final PSD projection
// removes.
//
// # Projection
//
// The paper projects the final M onto the PSD cone ([10]) without saying how
// a non-symmetric matrix is handled. Train first sets to zero the rows whose
// norm is at most ZeroTol times the largest (with ε > 0 a suppressed row
// only decays towards ≈ ε‖c_l‖/β, never to exactly 0), and then returns the
// Frobenius-nearest PSD matrix whose rows and columns outside the surviving
// support S are zero: the eigenvalue-clipped symmetric part (M + Mᵀ)/2
// restricted to S×S. Projecting the whole symmetric part instead would
// bring the suppressed dimensions back through their columns (a PSD matrix
// with a zero row has a zero column), undoing the ℓ2,1 sparsity.
//
// # Registry
//
// Dense adapts the learner to learners.DenseBatch and registers it with
// learners.NewDense as "ssml" (register.go): Fit reads the tags from the
// rows of a dense tag matrix, and Item embeds x as Uᵀx for Euclidean
// ranking.
package ssml
