"""Train the shipped RBM target (``assets/rbm_digits.npz``) on binarised 8×8 digits.

Run as ``python assets/build_rbm.py`` (10–20 seconds). The data are
scikit-learn's ``digits`` (1797 images, pixel values 0..16, shipped inside the
wheel), binarised as pixel > 7. The RBM has 16 hidden units and is trained by
persistent contrastive divergence (PCD-1): the log-likelihood gradient

    ∂ log p(v)/∂W = E_data[v σ(a)ᵀ] − E_model[v σ(a)ᵀ],   a = c + Wᵀv

(and likewise for b and c) takes its model expectation from persistent Gibbs
chains that advance one step per update. With H = 16 the partition function
is exact, so the script reports the exact average log-likelihood per image,
next to that of the best independent-Bernoulli model (the maximum-likelihood
pixel marginals). The output holds float64 arrays W (64, 16), b (64,), c (16,).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.special import expit, xlogy
from sklearn.datasets import load_digits

ASSETS = Path(__file__).resolve().parent
sys.path.insert(0, str(ASSETS.parent))  # run as a script: make the ``targets`` package importable

from targets.rbm import RBM  # noqa: E402

OUTPUT = ASSETS / "rbm_digits.npz"
N_HIDDEN = 16
SEED = 0
EPOCHS = 2000
BATCH = 100  # minibatch size, and number of persistent chains
LEARNING_RATE = 0.1
WEIGHT_DECAY = 1e-4


def binarised_digits() -> np.ndarray:
    """The 1797 digits as a (1797, 64) uint8 array, pixel > 7 ↦ 1."""
    return (load_digits().data > 7).astype(np.uint8)


def independent_bernoulli_log_likelihood(data: np.ndarray) -> float:
    """Average log-likelihood of ``data`` under its maximum-likelihood product of Bernoullis.

    Per image Σ_i [x_i log p_i + (1 − x_i) log(1 − p_i)] with p the pixel means (0 log 0 = 0).
    """
    p = data.mean(axis=0)
    return float((xlogy(data, p) + xlogy(1 - data, 1 - p)).sum(axis=1).mean())


def gibbs_step(v: np.ndarray, W, b, c, rng) -> np.ndarray:
    """One block-Gibbs sweep v → h ~ p(h | v) → v' ~ p(v | h)."""
    h = rng.random((len(v), len(c))) < expit(c + v @ W)
    return (rng.random(v.shape) < expit(b + h @ W.T)).astype(np.float64)


def train_pcd(data: np.ndarray, n_hidden: int, seed: int):
    """Fit W, b, c by PCD-1 with a linearly decaying learning rate and small L2 weight decay.

    W starts at N(0, 0.01²) and b at the log-odds of the (smoothed) pixel means,
    so training starts from the independent-Bernoulli fit.
    """
    rng = np.random.default_rng(seed)
    x = data.astype(np.float64)
    n, d = x.shape
    p = (x.sum(axis=0) + 1.0) / (n + 2.0)
    W = 0.01 * rng.standard_normal((d, n_hidden))
    b = np.log(p / (1.0 - p))
    c = np.zeros(n_hidden)
    chains = (rng.random((BATCH, d)) < p).astype(np.float64)
    n_batches = n // BATCH
    rates = LEARNING_RATE * (1.0 - np.arange(EPOCHS * n_batches) / (EPOCHS * n_batches))
    for epoch in range(EPOCHS):
        batches = rng.permutation(n)[: n_batches * BATCH].reshape(n_batches, BATCH)
        for rate, rows in zip(rates[epoch * n_batches:], batches):
            batch = x[rows]
            chains = gibbs_step(chains, W, b, c, rng)
            h_data, h_model = expit(c + batch @ W), expit(c + chains @ W)
            W += rate * ((batch.T @ h_data - chains.T @ h_model) / BATCH - WEIGHT_DECAY * W)
            b += rate * (batch.mean(axis=0) - chains.mean(axis=0))
            c += rate * (h_data.mean(axis=0) - h_model.mean(axis=0))
    return W, b, c


def main() -> None:
    data = binarised_digits()
    W, b, c = train_pcd(data, N_HIDDEN, SEED)
    np.savez(OUTPUT, W=W, b=b, c=c)
    rbm = RBM(weights=W, visible_bias=b, hidden_bias=c)
    rbm_ll = float(rbm.log_prob(data).mean() - rbm.log_partition())
    print(f"wrote {OUTPUT.relative_to(ASSETS.parent)}: d = {rbm.dim}, H = {rbm.n_hidden}")
    print(f"average exact log-likelihood per image (nats): RBM {rbm_ll:.3f}, "
          f"independent Bernoulli {independent_bernoulli_log_likelihood(data):.3f}")


if __name__ == "__main__":
    main()
