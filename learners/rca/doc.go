// Package rca implements Relevant Component Analysis (Bar-Hillel, Hertz,
// Shental and Weinshall, "Learning a Mahalanobis Metric from Equivalence
// Constraints", Journal of Machine Learning Research 6, 2005, pp. 937–965)
// as a batch learner of the pipeline's dense global features, registered
// with learners.NewDense as "rca": a baseline for the pipeline's learnt
// metrics. Where the package departs from the paper (the ridge) or leaves
// out an optional step (dimensionality reduction), the sections below say
// why.
//
// # Chunklets
//
// RCA learns from chunklets: groups of points known to belong to the same,
// unknown, class (the transitive closure of positive equivalence
// constraints). Fit reads them from its tag matrix Y: image i belongs to
// the chunklet of the column j that maximises Y_ij. With one-hot labels
// that is the image's label, so each class of the training sample is one
// chunklet (the fully labelled extreme of the paper's setting). With
// several tags per image it is the image's strongest tag, the first of
// them when several tie (binary tags: the tag of lowest index). An image
// whose row of Y has no positive entry belongs to no chunklet. Chunklets of
// a single image carry no within-class information and are left out, as
// the paper's sums over chunklets of size ≥ 2 do.
//
// # Metric
//
// With chunklets C_1, …, C_k of sizes n_j ≥ 2, means m_j, and p = Σ_j n_j
// points in them, the paper's algorithm is
//
//  1. subtract from every point of a chunklet the chunklet's mean;
//  2. (optional) reduce the dimension (below);
//  3. compute the within-chunklet covariance
//     Ĉ = (1/p) Σ_j Σ_{i∈C_j} (x_ji − m_j)(x_ji − m_j)ᵀ;
//  4. whiten with W = Ĉ^{-1/2}, or equivalently use the Mahalanobis
//     distance d(a, b) = (a − b)ᵀ Ĉ⁻¹ (a − b).
//
// The paper derives this as the maximum-likelihood estimate of the shared
// within-class covariance when the classes are Gaussian with a common
// covariance, and as the linear transformation that maximises the mutual
// information between the data and its image under a bound on the
// distance between points of a chunklet. Directions along which images of
// one chunklet vary a lot (within-class noise) are scaled down, and
// directions along which they agree are scaled up.
//
// W is the symmetric inverse square root, computed from the
// eigendecomposition Ĉ_ε = QΛQᵀ as W = QΛ^{-1/2}Qᵀ (and symmetrised exactly),
// so that W Ĉ_ε W = I and W² = Ĉ_ε⁻¹. Retrieval embeds Item(x) = Query(x) =
// W x and compares by learners.Euclidean: ‖W a − W b‖² = (a − b)ᵀĈ_ε⁻¹(a − b).
//
// # Ridge
//
// A chunklet of n_j points spans at most n_j − 1 dimensions about its
// mean, so Ĉ has rank at most p − k and is singular whenever d > p − k:
// with few labelled images, or with feature dimensions that never vary
// within a class. Ĉ⁻¹ then does not exist. The paper avoids this with its
// optional dimensionality reduction (step 2, which keeps at most the rank
// of Ĉ). This package instead adds a ridge:
//
//	Ĉ_ε = Ĉ + ρI,   ρ = ε·tr(Ĉ)/d,
//
// ε ("epsilon", default 10⁻³) relative to the mean eigenvalue tr(Ĉ)/d so
// that it does not depend on the features' scale. Every eigenvalue is then
// at least ρ > 0, and a direction the chunklets never vary along gets the
// finite weight 1/ρ in the metric instead of an infinite one: ε bounds how
// much RCA can amplify a direction against the mean (by 1/ε in squared
// distance). With ε = 0 the metric is the paper's Ĉ⁻¹ exactly, and Fit
// returns an error if Ĉ is singular to working precision.
//
// # Dimensionality reduction
//
// The paper's optional step 2 (projection onto the directions of largest
// total variance, or a constraints-based Fisher discriminant, before
// whitening) is not implemented: it is not needed for the pipeline, which
// compares every metric at the full dimension of the features, and the
// ridge handles the singular case that motivates it.
//
// # State
//
// [Model.State] exports W (d×d, row-major) and the number of training rows;
// a model restored by SetState ranks exactly as the one that was fitted.
// RCA is a batch learner and is not trained in shards.
package rca
