"""Generate the shipped binary Markov networks ``assets/markov/*.uai`` (fixed seeds).

Run as ``python assets/build_markov_networks.py`` (well under a second). The
networks imitate the UAI 2006 evaluation networks used by the LSB paper: 100
binary variables on a 10×10 grid, with near-deterministic factors, i.e. tables
that put almost all their mass on a few configurations. Every "forbidden"
entry is a small ε = 10^u, u ~ U(−6, −3), rather than 0, so every state keeps a
positive (if tiny) probability and log p̃ is finite everywhere.

* ``bn_grid10x10_50pct_near_deterministic`` and
  ``bn_grid10x10_90pct_near_deterministic``: the grid Bayesian networks of
  Sang, Beame & Kautz (the UAI 2006 "grids" family). Variable (r, c) has the
  parents (r − 1, c) and (r, c − 1); its conditional table becomes a factor
  over (parents…, child) — arity 3 inside the grid, 2 on the first row and
  column, 1 at the corner. Each row of a table (one parent configuration) is,
  with probability 0.5 resp. 0.9, near-deterministic (1 on a random child value,
  ε on the other), and otherwise (1 − q, q) with q ~ U(0.1, 0.9).
* ``grid10x10_pairwise_random_triplets``: a 10×10 open grid of pairwise
  factors φ(a, b) = exp(J s_a s_b) (s = 2x − 1, J ~ U(−1, 1), a frustrated
  spin glass) plus 40 factors on random variable triplets whose tables are 1 on
  two random configurations out of eight and ε on the other six.

Entries are rounded to four significant digits to keep the files readable.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

ASSETS = Path(__file__).resolve().parent
sys.path.insert(0, str(ASSETS.parent))  # run as a script: make the ``targets`` package importable

from targets.uai import UAIModel, format_uai, parse_uai  # noqa: E402

OUTPUT = ASSETS / "markov"
SIDE = 10
MAX_FILE_BYTES = 100_000


def near_zero(rng: np.random.Generator, size) -> np.ndarray:
    """Forbidden-entry weights ε = 10^u, u ~ U(−6, −3)."""
    return 10.0 ** rng.uniform(-6.0, -3.0, size)


def rounded(table: np.ndarray) -> np.ndarray:
    """``table`` with every entry rounded to four significant digits."""
    return np.array([float(f"{value:.4g}") for value in table.ravel()]).reshape(table.shape)


def conditional_table(rng: np.random.Generator, n_parents: int, deterministic_fraction: float) -> np.ndarray:
    """A (2,)·(n_parents + 1) table over (parents…, child): one row per parent configuration.

    A row is (1, ε) or (ε, 1) with probability ``deterministic_fraction``, else (1 − q, q).
    """
    n_rows = 2**n_parents
    q = rng.uniform(0.1, 0.9, n_rows)
    soft = np.stack([1.0 - q, q], axis=1)
    favoured = rng.integers(0, 2, n_rows)[:, None] == np.arange(2)
    near_deterministic = np.where(favoured, 1.0, near_zero(rng, (n_rows, 1)))
    rows = np.where((rng.random(n_rows) < deterministic_fraction)[:, None], near_deterministic, soft)
    return rounded(rows).reshape((2,) * (n_parents + 1))


def bayes_grid(deterministic_fraction: float, seed: int) -> UAIModel:
    """The Sang–Beame–Kautz grid Bayesian network as a Markov network (see the module docstring)."""
    rng = np.random.default_rng(seed)
    index = np.arange(SIDE * SIDE).reshape(SIDE, SIDE)
    scopes, tables = [], []
    for r in range(SIDE):
        for c in range(SIDE):
            parents = ([index[r - 1, c]] if r else []) + ([index[r, c - 1]] if c else [])
            scopes.append([*parents, index[r, c]])
            tables.append(conditional_table(rng, len(parents), deterministic_fraction))
    return UAIModel(SIDE * SIDE, [2] * SIDE * SIDE, tuple(scopes), tuple(tables))


def grid_edges() -> np.ndarray:
    """The (180, 2) nearest-neighbour pairs of the open SIDE×SIDE grid."""
    index = np.arange(SIDE * SIDE).reshape(SIDE, SIDE)
    horizontal = np.stack([index[:, :-1].ravel(), index[:, 1:].ravel()], axis=1)
    vertical = np.stack([index[:-1].ravel(), index[1:].ravel()], axis=1)
    return np.concatenate([horizontal, vertical])


def pairwise_grid_with_triplets(n_triplets: int, seed: int) -> UAIModel:
    """Spin-glass grid pairs plus near-deterministic random triplets (see the module docstring)."""
    rng = np.random.default_rng(seed)
    edges = grid_edges()
    spins = np.array([-1.0, 1.0])
    couplings = rng.uniform(-1.0, 1.0, len(edges))
    pair_tables = [rounded(np.exp(J * np.outer(spins, spins))) for J in couplings]
    triplets = [rng.choice(SIDE * SIDE, size=3, replace=False) for _ in range(n_triplets)]
    triplet_tables = []
    for _ in range(n_triplets):
        table = near_zero(rng, 8)
        table[rng.choice(8, size=2, replace=False)] = 1.0
        triplet_tables.append(rounded(table).reshape(2, 2, 2))
    return UAIModel(
        SIDE * SIDE, [2] * SIDE * SIDE, (*edges, *triplets), (*pair_tables, *triplet_tables)
    )


NETWORKS = {
    "bn_grid10x10_50pct_near_deterministic": lambda: bayes_grid(0.5, seed=2006),
    "bn_grid10x10_90pct_near_deterministic": lambda: bayes_grid(0.9, seed=2007),
    "grid10x10_pairwise_random_triplets": lambda: pairwise_grid_with_triplets(40, seed=2008),
}


def write(name: str, model: UAIModel) -> Path:
    """Write ``model`` to ``OUTPUT/<name>.uai``, checking that it reads back identically."""
    text = format_uai(model)
    if len(text) > MAX_FILE_BYTES:
        raise RuntimeError(f"{name}: {len(text):,} bytes exceeds {MAX_FILE_BYTES:,}")
    if format_uai(parse_uai(text)) != text:
        raise RuntimeError(f"{name}: the written text does not read back identically")
    path = OUTPUT / f"{name}.uai"
    path.write_text(text)
    return path


def main() -> None:
    OUTPUT.mkdir(exist_ok=True)
    for name, build in NETWORKS.items():
        model = build()
        path = write(name, model)
        arities = dict(sorted(Counter(scope.size for scope in model.scopes).items()))
        print(
            f"{path.relative_to(ASSETS.parent)}: {model.n_vars} variables, {len(model.scopes)} factors "
            f"(number by arity: {arities}), {path.stat().st_size:,} bytes"
        )


if __name__ == "__main__":
    main()
