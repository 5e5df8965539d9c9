"""Tiny enumerable targets of every structural kind (d ≤ 10), shared by the tests."""

from __future__ import annotations

import numpy as np

import targets


def _blackbox_target():
    weights = np.array([0.8, -0.5, 0.3, 1.1, -0.9, 0.2])

    def log_prob(x):
        x = x.astype(np.float64)
        return x @ weights - 1.5 * x[:, 0] * x[:, 3] + 0.7 * x[:, 1] * x[:, 2] * x[:, 5]

    return targets.from_log_prob(log_prob, 6)


# Six binary variables: a unary, three pairwise and one near-deterministic triplet factor.
TINY_UAI = """MARKOV
6
2 2 2 2 2 2
5
1 0
2 0 1
2 1 2
3 2 3 4
2 4 5

2 0.3 0.7
4 2.0 0.5 0.5 2.0
4 1.0 3.0 3.0 1.0
8 1.0 0.001 0.001 1.0 0.001 1.0 1.0 0.001
4 0.2 1.0 1.0 0.2
"""


TINY_TARGETS = {
    "ising1d": lambda: targets.make("ising1d", m=6, beta=0.8, J=1.0, h=0.3, mu=1.0),
    "frustrated_boltzmann": lambda: targets.make("boltzmann"),  # 8 spins, random signs, non-zero fields
    "segmentation": lambda: targets.make("ising_segmentation", size=3, lam=1.0, mu=3.0, sigma=3.0, seed=1),
    "spin_glass": lambda: targets.make("spin_glass_3d", size=2, beta=0.7, seed=3),
    "blackbox": _blackbox_target,
    "rbm": lambda: targets.RBM.random(7, 3, seed=2),
    "markov_network": lambda: targets.make("markov_network", uai_text=TINY_UAI),
    "bvs": lambda: targets.make("bvs", n_predictors=6, n_samples=30, seed=3),
}
