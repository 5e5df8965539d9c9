"""Per-step cost of the LSB paper authors' own torch code, to print our benchmarks' ratios against it.

The authors' 2D-Ising code (MIT; ``sampler.py`` class ``LBS``, ``self_sampler.py`` class ``LSBS``) is imported at
run time from ``REFERENCE_DIR`` -- never copied into this project -- and timed on the paper's 30×30 segmentation
task, built as their ``runner.py`` builds it: ``alpha = μ·s* + U(−σ, σ)`` drawn independently per chain and site
(``s*`` is +1 on the central square and −1 on the border of width n // 4), and a random ±1 start shared by every
sampler. What one call of each ``kind`` times:

* ``"sqrt"``, ``"barker"``, ``"min"``, ``"max"``: ``LBS(func=kind).sample()``, one locally balanced move of every
  chain with that fixed balancing function;
* ``"lsb1_learning"``, ``"lsb2_learning"``: ``LSBS(func="lsb1"/"lsb2", lr=1e-2, hidden=10, max_value=2,
  burn_in=True).sample_burn_in()``, a move plus one Adam step on the balancing function's parameters;
* ``"lsb1_frozen"``, ``"lsb2_frozen"``: ``LSBS(..., burn_in=False, theta=θ).sample()``, where θ is what
  ``runner.py`` hands over after burn-in, taken from a freshly built learning sampler: for LSB1 its ``theta`` (four
  zeros that require grad), for LSB2 its ``model.state_dict()`` (the MLP after the constructor's 5000-step fit to
  √t, which the frozen sampler loads with ``load_state_dict``).

Because θ requires grad in the frozen samplers, as in the authors' runs, their ``sample()`` builds an autograd graph
that is never freed and grows with every call (0.2–0.3 MB per call at 30 chains): the cost is timed as the
authors' code pays it, so keep ``steps * repeats`` modest.

Times are CPU seconds of this process (``time.process_time``) with torch limited to one thread, the best of
``repeats`` runs of ``steps`` calls after a short warm-up: on a shared, loaded machine wall time also counts the
time spent waiting for a core, which this clock does not, and one thread makes the figure comparable with our
single-threaded samplers. Time ours with the same clock before taking ratios.

Compatibility with the project's torch (2.13.0; the authors list torch 1.8.1): ``LBS`` and ``LSBS`` run unmodified
and without warnings, so no workaround is needed beyond importing them by file path (their module names,
``sampler`` and ``self_sampler``, are too generic to put on ``sys.path``) and silencing the loss lines that the LSB2
constructor prints. ``runner.py`` itself is not used: it is a script, and its ``plt.style.use('seaborn')`` fails on
current matplotlib.

``runner`` runs ``runner.py``'s experiment itself, minus its plots and files: its six samplers on one task, burn-in
then sampling, in its order of calls, and returns every chain's Σ_i x_i after every iteration (what its
``Summary.pt`` holds) and LSB1's mixture weights along the burn-in.

If ``REFERENCE_DIR`` is absent, ``available()`` is False and ``reference_seconds_per_step`` returns None; callers
then print ``SKIPPED``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import torch

REFERENCE_DIR: Path = Path(__file__).resolve().parents[3] / "shared/reference/lsb/2DIsing"
SKIPPED: str = f"reference code not found at {REFERENCE_DIR}: comparison skipped"
KINDS: tuple[str, ...] = ("sqrt", "barker", "min", "max",
                          "lsb1_learning", "lsb2_learning", "lsb1_frozen", "lsb2_frozen")

SEED = 12345678  # runner.py's seed
#: ``runner.py``'s samplers, in its order of calls: ``LBS`` with each fixed function, then ``LSBS`` LSB1 and LSB2.
RUNNER_FUNCS: tuple[str, ...] = ("barker", "sqrt", "min", "max", "lsb1", "lsb2")
#: ``runner.sh``'s learning settings of ``LSBS``.
LSBS_SETTINGS = dict(lr=1e-2, hidden=10, max_value=2)
WARM_UP = 5  # untimed calls before the first timed run


def available() -> bool:
    """Whether the authors' ``sampler.py`` and ``self_sampler.py`` are present in ``REFERENCE_DIR``."""
    return all((REFERENCE_DIR / f"{name}.py").is_file() for name in ("sampler", "self_sampler"))


@functools.cache
def load_module(name: str) -> ModuleType:
    """The reference module ``name`` (a file of ``REFERENCE_DIR``), loaded under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"lsb_reference_{name}", REFERENCE_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def segmentation_task(n: int, batch: int, mu: float, sigma: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(alpha, start_x)`` of shape (batch, n, n), drawn as in ``runner.py``."""
    border = n // 4
    truth = torch.full((n, n), mu)
    truth[:border, :] = truth[n - border:, :] = truth[:, :border] = truth[:, n - border:] = -mu
    alpha = truth + 2 * sigma * torch.rand((batch, n, n)) - sigma
    start_x = torch.randint(2, (batch, n, n)) * 2 - 1
    return alpha, start_x


def _step(kind: str, n: int, batch: int, lam: float, mu: float, sigma: float):
    """The bound method whose call is one step of ``kind``, on a sampler freshly built for the task."""
    alpha, start_x = segmentation_task(n, batch, mu, sigma)
    task = dict(batch=batch, n=n, lamda=lam, alpha=alpha, start_x=start_x)
    if kind in ("sqrt", "barker", "min", "max"):
        return load_module("sampler").LBS(func=kind, **task).sample
    func, phase = kind.split("_")
    lsbs = functools.partial(load_module("self_sampler").LSBS, func=func, lr=1e-2, hidden=10, max_value=2, **task)
    with contextlib.redirect_stdout(io.StringIO()):  # LSB2's constructor prints its fit to √t
        learning = lsbs(burn_in=True)
        if phase == "learning":
            return learning.sample_burn_in
        theta = learning.theta if func == "lsb1" else learning.model.state_dict()
        return lsbs(burn_in=False, theta=theta).sample


