// Package lego implements LEGO, LogDet Exact Gradient Online metric
// learning (Jain, Kulis, Dhillon and Grauman, "Online Metric Learning and
// Fast Similarity Search", Advances in Neural Information Processing
// Systems 21, NIPS 2008), as a learner of the pipeline's dense global
// features, registered with learners.NewDense as "lego": an online baseline
// for the pipeline's learnt similarities. Where the package departs from
// the paper (triplets instead of pairs with target distances) or fills a gap
// it leaves (how a step is computed in floating point), the sections below
// say why.
//
// # Model
//
// LEGO learns a Mahalanobis distance over x ∈ R^d (the modalities
// concatenated, treated as one vector, so cross-modality terms are learnt):
//
//	d_A(u, v) = (u − v)ᵀ A (u − v),   A ∈ R^{d×d} symmetric positive definite,
//
// starting from A₀ = I, the Euclidean distance.
//
// # The paper's update (pairs)
//
// The paper receives pairs (u_t, v_t) with a target distance y_t ≥ 0 and
// solves, at every step,
//
//	A_{t+1} = argmin_{A ≻ 0} D_ld(A, A_t) + η ℓ(d_A(u_t, v_t), y_t),
//	D_ld(A, A_t) = tr(A A_t⁻¹) − log det(A A_t⁻¹) − d,   ℓ(ŷ, y) = ½(ŷ − y)²,
//
// with the loss's gradient taken at the new distance ȳ = d_{A_{t+1}}(u_t,
// v_t) (the "exact gradient" of the name). With z = u − v and ŷ = zᵀA_t z,
// the minimiser has the closed form
//
//	ȳ = (η y ŷ − 1 + √((η y ŷ − 1)² + 4 η ŷ²)) / (2 η ŷ),
//	A_{t+1} = A_t − η(ȳ − y) A_t z zᵀ A_t / (1 + η(ȳ − y) ŷ).
//
// ȳ is the positive root of η ŷ ȳ² + (1 − η y ŷ) ȳ − ŷ = 0, which says
// that 1 + η(ȳ − y)ŷ = ŷ/ȳ > 0. By Sherman–Morrison the step is
// A_{t+1}⁻¹ = A_t⁻¹ + η(ȳ − y) z zᵀ, and writing it as
// A_t^{1/2}(I − β w wᵀ)A_t^{1/2} with w = A_t^{1/2} z and
// β = η(ȳ − y)/(1 + η(ȳ − y)ŷ) shows that it keeps A positive definite:
// the only eigenvalue of I − β w wᵀ that is not 1 is 1 − β‖w‖² = ȳ/ŷ > 0.
// A step moves the distance of the pair from ŷ to ȳ, between ŷ and y: to
// first order ȳ − y = (ŷ − y)/(1 + η ŷ²), so a step closes the fraction
// η ŷ²/(1 + η ŷ²) of the gap, and η is to be chosen against the square of
// the typical distance. [LEGO.UpdatePair] is this update.
//
// # Numerics
//
// The code computes the same two quantities in forms that do not cancel
// or overflow: with b = η y ŷ − 1 and s = √(b² + 4ηŷ²) (math.Hypot),
//
//	ȳ = (b + s)/(2ηŷ)   if b ≥ 0,    ȳ = 2ŷ/(s − b)   if b < 0
//
// (the two are equal: the roots of the quadratic multiply to −1/η), and
// the coefficient of the rank-one step is β = η(ȳ − y)·ȳ/ŷ, using
// 1 + η(ȳ − y)ŷ = ŷ/ȳ, which avoids the cancellation of that denominator
// when a step lengthens a distance many-fold. A is updated row by row as
// A_ij −= β·(g_i g_j) with g = A_t z (a triplet's two steps in one pass,
// A_ij −= β₁·(g_i g_j) + β₂·(h_i h_j)), so (i, j) and (j, i) get
// bit-identical values and A stays exactly symmetric. A pair with ŷ = 0 (u = v) carries
// no information and leaves A alone.
//
// # Triplets
//
// The pipeline feeds its online dense learners triplets (x, x⁺, x⁻), x
// being more similar to x⁺ than to x⁻, through learners.DenseOnline.Update,
// while LEGO learns from pairs with target distances. [LEGO.Update] turns a
// triplet into at most two of the paper's steps, with two fixed targets:
// u > 0 for the similar pair and u + γ for the dissimilar one, γ > 0 being
// the margin. With d⁺ = d_A(x, x⁺) and d⁻ = d_A(x, x⁻) it suffers, and
// returns, the hinge loss
//
//	ℓ = max(0, γ + d⁺ − d⁻),
//
// and when ℓ > 0 it takes
//
//  1. the step on the pair (x, x⁺) with target y = u, if d⁺ > u;
//  2. then the step on the pair (x, x⁻) with target y = u + γ, if
//     d⁻ < u + γ, on the matrix that step 1 left.
//
// Both conditions are checked on the distances before step 1. A violated
// triplet has at least one pair on the wrong side of its target (d⁺ ≤ u and
// d⁻ ≥ u + γ would give d⁻ − d⁺ ≥ γ), so it always takes a step, and once
// both pairs have reached their targets the triplet holds with margin γ. A
// pair already on the right side of its target is left alone: moving it to
// the target would undo part of what the triplet asks (raise d⁺ or lower
// d⁻). A triplet with ℓ = 0 leaves A alone.
//
// This is the paper's pair learning with given targets, similar pairs
// pulled toward a small distance and dissimilar ones pushed toward a
// larger one, in the manner of the constraints d ≤ u and d ≥ l of ITML
// (Davis, Kulis, Jain, Sra and Dhillon, "Information-Theoretic Metric
// Learning", ICML 2007), with l = u + γ tied to the triplet's margin. Each
// step is the paper's exact closed form, so A stays positive definite.
//
// The targets are fixed, not relative to the current distances, on
// purpose. The package first tried the relative targets
// y⁺ = max(0, d⁺ − ℓ/2) and y⁻ = d⁻ + ℓ/2, the change of least Euclidean
// norm that would make the triplet hold with margin γ. They scale with A
// and so give it no anchor: on triplets that no metric satisfies, which
// label noise and overlapping classes make common, A's largest eigenvalue
// grew geometrically (η ŷ² grows with A, so the steps got ever more
// aggressive) until rounding broke positive definiteness, within a
// thousand triplets on both random triplets and Gaussian classes under
// noise. Rescaling A to a fixed trace after every triplet collapsed it to
// rank one instead. With fixed targets the distances are pulled toward
// [u, u + γ] from whichever side is wrong, which bounds A both ways, as
// the given targets of the paper's setting do.
//
// # Parameters
//
// "eta" (η > 0, default 0.01) is the paper's learning rate; "target" (u > 0,
// default 1) is the similar pairs' target distance; "margin" (γ > 0,
// default 4) is the triplet margin, which puts the dissimilar pairs' target
// at u + γ = 5. All three are in units of squared distance (η in its
// inverse square). The defaults suit the pipeline's scaled features, whose
// modalities each have a mean squared norm of 1. Squared distances between
// images are then of order 10, so η ŷ² is of order 1 and a step closes about
// half the gap to its target. Dissimilar images closer than half the
// typical distance are pushed out, and similar ones pulled in toward a
// tenth of it. An unknown parameter name is an error.
//
// # Retrieval
//
// The model ranks by the learnt distance through an embedding: Item(x) =
// Query(x) = U x with A = UᵀU the Cholesky factorisation (U upper
// triangular), so ‖U a − U b‖² = d_A(a, b) and the metric is
// learners.Euclidean. U is computed once, on the first Item or Query after
// an Update or SetState, in O(d³), and cached; Item then costs O(d²). Should
// rounding have left A numerically semi-definite, so that Cholesky fails,
// the factor is Λ^{1/2}Qᵀ from the eigendecomposition A = QΛQᵀ with the
// negative eigenvalues clipped to 0, as package omdml does.
//
// # Sharded training
//
// [LEGO.State] exports A row-major (Vectors[0], d² values). The sharded
// trainer averages the states of its shards element-wise
// (learners.Average), which is a valid LEGO model: an average of symmetric
// positive definite matrices is symmetric positive definite, and is exactly
// symmetric in floating point since (i, j) and (j, i) are averaged alike.
// A and the parameters define every later step, so one shard reproduces
// the sequential learner bit for bit.
//
// The paper's second part, online locality-sensitive hashing of the learnt
// metric for fast search, is not implemented: the pipeline indexes the
// embeddings itself.
package lego
