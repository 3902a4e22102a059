// Package solis implements the SOLIS learners (Sparse Online Learning of
// Image Similarity, Gao et al., ACM TIST 8(5), 2017, doi:10.1145/3065950),
// which learn a sparse diagonal bilinear similarity S_w(a,b) = Σ_i w_i a_i b_i
// over bag-of-words vectors from triplets (x, x⁺, x⁻): SOLIS-TG ([TG]),
// SOLIS-DA ([DA]), SOLIS-AFB ([AFB]) and SOLIS-ADA ([ADA]). The package
// departs from the paper in four places, numbered under "Departures from the
// paper" below; the code names the departure next to each formula it
// affects.
//
// Every learner implements learners.Stateful and registers itself with
// learners.New under its name ("solis-tg", "solis-da", "solis-afb",
// "solis-ada") when the package is imported. Every Update costs O(nnz(u)),
// never O(d) (departure 4), and does not allocate.
//
// # Common notation
//
// The learner sees one triplet feature per step t = 1, 2, …
//
//	u_t = x_t ⊙ (x⁺_t − x⁻_t),   L_t = max(0, 1 − w_t·u_t),
//
// and uses the true subgradient of the hinge loss (departure 1):
//
//	g_t = −u_t  if L_t > 0,   g_t = 0  otherwise.
//
// Every learner starts from w_1 = 0.
//
// # Departures from the paper
//
//  1. The sign of the subgradient. The paper puts u_t = x_t ⊙ (x⁺_t − x⁻_t)
//     where the subgradient of the loss belongs (Algorithm 1 line 5 and
//     Eq. (12), Eq. (15), Eqs. (19b) and (22b)), but the subgradient of
//     L = max(0, 1 − w·u) is −u_t where L > 0. With the paper's sign a step
//     lowers w·u and so raises the loss it should lower, and informative
//     words end up with negative weights. The package uses the true g_t
//     above; TestSeparableToy and TestSeparableToyAll check on separable
//     problems that the loss falls and informative words get positive
//     weights.
//  2. Averages count every step, and only steps with a loss contribute. DA
//     and ADA average over all t steps, ḡ_t = (1/t)·Σ_{τ≤t} g_τ, with
//     g_τ = 0 on steps whose loss was 0. The paper's Algorithm 2 (line 7)
//     adds u_t to the average on every step whatever the loss; that is not a
//     subgradient of the hinge, and it keeps pushing on triplets that are
//     already ranked with a margin. G_t (AFB, ADA) sums g_τ² alike, so a
//     zero-loss step leaves it as it is; H_t,ii = δ + √G_t,i.
//  3. The closed forms are the paper's (Algorithm 1, Eqs. (16), (19a),
//     (22a)) with 1 and 2 applied, that is, written with the true g_t; each
//     learner's section below gives its form. TG and AFB change w only on
//     steps with L_t > 0, as in the paper; DA and ADA recompute w after
//     every step, because t advances on every step (see their sections).
//  4. The cost of a step. The paper's algorithms loop over all d
//     coordinates on every step; here a step costs O(nnz(u_t)). A
//     coordinate that a step does not touch changes only in a way that can
//     be computed later in closed form (TG and AFB: k more shrinks of a
//     known size, clipped at 0; DA and ADA: w is a function of running sums
//     and t), so the learners keep the sums and per-coordinate "last
//     touched" counts and materialise w_i when it is read.
//     TestLazyMatchesNaive checks on random data that this gives the
//     weights of the dense loop (bit for bit, or within the bound stated
//     under SOLIS-AFB).
//
// # SOLIS-TG (truncated gradient, paper §4.2, Algorithm 1)
//
// On a step with L_t > 0 every coordinate takes a gradient step and is
// truncated towards 0 by α = ηλ (departure 3):
//
//	v = w − ηg_t,   w_i ← sign(v_i)·max(0, |v_i| − α)   for every i;
//
// a step with L_t = 0 changes nothing. For i ∉ supp(u_t) the step is the
// truncation alone, and k truncations in a row are one of size kα (0 is a
// fixed point). So TG counts the steps with L > 0, stores each w_i with the
// count k_i it is up to date with, and when it next reads w_i — to compute a
// loss, or to update it — first pays what is owed:
//
//	w_i ← sign(w_i)·max(0, |w_i| − (k − k_i)·α).
//
// # SOLIS-DA (regularized dual averaging, paper §4.3, Algorithm 2)
//
// With the running sum s_t = Σ_{τ≤t} g_τ and the average ḡ_t = s_t/t over
// ALL t steps (departure 2; the paper's line 7 adds u on every step), the
// weights are the closed form (16)
//
//	λ_t = λ + γρ/√t,
//	w_t+1,i = 0                                  if |ḡ_t,i| ≤ λ_t,
//	w_t+1,i = −(√t/γ)·(ḡ_t,i − λ_t·sign(ḡ_t,i))   otherwise,
//
// a pure function of (s_t, t): DA stores only s and t, and a step writes s on
// supp(u_t) only. As for ADA below, t advances on every step, so every step
// redefines w (Xiao's RDA); the paper's Algorithm 2 writes w only on steps
// with L > 0.
//
// # SOLIS-AFB (adaptive FOBOS, paper §4.4, Algorithm 3)
//
// With G_t,i = Σ_{τ≤t} g_τ,i² and H_t,ii = δ + √G_t,i, a step with L_t > 0
// sets, for every coordinate (departure 3),
//
//	v = w_i − (η/H_t,ii)·g_t,i,   w_i ← sign(v)·max(0, |v| − λη/H_t,ii),
//
// and a step with L_t = 0 changes nothing. For i ∉ supp(u_t), g_t,i = 0
// leaves G_i, and so the shrink λη/H_ii, as they were: AFB owes and pays
// shrinks as TG does, with a per-coordinate size that is constant between
// two steps that touch the coordinate. λη/H_ii is evaluated as λ·(η/H_ii),
// and η/H_ii is cached per coordinate. Where H_ii = 0 (δ = 0 and G_i = 0)
// the formula reads 0/0; such a coordinate has never had a non-zero
// subgradient, and its weight stays 0.
//
// The two families zero different words. TG and AFB keep w_i exactly 0
// while every push |g_t,i| it gets is at most λ (TG: η|u_i| ≤ ηλ; AFB:
// (η/H_ii)|g_t,i| ≤ λη/H_ii), but a word pushed harder keeps its last push
// until enough shrinks have paid it off. DA and ADA keep w_i exactly 0 while
// the average |ḡ_t,i| is at most λ (λ_t for DA), which zeroes words whose
// pushes cancel out whatever their size.
//
// Paying k owed shrinks as one subtraction |w_i| − kα is exact in exact
// arithmetic but rounds differently from k subtractions in a row: the lazy
// TG and AFB agree with the dense loop to within a few ulps of |w|·k, not bit
// for bit, when λ > 0 (TestLazyMatchesNaive states the bound it checks).
// With λ = 0, and for DA and ADA, they agree bit for bit.
//
// # SOLIS-ADA (adaptive regularized dual averaging, paper §4.5, Algorithm 4)
//
// After t steps the learner keeps, per coordinate i,
//
//	s_t,i = Σ_{τ≤t} g_τ,i          (running subgradient sum)
//	G_t,i = Σ_{τ≤t} g_τ,i²         (running squared-subgradient sum)
//	ḡ_t,i = s_t,i / t              (average over ALL t steps, zero-loss steps included; departure 2)
//	H_t,ii = δ + √G_t,i
//
// and the weights are the minimiser of η⟨ḡ_t, w⟩ + ηλ‖w‖₁ + (1/2t)⟨w, H_t w⟩,
// the closed form (22a) (departure 3):
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
// (departure 4).
//
// Because t advances on every step, every step redefines w for every
// coordinate, as Duchi, Hazan and Singer's adaptive RDA does: with λ > 0 a
// zero-loss step shrinks every |w_i| by ηλ/H_ii (clipped at 0); with λ = 0 it
// changes nothing. The paper's Algorithm 4 writes w only on steps with L > 0,
// so with λ > 0 its weights lag behind ours between two such steps.
//
// # Non-negative weights (an option, not the paper)
//
// With NonNeg set in a learner's params (hyper-parameter "nonneg" = 1,
// e.g. --learner_params solis-ada.nonneg=1) every learner keeps w ≥ 0. A
// negative w_i makes two images less similar for sharing word i: a penalty
// for common content, which retrieval by an inverted index cannot use (it
// drops a word only where w_i = 0, and ranks the images that share the
// query's words). Mined hard negatives, which share many words with their
// query, turned 48–70% of the SOLIS learners' weights negative on ETH-80 at
// 10K words (97–98% of OASIS-diag's at 1K), and put every learner far
// below TF-IDF.
//
// Each learner keeps its own update and adds the constraint w ∈ R^d_+ to
// the problem that update solves. Every such problem below is a sum over
// coordinates of convex functions of one variable, f_i(w_i), so it is
// solved coordinate by coordinate; and a convex f of one variable whose
// unconstrained minimiser is w* does not increase on (−∞, w*] and does not
// decrease on [w*, ∞), so its minimiser over [0, ∞) is max(0, w*). The
// constrained update is therefore the positive part of the unconstrained
// one, coordinate by coordinate:
//
//   - TG: the truncation T₁(v, α) is the minimiser of ½(w − v)² + α|w|; on
//     w ≥ 0, |w| = w and the vertex of ½(w − v)² + αw is v − α, so
//     w_i ← max(0, v_i − α) = max(0, T₁(v_i, α)), v = w − ηg_t: truncate,
//     then clip at 0.
//   - DA: w_t+1 = argmin_{w ≥ 0} ⟨ḡ_t, w⟩ + λ_t‖w‖₁ + (γ/2√t)‖w‖². On
//     w_i ≥ 0, f_i(w) = (ḡ_i + λ_t)·w + (γ/2√t)·w², a parabola with vertex
//     −(√t/γ)(ḡ_i + λ_t), so
//     w_t+1,i = (√t/γ)·max(0, −ḡ_i − λ_t).
//     Where ḡ_i < −λ_t this is (16)'s −(√t/γ)(ḡ_i − λ_t·sign(ḡ_i)) > 0;
//     elsewhere (16) gives a value ≤ 0 and the constrained minimiser is 0.
//   - AFB: w_t+1 = argmin_{w ≥ 0} ⟨ηg_t, w⟩ + ηλ‖w‖₁ + B_Ψt(w, w_t); on
//     w_i ≥ 0, f_i(w) = η(g_t,i + λ)·w + (H_t,ii/2)(w − w_t,i)², vertex
//     v − λη/H_t,ii with v = w_t,i − (η/H_t,ii)g_t,i, so
//     w_t+1,i = max(0, v − λη/H_t,ii), the positive part of (19a).
//   - ADA: w_t+1 = argmin_{w ≥ 0} η⟨ḡ_t, w⟩ + ηλ‖w‖₁ + (1/2t)⟨w, H_t w⟩;
//     on w_i ≥ 0, f_i(w) = η(ḡ_i + λ)·w + (H_t,ii/2t)·w², vertex
//     −(η t/H_t,ii)(ḡ_i + λ), so
//     w_t+1,i = (η t/H_t,ii)·max(0, −ḡ_i − λ), the positive part of (22a).
//
// The code evaluates each unconstrained form as without NonNeg and takes
// max(w_i, 0), which for DA and ADA is the same float64 as the constrained
// forms above (where ḡ_i < 0, |ḡ_i| = −ḡ_i exactly); without NonNeg the
// code takes no max, so the default's weights are unchanged bit for bit.
// What stays the same: DA and ADA still store only s, G and
// t (the constraint acts on the weights read from them, and through them on
// the losses, hence on which steps add to s and G); a TG or AFB weight ≥ 0
// stays ≥ 0 under the owed shrinks, so only the coordinates a step touches
// need the clip; the lazy forms still match the dense loops
// (TestLazyMatchesNaive runs both settings); and the average of
// non-negative states is non-negative, so sharded training keeps w ≥ 0.
//
// What changes besides the sign: a word whose average push is against
// sharing it (ḡ_i > 0, or −ḡ_i ≤ λ) has weight 0 instead of a negative
// one, so the model is at least as sparse, and its loss is measured with
// the clipped weights. The setting is part of the hyper-parameters, so the
// state file of an incremental run records it, and a night with the other
// setting starts afresh rather than from a state trained under it.
//
// The effect on held-out mAP, with random and with mined negatives, is
// measured in docs/results.md.
//
// # Sharded training
//
// State exports, and SetState imports, what defines each learner's weights
// (learners.State): DA the sums s; ADA s and G; TG the up-to-date w; AFB
// the up-to-date w and G; each with the step count. learners.Average
// averages them element-wise. TG and AFB also export each stored w_i with
// the number of shrinks it is owed: when SetState is handed a state whose
// stored values and owed counts reproduce its up-to-date weights exactly
// (any state that State returned and Average did not mix with others), it
// restores that representation rather than the paid-up weights, which would
// round later shrinks differently. So State followed by SetState, and
// sharded training with one shard and any number of rounds, continue bit for
// bit as the learner would have (the learners package doc, "Sharded
// training"; TestShardedOneShardIsSequential checks it).
package solis
