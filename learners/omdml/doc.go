// Package omdml implements Online Multi-modal Distance Metric Learning and its
// low-rank variant (Wu, Hoi, Zhao, Miao and Liu, "Online multi-modal
// distance metric learning with application to image retrieval", IEEE TKDE
// 28, 2016, doi:10.1109/TKDE.2015.2477296): OMDML (Algorithm 1) and LOMDML
// (Algorithm 2). Where the package departs from the paper (the margin) or
// fills a gap it leaves (LOMDML's W₀), the sections below say why, and the
// code says so next to the formula.
//
// # Model
//
// An image is a [Sample]: m dense vectors p⁽ⁱ⁾ ∈ R^{n_i}, one per modality
// (the paper's §5.3 uses colour 81-d, edge 37-d, Gabor texture 120-d, LBP
// 59-d and GIST 512-d). Each modality has a Mahalanobis distance and the
// modalities are combined by weights θ on the simplex:
//
//	d_i(p₁, p₂) = (p₁ − p₂)ᵀ M_i (p₁ − p₂),   M_i ⪰ 0,
//	d(p₁, p₂)   = Σ_i θ_i d_i(p₁, p₂),       θ_i ≥ 0, Σ_i θ_i = 1.
//
// Learning is from triplets (p, p⁺, p⁻), p more similar to p⁺ than to p⁻,
// one at a time. With
//
//	f_i = d_i(p, p⁺) − d_i(p, p⁻),   f = Σ_i θ_i f_i,
//
// a step updates the model when f + γ > 0, and Update returns the combined
// hinge loss max(0, f + γ) suffered before the step.
//
// # Margin
//
// The paper writes the hinge with a fixed margin 1, ℓ = max(0, f + 1)
// (Eq. 2, the loss after Eq. 3, and ℓ_t⁽ⁱ⁾ in §3.5), but calls γ the
// "margin parameter" of Algorithms 1 and 2 and updates when f + γ > 0.
// The two disagree whenever γ ≠ 1: a step could update on a zero loss, or
// report a positive loss and not update. This package uses the one margin γ
// everywhere:
//
//	ℓ   = max(0, f + γ)      (returned by Update; update iff ℓ > 0)
//	ℓ_i = max(0, f_i + γ)    (per-modality loss driving M_i or W_i)
//
// so that a step updates exactly when the loss it reports is positive, and
// with the default γ = 1 every formula is the paper's verbatim.
//
// # Hedge (both algorithms)
//
// On an updating step every modality that ranks the triplet wrongly loses a
// factor β of its weight (Eq. 6):
//
//	z_i = [f_i > 0],   θ_i ← θ_i β^{z_i} / Σ_j θ_j β^{z_j},   β ∈ (0, 1).
//
// θ starts uniform, θ_i = 1/m.
//
// # OMDML (Algorithm 1)
//
// Each M_i starts at the identity and takes a passive-aggressive step
// followed by a projection onto the PSD cone (Eq. 5):
//
//	a = p − p⁺,  b = p − p⁻,  V = aaᵀ − bbᵀ,
//	τ = min(C, ℓ_i / ‖V‖²_F),  M_i ← PSD(M_i − τV),
//
// where ‖V‖²_F = ‖a‖⁴ + ‖b‖⁴ − 2(a·b)² is computed from three dot products,
// never from V, and PSD clips the negative eigenvalues to zero. The step
// leaves M_i alone when ℓ_i = 0.
//
// The projection costs a symmetric eigendecomposition (mat.EigenSym),
// O(n_i³) per step and modality: roughly 0.2–0.5 s for GIST's
// n = 512 on the project's machines, against milliseconds for the other four
// modalities of §5.3 (BenchmarkOMDMLUpdate). That is why the paper drops
// OMDML on its larger data sets. Two facts make the projection cheaper than
// a full QΛ⁺Qᵀ reconstruction, and let Update skip it when it provably
// changes nothing:
//
//  1. M_i − τV = (M_i + τbbᵀ) − τaaᵀ is a PSD matrix minus a rank-one one,
//     so by interlacing it has at most one negative eigenvalue, and
//     PSD(X) = X − Σ_{λ_k<0} λ_k q_k q_kᵀ costs O(n²) per clipped eigenvalue
//     after the decomposition, instead of an O(n³) product.
//  2. By Weyl's inequality λ_min(M_i − τV) ≥ λ_min(M_i) + τ·λ_min(bbᵀ − aaᵀ),
//     and the only negative eigenvalue of bbᵀ − aaᵀ has the closed form
//     λ₋ = (s − √(s² + 4g))/2 with s = ‖b‖² − ‖a‖² and
//     g = ‖a‖²‖b‖² − (a·b)². Each M_i carries a lower bound L_i ≤ λ_min(M_i)
//     (1 for M_i = I, updated by L_i ← L_i + τλ₋, and reset from the
//     eigenvalues whenever a decomposition is done); when the updated bound
//     is still ≥ 0 the step provably cannot create a negative eigenvalue and
//     the decomposition is skipped. This happens while M_i is positive
//     definite and the steps are small against λ_min(M_i) (on the paper's
//     [0, 1]-scaled features τ is of order 1/‖a‖⁴, so for thousands of
//     steps from M_i = I), and whenever V ⪰ 0 (a ∥ b with ‖b‖ ≥ ‖a‖,
//     including p = p⁺). Once a projection has clipped an eigenvalue the
//     bound is 0 and nearly every later step of that modality projects.
//
// The skip changes no result in exact arithmetic: the projection of a PSD
// matrix is that matrix.
//
// # LOMDML (Algorithm 2)
//
// Each metric is kept factored, M_i = W_iᵀW_i with W_i ∈ R^{r_i×n_i}, so it is
// PSD by construction and a step costs O(r_i n_i). With q = W_i p,
// q⁺ = W_i p⁺ and q⁻ = W_i p⁻, the gradient of ℓ_i where it is positive is
//
//	∇_W ℓ_i = 2(q⁻ − q⁺)pᵀ + 2(q⁺ − q)p⁺ᵀ + 2(q − q⁻)p⁻ᵀ
//	        = 2[(W_i a)aᵀ − (W_i b)bᵀ],
//
// which is the paper's formula and the exact gradient (a finite-difference
// test checks it), and W_i ← W_i − η∇_W ℓ_i (Eq. 7); W_i is left alone
// when ℓ_i = 0, where the gradient is 0. The code uses the second form: two
// matrix–vector products and two rank-one updates.
//
// r_i = min(Params.Rank, n_i): a rank above n_i adds nothing, since an
// n_i×n_i factor already reaches every PSD matrix. The paper leaves W₀
// open; this package takes W₀ = I when r_i = n_i (then M₀ = I, as in
// OMDML), and otherwise a Gaussian random projection with entries drawn
// from N(0, 1/r_i) by a PCG stream seeded with (Params.Seed, i). Then
// E[W₀ᵀW₀] = I, so the starting distance is an unbiased estimate of the
// squared Euclidean distance that OMDML starts from, and it looks at every
// coordinate, which the alternatives do not: identity rows would see only
// the first r_i coordinates (an arbitrary choice, e.g. 50 of GIST's 512),
// principal directions need a warm-up pass over data the online learner does
// not have yet, and W₀ = 0 is a stationary point of the gradient.
//
// # Sharded training
//
// [OMDML.State] and [LOMDML.State] export the model as a learners.State (θ
// and each modality's matrix, flattened row-major) so that the pipeline's
// sharded trainer can average the states of several shards with
// learners.Average. Averages stay valid models: the simplex and the PSD cone
// are convex. An average of W_i is not the average of the M_i = W_iᵀW_i, but
// shards that start a round from the same W_i stay close to it, which is
// what parameter averaging assumes.
//
// The learners do not implement learners.Online, whose Update takes one
// sparse bag-of-words feature; they have their own [Learner] interface.
//
// # Dense pipeline
//
// [Dense] adapts either learner to learners.DenseOnline, whose vectors are
// the modalities concatenated, and embeds images for retrieval by Euclidean
// distance. The package registers the two with learners.NewDense as "omdml"
// and "lomdml".
package omdml