def reference_seconds_per_step(kind: str, *, n: int = 30, batch: int = 30, lam: float = 1.0, mu: float = 1.0,
                               sigma: float = 3.0, steps: int = 200, repeats: int = 3) -> float | None:
    """CPU seconds per call of the reference sampler ``kind`` (one of ``KINDS``) on ``batch`` chains of n×n.

    ``lam``, ``mu`` and ``sigma`` are the task's coupling λ, signal μ and noise σ. The best of ``repeats`` runs of
    ``steps`` calls, after ``WARM_UP`` calls, with torch seeded with ``SEED`` before the task is drawn and limited to
    one thread; the global torch RNG state and thread count are restored afterwards. None if the reference code is
    not available. Raises ValueError for an unknown ``kind`` or non-positive ``steps`` or ``repeats``.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    if steps < 1 or repeats < 1:
        raise ValueError(f"steps and repeats must be positive, got steps={steps}, repeats={repeats}")
    if not available():
        return None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            step = _step(kind, n, batch, lam, mu, sigma)
            for _ in range(WARM_UP):
                step()
            best = float("inf")
            for _ in range(repeats):
                start = time.process_time()
                for _ in range(steps):
                    step()
                best = min(best, time.process_time() - start)
    finally:
        torch.set_num_threads(threads)
    return best / steps


def runner(n: int, batch: int, lam: float, mu: float, sigma: float, burn_in: int, iterations: int,
           seed: int = 0) -> dict[str, np.ndarray]:
    """``runner.py``'s experiment on one task, as it runs it: torch seeded with ``SEED + seed`` (``seed`` 0 is
    their own run), ``(alpha, start_x)`` drawn (``segmentation_task``), the six ``RUNNER_FUNCS`` samplers built
    from the same start, ``burn_in`` iterations (each fixed ``LBS.sample()``, one LSB1 ``sample_burn_in()``, two
    LSB2 ``sample_burn_in()``), then each sampler rebuilt from its state — LSB1 with its θ, LSB2 with its
    network's ``state_dict`` (``burn_in=False``) — and ``iterations`` sampling iterations of ``sample()``.

    Returns, per function f, ``sums_f`` of shape (burn_in + iterations + 1, batch): every chain's Σ_i x_i at the
    start and after every iteration (``runner.py``'s ``summary_f``, transposed); ``lsb1_weights`` (burn_in, 4):
    softmax(θ) of LSB1 after every burn-in iteration, in ``runner.py``'s order (t/(1+t), √t, min, max); and
    ``cpu_seconds`` of the whole. Torch runs one thread; its generator and thread count are restored after.
    The sampling iterations run under ``torch.no_grad()``: the frozen LSBS keep θ requiring grad and would build
    an autograd graph that is never read (and grows by 0.2–0.3 MB a call); no number changes.
    """
    threads, started = torch.get_num_threads(), time.process_time()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED + seed)
            alpha, start_x = segmentation_task(n, batch, mu, sigma)
            task = dict(batch=batch, n=n, lamda=lam, alpha=alpha)
            samplers = _runner_samplers(task, {func: start_x for func in RUNNER_FUNCS})
            sums = {func: [_sums(sampler)] for func, sampler in samplers.items()}
            weights = []
            for _ in range(burn_in):
                for func, sampler in samplers.items():
                    step = sampler.sample_burn_in if func.startswith("lsb") else sampler.sample
                    for _ in range(2 if func == "lsb2" else 1):
                        step()
                    sums[func].append(_sums(sampler))
                weights.append(samplers["lsb1"].softmax(samplers["lsb1"].theta).detach().double().numpy())
            states = {func: sampler.x for func, sampler in samplers.items()}
            samplers = _runner_samplers(task, states, theta={"lsb1": samplers["lsb1"].theta,
                                                             "lsb2": samplers["lsb2"].model.state_dict()})
            with torch.no_grad():
                for _ in range(iterations):
                    for func, sampler in samplers.items():
                        sampler.sample()
                        sums[func].append(_sums(sampler))
    finally:
        torch.set_num_threads(threads)
    result = {f"sums_{func}": np.array(trace) for func, trace in sums.items()}
    return result | {"lsb1_weights": np.array(weights).reshape(burn_in, 4),
                     "cpu_seconds": time.process_time() - started}


def _runner_samplers(task: dict, start: dict, theta: dict | None = None) -> dict:
    """``runner.py``'s six samplers from the states ``start`` (function → x): learning, or frozen with ``theta``
    (function → LSB1's θ or LSB2's state dict). The LSB2 constructor's fit to √t prints; it is silenced."""
    samplers = {func: load_module("sampler").LBS(func=func, start_x=start[func], **task) for func in RUNNER_FUNCS[:4]}
    with contextlib.redirect_stdout(io.StringIO()):
        for func in RUNNER_FUNCS[4:]:
            frozen = {} if theta is None else {"theta": theta[func], "burn_in": False}
            samplers[func] = load_module("self_sampler").LSBS(func=func, start_x=start[func], **LSBS_SETTINGS,
                                                              **task, **frozen)
    return samplers


def _sums(sampler) -> np.ndarray:
    """Every chain's Σ_i x_i."""
    return sampler.x.sum(dim=(1, 2)).double().numpy()
