// Package solis implements the SOLIS learners (Sparse Online Learning of
// Image Similarity, Gao et al.; seeds/SOLIS-…), which learn a sparse diagonal
// bilinear similarity S_w(a,b) = Σ_i w_i a_i b_i over bag-of-words vectors
// from triplets (x, x⁺, x⁻). Where the paper and the project's ALGORITHMS.md
// differ, ALGORITHMS.md is followed and the code says so next to the formula.
//
// # Common notation
//
// The learner sees one triplet feature per step t = 1, 2, …
//
//	u_t = x_t ⊙ (x⁺_t − x⁻_t),   L_t = max(0, 1 − w_t·u_t),
//
// and uses the true subgradient of the hinge loss (ALGORITHMS.md, SOLIS 1; the
// paper writes +u_t, which has the wrong sign):
//
//	g_t = −u_t  if L_t > 0,   g_t = 0  otherwise.
//
// # SOLIS-ADA (adaptive regularized dual averaging, paper §4.5, Algorithm 4)
//
// After t steps the learner keeps, per coordinate i,
//
//	s_t,i = Σ_{τ≤t} g_τ,i          (running subgradient sum)
//	G_t,i = Σ_{τ≤t} g_τ,i²         (running squared-subgradient sum)
//	ḡ_t,i = s_t,i / t              (average over ALL t steps, zero-loss steps included; ALGORITHMS.md, SOLIS 2)
//	H_t,ii = δ + √G_t,i
//
// and the weights are the minimiser of η⟨ḡ_t, w⟩ + ηλ‖w‖₁ + (1/2t)⟨w, H_t w⟩,
// the closed form (22a) (ALGORITHMS.md, SOLIS 3):
//
//	w_t+1,i = sign(−ḡ_t,i) · (η t / H_t,ii) · max(0, |ḡ_t,i| − λ)
//	        = sign(−s_t,i) · η / (δ + √G_t,i) · max(0, |s_t,i| − λ t),
//
// with w_t+1,i = 0 when s_t,i = 0 or H_t,ii = 0, and w_1 = 0. The code
// evaluates the first (the paper's) form, in float64, so that it agrees bit
// for bit with a dense implementation of (22a); the second form is equal in
// exact arithmetic only. The weights are
// therefore a pure function of (s_t, G_t, t): nothing but s, G and t is
// stored, a step touches s and G only on supp(u_t), and any w_i is
// materialised on demand in O(1). An Update costs O(nnz(u)), never O(d)
// (ALGORITHMS.md, SOLIS 4).
//
// Because t advances on every step, every step redefines w for every
// coordinate, as Duchi, Hazan and Singer's adaptive RDA does: with λ > 0 a
// zero-loss step shrinks every |w_i| by ηλ/H_ii (clipped at 0); with λ = 0 it
// changes nothing. The paper's Algorithm 4 writes w only on steps with L > 0,
// so with λ > 0 its weights lag behind ours between two such steps.
package solis
