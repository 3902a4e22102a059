// Package spatial re-ranks bag-of-words search results by fast spatial
// matching (Philbin, Chum, Isard, Sivic & Zisserman, "Object retrieval
// with large vocabularies and fast spatial matching", CVPR 2007; Chum,
// Philbin, Sivic, Isard & Zisserman, "Total Recall", ICCV 2007): a
// candidate image stays near the top of a query's ranking only if many of
// the visual words the two images share lie where one geometric
// transformation of the query puts them. Words alone match a car's wheel
// with any wheel; words in the right places match this car.
//
// # Input
//
// An image is a Geometry: each keypoint's word and SIFT frame (position,
// scale σ, orientation θ) in flat float32 slices sorted by word, 20 bytes
// a keypoint (40 kB for a 640×480 photo's ~2,000 keypoints, 1.4 kB for an
// ETH-80 original's ~70).
//
// # The model
//
// Tentative correspondences are pairs of keypoints, one in each image,
// quantised to the same word, found by merging the two sorted word lists.
// A word seen a times in the query and b times in the candidate could pair
// every one with every other, a·b pairs; bursts (repeated textures) would
// then swamp the true matches, so a word gives at most MaxPerWord pairs
// and an image pair at most MaxCorrespondences (taken a round at a time:
// the words seen once in each image, then every other shared word's first
// pair, then every word's second, …).
//
// One correspondence fixes a similarity: SIFT frames are covariant with
// scale and rotation, so the candidate keypoint (q, σ_c, θ_c) is the image
// of the query keypoint (p, σ_q, θ_q) under
//
//	x ↦ s·R(θ)·x + t,  s = σ_c/σ_q,  θ = θ_c − θ_q,  t = q − s·R(θ)·p
//
// (Philbin et al. derive an affine map from one affine-covariant region in
// the same way). Every correspondence is such a hypothesis, tried in a
// fixed order, so the result is deterministic with no sampling. A
// hypothesis is scored by its inliers: the correspondences k it maps
// within Threshold of their candidate point,
//
//	‖s·R(θ)·p_k + t − q_k‖ < Threshold · max(width, height) of the candidate,
//
// whose own scale change and rotation also agree with the hypothesis's,
// |ln(σ_c,k/σ_q,k) − ln s| < ln ScaleTolerance and |θ_k − θ| <
// AngleTolerance (mod 2π): a point in the right place at the wrong scale
// or orientation is a different structure.
//
// The best hypothesis is refined as in LO-RANSAC (Chum, Matas & Kittler,
// "Locally optimized RANSAC", DAGM 2003): the affine map x ↦ A·x + t
// nearest its inliers by least squares is fitted, its inliers counted
// (scale and orientation now checked against √det A and the rotation
// nearest A), and this repeats while the inliers grow, RefineIterations
// times at most. The affine map absorbs a change of viewpoint of a roughly
// planar surface, which a similarity from one frame extrapolates badly
// away from that frame.
//
// # Acceptance
//
// A count of inliers alone verifies what chance explains: two photos of
// one repeated texture (petals, leaves, brickwork) share a few words over
// many keypoints, and a shift by one period of the texture aligns many of
// their pairs; many words packed in one small region agree under any
// transform that maps the region onto the other's. So an inlier is
// evidence only once a word and once a region: the support is the
// inliers, in a fixed order, whose word, query cell and candidate cell are
// all new, cells being squares of the reprojection threshold's side in
// each image (Result.Support).
//
// The support must then be more than chance gives for these two images,
// an a contrario test (Moisan & Stival, "A probabilistic criterion to
// detect rigid point matches between two images and estimate the
// fundamental matrix", IJCV 2004; Rabin, Delon & Gousseau's ORSA for
// many matches). Were the candidate's keypoints placed at random, uniform
// over its area A, a correspondence would agree with a given transform
// with probability
//
//	p = π·r²/A · AngleTolerance/π,
//
// r the reprojection threshold in pixels: the chance that its point falls
// within r of where the transform puts it and that its rotation agrees
// (its scale change must agree too, a factor at most 1 left out, so p is
// an upper bound). A transform is fixed by s = 1 correspondence, and the
// number of false alarms of k supporting inliers among the n tentative
// correspondences is
//
//	NFA(n, k) = (n − 1) · C(n, k) · C(k, 1) · p^(k−1):
//
// the n − 1 values k can take, times the ways of choosing k of n and the
// model's own among them, times the chance that the other k − 1 agree.
// Under the background model the expected number of verifications of
// unrelated images is then below MaxNFA (1) a pair: the least support
// that verifies grows with the correspondences and with the threshold's
// share of the area. At the defaults it is 3 for ETH-80's 256×256 photos
// with 20 correspondences and 4 with 60; at 640×480, 4 with 100, 6 with
// 300 and 9 with 1,000; MinInliers (4) is a floor under it. The affine
// refinement can gain a few inliers that the similarity missed, which the
// count treats as the similarity's. A pair is verified when its support
// is at least MinInliers and its NFA below MaxNFA; the support is the
// re-ranking score.
//
// # Cost
//
// Scoring all N hypotheses against all N correspondences would be O(N²).
// Correspondences are instead binned on a grid of (rotation, log scale
// change) with cells at least as wide as the tolerances, so a hypothesis's
// inliers lie in its own cell or the eight around it, and only those are
// tried. The number of correspondences in those nine cells bounds a
// hypothesis's inliers: cells are visited by decreasing bound, and the
// search stops at the first whose bound does not beat the best count so
// far. Both prunings are exact (TestSearchEqualsBruteForce). One is not: a
// correspondence that is an inlier of the best hypothesis so far is not
// tried, since its frames map nearly the same transform. Without it a near
// duplicate, whose correspondences nearly all agree, costs N² tests (2.3 ms
// a pair at N = 1000; with it 0.13 ms); after the refinement the inliers
// are within 3% of the exhaustive search's (TestSkippingInliersOfBest, where
// they were equal). A verification costs O(n_q + n_c) for the merge and at
// most O(MaxCorrespondences²) for the search, typically a few per cent of
// that; a Matcher's scratch is about 80 bytes a correspondence (at most
// MaxCorrespondences) and 16 a shared word (at most the smaller image's
// keypoints), and it allocates nothing once warm.
//
// # Speed
//
// BenchmarkVerifyQuery verifies a query against 100 candidates (a top-100
// re-ranking; one in ten the query's scene under a similarity, its
// keypoints random in 640×480, words uniform or skewed towards common
// words, see benchImages). Median CPU time of a query on one thread of a
// shared 2-core AMD EPYC (load about 25 from other jobs, so wall time was
// 2–4× longer):
//
//	keypoints  words          correspondences  ms a query
//	      70   10⁴                    1.2          0.08
//	   2,000   10⁴                    419         14.2
//	   2,000   10⁴, skewed            660         25.1
//	   2,000   10⁶                     24          2.1
//	   2,000   10⁶, skewed             36          2.5
//	   2,000   10³ (cap full)        1000         49.9
//
// The last row fills MaxCorrespondences for every candidate, the most a
// query of such images costs at the default: time grows about as its
// square (500: 18.8 ms, 250: 9.0 ms), so MaxCorrespondences is the setting
// that bounds it. Unrelated candidates take most of the time: a pair
// costs 0.12 ms at 10⁴ words (0.11 ms related, 0.13 ms a near duplicate),
// 6 µs at 10⁶ (27 µs related, 0.2 ms a near duplicate), 0.5 ms with the
// cap full. To reproduce:
//
//	go test -run '^$' -bench . -cpu 1 ./transforms/spatial/
package spatial
