"""Local self-balancing (LSB paper, Sansone): locally balanced samplers that learn their balancing function.

The package's mathematics is stated here, once; its modules refer to it. p = p̃/Γ on
{0,1}^d, N(x) the d single-flip neighbours of x, t = p̃(x')/p̃(x) a flip ratio.

Kernel (§2). The locally informed proposal (Eq. 2)

    Q_θ(x'|x) = g_θ(p̃(x')/p̃(x)) 1[x' ∈ N(x)] / Z_θ(x),   Z_θ(x) = Σ_{x''∈N(x)} g_θ(p̃(x'')/p̃(x)),

is accepted with A(x', x) = min{1, p̃(x')Q(x|x')/(p̃(x)Q(x'|x))} (the text after
Eq. 1), so T(x'|x) = A(x', x)Q(x'|x) for x' ≠ x (Eq. 1; with the rejection mass,
Eq. 7). g is a balancing function if g(t) = t·g(1/t) for all t > 0 (§2, after
Eq. 2; Zanella 2020); then A(x', x) = min{1, Z(x)/Z(x')} (§2, "Acceptance rate")
and the chain is reversible w.r.t. p (Appendix A). The fixed g's are
t/(1+t), √t, min{1, t} and max{1, t} (§5.1, after Zanella 2020).

Parametrisations (§3.1). LSB1: g_θ = Σ_i w_i g_i over n = 4 fixed balancing
functions, w = softmax(θ); a positive combination of balancing functions is
balancing (Proposition 3.1). LSB2: g_θ(t) = h_θ(t)/2 + t·h_θ(1/t)/2 with h_θ a
network: balancing for every θ, and every balancing function is reachable
(Proposition 3.2). For the UAI models the paper takes h_θ a monotonic network
(Appendices D and G).

Objective (§3.2). θ minimises the mutual information between consecutive states,

    I_θ = KL{p(x)T_θ(x'|x) ‖ p(x)p(x')}   (Eq. 3),

through the upper bound I_θ ≤ L_θ/Γ + log Γ/Γ (any η > 0) of Theorem 3.3, case (b) (Eq. 5):

    L_θ = E_{x~Q₁, x'~Q₂}[ p̃(x)Q_θ(x'|x)/(Q₁(x)Q₂(x')) · A_θ(x',x) · log(A_θ(x',x)Q_θ(x'|x)/p̃(x')) ]
        + E_{x~Q₁}[ M(x)/Q₁(x) · (η M(x) − p̃(x)(log η + 1)) ],
    M(x) = 1 − A_θ(x*,x)Q_θ(x*|x),   x* uniform on N(x),

with Q₂(x') = Q_θ₀(x'|x), the proposal at the previous parameters θ₀, and
Q₁(x) = π·U(x) + (1 − π)·δ(x − x̂), x̂ the chain's last accepted state (§3.2).
Case (a) (Eq. 4), with M(x) = 1 − Σ_{x''∈N(x)} A_θ(x'',x)Q_θ(x''|x), equals I_θ
up to constants but needs O(d²) evaluations per estimate.

Algorithms. LSB (Algorithm 1): for K burn-in steps, on N chains, draw x ~ Q₁ and
x' ~ Q₂, estimate L̂_θ, set θ ← θ − (γ/N)∇_θ L̂_θ, update η, accept or reject,
θ₀ ← θ (γ = 1e-2, π = 1e-8). FLSB (Algorithm 2) proposes from the first-order
Taylor estimate of the flip log-ratios (§3.3), with f = log p̃ and x_{−i} = x with bit i flipped,

    log t_i ≈ ∇f(x)ᵀ(x_{−i} − x) = (1 − 2x_i)·∂f/∂x_i,

and keeps the exact p̃ in the acceptance; with g = √t its proposal is
Gibbs-with-Gradients' (Grathwohl et al. 2021).

Modules: ``balancing`` (the fixed and learned g, in log space), ``networks`` (the
learned g_θ as torch modules; the one module that imports torch), ``mi_objective``
(the estimator of L_θ and the learner), ``learning`` (its compiled kernels),
``optimizers`` (SGD, Adam) and ``self_balancing`` (the LSB and FLSB samplers).
"""
