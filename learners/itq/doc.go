// Package itq learns short binary codes for dense global image features:
// Iterative Quantization (ITQ) and its supervised variant CCA-ITQ (Gong,
// Lazebnik, Gordo and Perronnin, "Iterative quantization: a Procrustean
// approach to learning binary codes for large-scale image retrieval", IEEE
// TPAMI 35(12), 2013), plus sign random projections (LSH, Charikar 2002) as
// the data-independent baseline. It also defines the packed code type, Code,
// that every binary-code learner of the project shares, and the Hamming
// ranking that retrieval with such codes uses.
//
// # Shapes
//
// Data matrices hold one image per row: X is n×d (n images, d feature
// dimensions), Y is n×t (the same n images' labels or tags, t columns).
// Papers write the transposes; the formulas below are in this package's
// orientation.
//
// # ITQ
//
// Centre X (μ = column means, X̃ = X − 1μᵀ), project onto the c leading
// principal directions W ∈ R^{d×c} (eigenvectors of X̃ᵀX̃/n), V = X̃W ∈
// R^{n×c}, and look for the rotation R ∈ O(c) and the codes B ∈ {−1,+1}^{n×c}
// that minimise the quantisation loss
//
//	Q(B, R) = ‖B − VR‖²_F.
//
// Starting from a random orthogonal R₀ (seeded), ITQ alternates
//
//	B ← sign(VR)                       (optimal B for fixed R)
//	R ← Ŝ Sᵀ where BᵀV = S Ω Ŝᵀ (SVD)  (optimal R for fixed B: orthogonal Procrustes)
//
// for a fixed number of iterations (50 in the paper). Each half-step
// minimises Q over one block, so the loss recorded after each iteration never
// increases. The code of a new x is sign(Rᵀ Wᵀ (x − μ)).
//
// # CCA-ITQ
//
// CCA-ITQ replaces PCA by canonical correlation analysis between X and Y.
// With the covariances C_xx = X̃ᵀX̃/n + ρ_x I, C_yy = Ỹᵀ Ỹ/n + ρ_y I and
// C_xy = X̃ᵀỸ/n, the image directions solve the symmetric-definite
// generalized eigenproblem
//
//	C_xy C_yy⁻¹ C_yx w = r² C_xx w,   wᵀ C_xx w = 1,
//
// and the c directions with the largest canonical correlations r are kept.
// As in the authors' reference code, each direction is scaled by its r
// before the rotation is learned, so that weakly correlated directions weigh
// less in the Procrustes fit. The ridge is relative to the mean variance of
// each view, ρ_x = Reg·tr(X̃ᵀX̃/n)/d (likewise ρ_y), so that Options.Reg does
// not depend on the features' scale; the reference code adds an absolute
// 10⁻⁴ instead.
//
// # Codes
//
// A c-bit code is packed into ⌈c/64⌉ uint64 words: bit j of the code is bit
// j mod 64 of word j/64, and it is 1 when the j-th projection is ≥ 0 (the
// +1 of sign, which sends 0 to +1 as the reference code does) and 0
// otherwise. Unused high bits of the last word are zero, so two codes of the
// same length compare word by word and Hamming is a popcount of their XOR.
//
// # Registry
//
// Dense adapts the three learners to learners.DenseBatch and registers them
// with learners.NewDense as "itq", "cca-itq" and "lsh" (register.go). Their
// Item is the vector of projections Pᵀ(x − μ), whose Pack is the code, and
// they rank by Hamming distance.
package itq
