// Package mglp implements multimodal learning of geometry-preserving binary
// codes (mGLP; Irie, Arai and Taniguchi, IEICE Trans. Inf. & Syst.
// E100-D(4), 2017, doi:10.1587/transinf.2016AWI0003) and its uni-modal
// version uGLP. It learns a linear projection A so that the codes
// z = sign(Aᵀx) of images preserve the locally linear structure of the
// image features and of the texts that come with them (tags, attributes,
// captions), and agree with the texts' own codes.
// Only images are encoded afterwards; retrieval ranks a database by Hamming
// distance (itq.Rank). Codes are itq.Code values, the packing that itq
// defines, so mGLP and ITQ codes are stored and compared alike.
//
// # Shapes
//
// X is n×d (one image per row), Y is n×t (row i is the text of image i,
// dense: a bag of tags, attribute vector or mean word vector). The paper
// stores one sample per column, so its X M Xᵀ is X̃ᵀ M X̃ here (d×d). Both
// views are centred (X̃, Ỹ) as the paper assumes.
//
// # Locally linear sparse coding (Eqs. 3–4)
//
// For each point x_i and its neighbour set N(x_i) of size K,
//
//	min_w ½‖x_i − Σ_{j∈N} w_j x_j‖² / σ_i² + τ Σ_j s_ij |w_j|   s.t.  Σ_j w_j = 1,
//
// with the paper's distance weights s_ij = ‖x_i − x_j‖ / Σ_{k∈N} ‖x_i − x_k‖.
// The division by σ_i², the mean squared distance from x_i to its
// neighbours, is this package's: it makes τ independent of the features'
// scale and of local density (the paper's τ for point i is τσ_i²). The
// neighbours may be approximate (§3.4): by default they are the K nearest
// among 4K candidates found by 16-bit sign random projections (Params.LSHBits;
// 0 searches exactly). The paper solves each problem with a homotopy method;
// here the method of multipliers with coordinate descent solves the same
// convex problem, and a test checks its KKT conditions.
//
// # Geometric and multimodal losses, relaxed (Eqs. 5–27)
//
// With W the n×n sparse matrix of the weights, M_x = (I − W)ᵀ(I − W)/n, and
// likewise M_y for the texts, the relaxed problem is
//
//	min_P tr(Pᵀ Q M Qᵀ P)   s.t.  Pᵀ Q Qᵀ P ∝ I,   P = [A; B],  Q = blockdiag(X̃ᵀ, Ỹᵀ),
//	M = blockdiag(λM_x, (1−λ)M_y) + (η/n)[[I, −I], [−I, I]],
//
// so that tr(PᵀQMQᵀP) = λ tr(AᵀX̃ᵀM_xX̃A) + (1−λ) tr(BᵀỸᵀM_yỸB) +
// (η/n)‖X̃A − ỸB‖²_F. Its solution is the c eigenvectors of smallest
// eigenvalue of the symmetric-definite pencil (QMQᵀ, QQᵀ), at most as many
// as the texts have principal directions (Bits beyond the text's rank).
// Without text (uGLP) it is min tr(AᵀX̃ᵀM_xX̃A) s.t. AᵀX̃ᵀX̃A ∝ I
// (Eqs. 10–11).
//
// # Solution
//
// QQᵀ = n·blockdiag(C_xx, C_yy) is singular whenever a view has directions
// of zero variance (n ≤ d, collinear features, one-hot texts), and in a
// minimisation such directions, or a ridge added to make QQᵀ definite, would
// win with a ratio of ≈ 0/0 or ≈ 0/ρ. So each view is first restricted to its
// principal directions with variance above Params.Reg times the mean
// variance and whitened there (T = P Λ^{-1/2}), which turns the pencil into
// an ordinary symmetric eigenproblem (NPE and LPP take the same PCA step).
// A then has no component along the discarded directions.
//
// # Bits beyond the text's rank
//
// The paper's constraint on the texts, BᵀỸᵀỸB ∝ I (Eq. 16), admits at most
// k_y projections, k_y being the texts' principal directions kept (≤ t, and
// ≤ L − 1 for the one-hot labels of L classes). The paper's text views are
// richer than its codes (64 attributes, 300-dimensional word vectors, codes
// of at most 64 bits); a text view of labels is not (k_y = 7 on ETH-80's 8
// categories). The joint constraint would allow more: its further
// eigenvectors are image-only directions (B ≈ 0, eigenvalue ≥ η, the
// largest multimodal loss there is), each of unit variance, so they weigh
// as much in the Hamming distance as the text-coupled ones and, spread over
// every bit by the refinement, drown them (ETH-80, category labels as text:
// held-out mAP 0.97 at 7 bits, 0.58 at 16, 0.28 at 64). So with text the
// relaxed solution keeps the min(c, k_y) eigenvectors of smallest
// eigenvalue, and the other columns of A and B are zero: the refinement
// rotates the kept directions into all c bits (as CCA-ITQ does when c
// exceeds the rank of its labels, its further canonical correlations being
// ≈ 0), and without it (Iterations = 0) those bits are constant and add
// nothing to a Hamming distance (ETH-80 as above: 0.98 at 16 and at 64
// bits). uGLP, without text, is not affected.
//
// # Refinement (Eqs. 29–30)
//
// The relaxed A is refined by ITQ's alternation (itq.Rotate) for a rotation
// R, A ← AR. The paper redefines A := P and X := Q just before, so the data
// rotated are the stacked projections of both views, V = [X̃A; ỸB] (2n×c),
// and B rotates with A. This matters: the paper's Observation 2 (the relaxed
// objective is invariant under the rotation) holds for P → PR, not for
// A → AR alone, because the multimodal term compares X̃A with ỸB bit by bit.
// With Params.Iterations = 0 there is no refinement (the paper's mGLP⁻).
//
// # Degenerate cases
//
// The joint constraint Pᵀ Q Qᵀ P ∝ I is the sum of the two views'
// constraints (15)–(16), which the paper treats as equivalent to imposing
// both; it is weaker. With η = 0 the problem splits into the two views and
// its smallest eigenvectors may be text-only (A's column zero); with λ = 1
// and η = 0, every text direction has eigenvalue 0. The paper's remark that
// λ = 1, η = 0 "becomes exactly the uni-modal case" holds only if B is
// dropped from the constraint. Train therefore refuses η = 0 with text
// (train without text for uGLP), and Model.ImageShare reports how much of
// each eigenvector lies in the image view.
//
// # Registry
//
// Dense adapts the learner to learners.DenseBatch and registers it with
// learners.NewDense as "mglp" (register.go): Fit learns mGLP from the
// images and the texts Y, or uGLP when Y is empty. Its Item is the vector
// of projections Aᵀ(x − μ), whose itq.Pack is the code.
package mglp
