"""DISCS (google-research's JAX benchmark of discrete samplers) beside our samplers: CPU s per step and ESS per CPU s.

Both sides run in one benchmark run, one CPU thread each, on the same models
with identical numbers, and the same kernels with the same settings:

* DISCS, unmodified, from ``REFERENCE_DIR``, in an environment of its own that
  this benchmark creates on first use (``discs_python``: a venv at
  ``DISCS_ENV`` with ``DISCS_PACKAGES``, flax for its RBM; outside the
  project's tree, every module of which the layout test reads);
  ``discs_driver.py`` runs it in a subprocess (XLA's Eigen and OpenMP on one
  thread, every thread confined to one CPU once compiled) and jits each
  sampler's ``step`` as DISCS's ``experiment/sampling.py`` does.
* Ours: ``samplers.make`` in this process, numeric libraries on one thread.

Models (``--models``): DISCS's Ising (``models/ising.py``, its config's λ = 0.5,
μ = 0.5, σ = 1.5: an open lattice) at 30×30 (``ising30``) and at its config's
50×50 (``ising50``), with the field DISCS draws with ``PRNGKey(--seed)``; and
DISCS's binary RBM (``models/rbm.py``) at the sizes of its MNIST configs, 784
visible units and 200 (``rbm200``) or 25 (``rbm25``) hidden ones, with the
weights DISCS's ``make_init_params`` draws (flax Glorot-uniform W, zero biases;
its trained MNIST weights are not shipped: a weakly coupled model, on which
most moves are accepted). Ours are built from the parameters
DISCS exports (``targets.make("boltzmann", J, h)`` with J_ij = −w_ij, h = −b for
the Ising; ``targets.make("rbm", ...)`` with W, b_v, b_h), and FIRST the log p̃
of ``TEST_STATES`` random states is compared on both sides: unless they agree
to float32 rounding (``energies_agree``, relative 1e-5) no ratio is printed.

Kernels paired (DISCS's balancing function √t throughout, no adaptation on
either side, so no step size changes while timed):

* ``gwg``: DISCS ``gwg`` (``adaptive=False``, ``num_flips=1``), one flip drawn
  ∝ √t from the gradient's flip estimates, MH;
* ``dmala``: DISCS ``dmala`` (``adaptive=False``, α = 0.2, its config's step
  size), ours α = 0.2, ``burn_in=0``;
* ``dlmc``: DISCS ``dlmc`` (``adaptive=False``, solver ``interpolate``), ours
  with ``ratios="gradient"`` (as DISCS) and ``burn_in=0``; both with the same
  h, DISCS's rule at step 0, h = n / mean over chains of Σ_i √t_i at our initial
  states (n = 3, t from the gradient), raised to our DLMC's smallest h (1e-3)
  where it falls below, and handed to DISCS in its sampler state;
* ``pas``: DISCS ``path_auxiliary`` (``use_fast_path``, ``adaptive=False``,
  ``num_flips=PATH_LENGTH``): a path of ``PATH_LENGTH`` distinct flips drawn
  without replacement ∝ √t at the start state, ours ``path_length=PATH_LENGTH``,
  ``random_length=False``, ``burn_in=0``;
* ``metropolis`` (a uniformly chosen single flip) and ``locally_balanced`` (one
  flip ∝ √t of the exact ratios): DISCS's ``locallybalanced`` needs a
  ``logratio_in_neighborhood`` that neither model has, so it is tried and, when
  it fails, both are set against DISCS's ``randomwalk`` (``adaptive=False``:
  every bit flips with probability 1/d, MH), fed float32 states (its int32
  states truncate the Ising couplings). Not the same kernels: compare their
  ESS per CPU second. Our ``locally_balanced`` is left out on the RBMs unless
  ``--all-pairs 1`` (``LEFT_OUT``: exact flip ratios on a dense model).

Each run: ``--warm-up`` untimed steps (DISCS compiles in the first), ``--timed``
steps whose CPU seconds (``time.process_time``; DISCS's steps each blocked on)
give the seconds per step, then ``--steps`` steps that trace log p̃ of every
chain (not timed; DISCS's model forward, our sampler's log p̃). ESS: the bulk
ESS of each chain's log p̃ trace on its own (``ess_per_chain``, one estimator for
both sides), summed over chains, per CPU second of those steps. Both sides
start from uniform random states and take the same number of steps before the
trace: a single-flip sampler on the 50×50 lattice is still in its transient
then, and the same kernel gives the same (small) ESS per step on both sides.

Printed per model × chains × sampler: DISCS's and our ms per step and the ratio
(ours ahead by), both acceptance rates, both ESS per CPU second and their ratio,
and against the goals (every gradient sampler ≥ 5× DISCS per step and ≥ 3× in
ESS per CPU second; the single-flip samplers keep their lead, ≥ 1× on both)
whether each row meets them, then the goals summarised. The raw measurements
go to ``<results>/discs_vs_ours/measurements.json``. Without DISCS (no
reference, its environment cannot be installed, ``--no-discs 1``) our side is
printed on our own ``discs_ising`` model (field drawn with numpy) and an RBM of
DISCS's initialisation drawn with numpy, with the reason DISCS was skipped.

Run:  python -m benchmarks discs_vs_ours [--models ising30,ising50,rbm200 --chains 32,1024 --steps 1500,150]
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from threadpoolctl import threadpool_limits

import samplers
import targets
from benchmarks import arguments
from samplers.base import taylor_flip_log_ratios
from samplers.diagnostics.ess import ess_per_chain
from sweeps.runner import DEFAULT_RESULTS

REFERENCE_DIR: Path = Path(__file__).resolve().parents[3] / "shared/reference/discs"
DRIVER = Path(__file__).with_name("discs_driver.py")
#: DISCS's environment, in the user's cache: under the project's packages the layout test would read its modules.
DISCS_ENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "discrete-sampler-explorer/discs-venv"
#: What DISCS's environment holds: the versions that run it unmodified on Python 3.11, and flax for its RBM.
DISCS_PACKAGES = ("jax==0.4.30", "jaxlib==0.4.30", "ml-collections==1.1.0", "numpy==2.0.2", "flax==0.8.5")
#: One CPU thread for XLA and OpenMP in DISCS's process.
ONE_THREAD = {"XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
              "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
MODELS = {"ising30": {"kind": "ising", "size": 30}, "ising50": {"kind": "ising", "size": 50},
          "rbm200": {"kind": "rbm", "visible": 784, "hidden": 200},
          "rbm25": {"kind": "rbm", "visible": 784, "hidden": 25}}
PATH_LENGTH = 16
#: DLMC's n: its step-0 rule makes n flips expected at the initial states (DISCS's ``dlmc_config``).
DLMC_FLIPS = 3.0
#: Our sampler → (its parameters, DISCS's counterparts in order of preference: the first that runs is compared).
PAIRS = {"gwg": ({}, ("gwg",)),
         "dmala": ({"step_size": 0.2, "burn_in": 0}, ("dmala",)),
         "dlmc": ({"ratios": "gradient", "burn_in": 0}, ("dlmc",)),
         "pas": ({"path_length": PATH_LENGTH, "random_length": False, "burn_in": 0}, ("path_auxiliary",)),
         "metropolis": ({}, ("randomwalk",)),
         "locally_balanced": ({"balancing": "sqrt"}, ("locallybalanced", "randomwalk"))}
#: DISCS's settings over its samplers' configs.
DISCS_SETTINGS = {"gwg": {"adaptive": False, "num_flips": 1, "balancing_fn_type": "SQRT"},
                  "dmala": {"adaptive": False, "step_size": 0.2, "balancing_fn_type": "SQRT"},
                  "dlmc": {"adaptive": False, "n": DLMC_FLIPS, "solver": "interpolate", "balancing_fn_type": "SQRT"},
                  "path_auxiliary": {"adaptive": False, "num_flips": PATH_LENGTH, "use_fast_path": True,
                                     "approx_with_grad": True, "balancing_fn_type": "SQRT"},
                  "randomwalk": {"adaptive": False},
                  "locallybalanced": {"balancing_fn_type": "SQRT"}}
GRADIENT = ("gwg", "dmala", "dlmc", "pas")
#: (model kind, our sampler) left out unless ``--all-pairs 1``, and why.
LEFT_OUT = {("rbm", "locally_balanced"): "its exact flip ratios cost d = 784 evaluations per chain and step on the "
                                         "dense RBM, seconds per step at 1,024 chains"}
#: The goals, (per step, ESS per CPU second): ours ahead of DISCS by at least these factors.
GOALS = {"gradient": (5.0, 3.0), "single-flip": (1.0, 1.0)}
TEST_STATES = 64
ENERGY_RTOL = 1e-5


def energies_agree(ours: np.ndarray, theirs: np.ndarray, rtol: float = ENERGY_RTOL) -> tuple[bool, float]:
    """Whether two sides' log p̃ of the same states agree to float32 rounding, and the largest difference relative to
    the largest |log p̃| of the set (a sum of d float32 terms is exact to that scale, not to a value near 0)."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    if ours.shape != theirs.shape or not (np.all(np.isfinite(ours)) and np.all(np.isfinite(theirs))):
        return False, float("inf")
    worst = float(np.max(np.abs(ours - theirs)) / max(float(np.max(np.abs(ours))), 1e-300))
    return worst <= rtol, worst


def run_plan(chains: str, warm_up: str, timed: str, steps: str) -> dict[int, tuple[int, int, int]]:
    """Chain count → (warm-up, timed, traced steps), from comma-separated options: each step option holds one value
    for every chain count or one per chain count."""
    counts = [int(n) for n in chains.split(",")]
    columns = []
    for option, text in (("warm-up", warm_up), ("timed", timed), ("steps", steps)):
        values = [int(value) for value in text.split(",")]
        if len(values) not in (1, len(counts)):
            raise SystemExit(f"--{option} needs one value or one per chain count ({len(counts)}); got {text!r}")
        columns.append(values * len(counts) if len(values) == 1 else values)
    plan = {n: (warm_up, timed, traced) for n, warm_up, timed, traced in zip(counts, *columns)}
    if min(plan) < 1 or any(warm_up < 2 or timed < 1 or traced < 4 for warm_up, timed, traced in plan.values()):
        raise SystemExit("every chain count ≥ 1, --warm-up ≥ 2 (DISCS compiles in its first two steps), --timed ≥ 1 "
                         "and --steps ≥ 4 (the ESS needs 4 draws a chain)")
    return plan


def discs_python() -> tuple[Path | None, str]:
    """The python of DISCS's environment ``DISCS_ENV`` (created on first use), or None and why not."""
    if not (REFERENCE_DIR / "discs" / "samplers").is_dir():
        return None, f"DISCS not found at {REFERENCE_DIR}"
    venv = DISCS_ENV
    python, stamp = venv / "bin" / "python", venv / "installed.txt"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == "\n".join(DISCS_PACKAGES) and python.is_file():
        return python, ""
    print(f"Creating DISCS's environment (once): python -m venv {venv}, then pip install {' '.join(DISCS_PACKAGES)} "
          f"(about 650 MB)", flush=True)
    for command in ([sys.executable, "-m", "venv", "--clear", str(venv)],
                    [str(python), "-m", "pip", "install", "--quiet", *DISCS_PACKAGES]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
            return None, f"{' '.join(command[:4])} … failed: {lines[-1] if lines else done.returncode}"
    stamp.write_text("\n".join(DISCS_PACKAGES), encoding="utf-8")
    print(f"DISCS's environment is ready at {venv}", flush=True)
    return python, ""


def run_discs(python: Path, model: str, seed: int, test_states: np.ndarray, runs: list[dict]) -> dict:
    """``discs_driver.py`` on ``model`` with ``runs`` in DISCS's environment, its output read back (the model's
    parameters, the test states' log p̃, each run's seconds per step, trace and acceptance, or its error)."""
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        np.savez(folder / "states.npz", states=test_states)
        spec = {"reference": str(REFERENCE_DIR), "model": MODELS[model], "seed": seed,
                "states": str(folder / "states.npz"), "out": str(folder / "out.npz"), "runs": runs}
        (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        with subprocess.Popen([str(python), str(DRIVER), str(folder / "spec.json")], env={**os.environ, **ONE_THREAD},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
            lines = []
            for line in process.stdout:
                lines.append(line.rstrip())
                if line.startswith("DISCS "):
                    print(f"  {model}: {line.rstrip()}", file=sys.stderr, flush=True)
        if process.returncode:
            raise RuntimeError(f"DISCS's driver failed on {model}: " + " | ".join(lines[-3:]))
        with np.load(folder / "out.npz") as out:
            return {key: out[key] for key in out.files}


def ising_target(params: np.ndarray):
    """Our pairwise model of DISCS's Ising parameters ``(3, L, L)``: log p̃ = −Σ w_ij s_i s_j − Σ b_i s_i over the open
    lattice's horizontal (w = params[0][:, :-1]) and vertical (w = params[1][:-1, :]) pairs, b = params[2]."""
    params = np.asarray(params, dtype=np.float64)
    side = params.shape[1]
    sites = np.arange(side * side).reshape(side, side)
    rows = np.concatenate([sites[:, :-1].ravel(), sites[:-1, :].ravel()])
    cols = np.concatenate([sites[:, 1:].ravel(), sites[1:, :].ravel()])
    couplings = -np.concatenate([params[0][:, :-1].ravel(), params[1][:-1, :].ravel()])
    upper = sparse.coo_matrix((couplings, (rows, cols)), shape=(side * side,) * 2)
    return targets.make("boltzmann", J=(upper + upper.T).tocsr(), h=-params[2].ravel())


def our_target(model: str, exported: dict | None, seed: int):
    """Our target of ``model``: from DISCS's exported parameters, or (DISCS skipped) our own draw of the model."""
    spec = MODELS[model]
    if spec["kind"] == "ising":
        if exported is None:
            return targets.make("discs_ising", size=spec["size"], lam=0.5, mu=0.5, sigma=1.5, seed=seed)
        return ising_target(exported["param_params"])
    if exported is None:  # DISCS's initialisation (Glorot-uniform W, zero biases), drawn with numpy
        bound = np.sqrt(6.0 / (spec["visible"] + spec["hidden"]))
        weights = np.random.default_rng(seed).uniform(-bound, bound, size=(spec["visible"], spec["hidden"]))
        return targets.make("rbm", weights=weights.astype(np.float32).astype(np.float64))
    return targets.make("rbm", weights=exported["param_w"].astype(np.float64),
                        visible_bias=exported["param_b_v"].astype(np.float64),
                        hidden_bias=exported["param_b_h"].astype(np.float64))


def dlmc_step(target, chains: int, seed: int) -> float:
    """DLMC's h by DISCS's step-0 rule, n / mean over chains of Σ_i √t_i (t from the gradient) at the initial states
    of our chains, raised to our DLMC's smallest h where it falls below."""
    states = target.random_states(chains, np.random.default_rng(seed))
    _, grad = target.value_and_grad(states)
    rates = np.exp(taylor_flip_log_ratios(states, grad) / 2).sum(axis=1).mean()
    return max(DLMC_FLIPS / rates, samplers.sampler_class("dlmc").param["step_size"].bounds[0])


def run_ours(name: str, target, chains: int, seed: int, warm_up: int, timed: int, traced: int,
             params: dict) -> dict:
    """Our sampler ``name``: seconds per step over ``timed`` steps after ``warm_up``, then the log p̃ trace of
    ``traced`` steps (``(traced, chains)``) and its acceptance rate."""
    sampler = samplers.make(name, target, n_chains=chains, seed=seed, **params)
    gc.collect()
    with threadpool_limits(limits=1):
        for _ in range(warm_up):
            sampler.step(False)
        start = time.process_time()
        for _ in range(timed):
            sampler.step(False)
        seconds = (time.process_time() - start) / timed
        trace, accepted = np.empty((traced, chains)), 0
        for k in range(traced):
            sampler.step(False)
            trace[k] = sampler.log_p
            accepted += int(sampler.last_accepted.sum())
    return {"seconds_per_step": seconds, "trace": trace, "acceptance": accepted / (traced * chains)}


def ess_per_cpu_second(trace: np.ndarray, seconds_per_step: float) -> float:
    """Σ over chains of each chain's bulk ESS of its ``(steps, chains)`` trace, per CPU second of those steps."""
    return float(np.nansum(ess_per_chain(trace.T)) / (trace.shape[0] * seconds_per_step))


def discs_runs(plan: dict, h: dict) -> list[dict]:
    """The driver's runs: each DISCS counterpart once per chain count of ``plan`` (DLMC given h in its state, with
    its step counter past 0 so that it keeps it)."""
    names = dict.fromkeys(theirs for _, candidates in PAIRS.values() for theirs in candidates)
    return [{"sampler": theirs, "chains": n, "settings": DISCS_SETTINGS[theirs], "warm_up": warm_up, "timed": timed,
             "traced": traced, "state": {"log_tau": float(np.log(h[n])), "steps": 1} if theirs == "dlmc" else {}}
            for n, (warm_up, timed, traced) in plan.items() for theirs in names]


def measure_model(model: str, plan: dict, python: Path | None, names: list[str], seed: int) -> dict:
    """The pairs of our ``names`` on ``model`` at every chain count of ``plan`` (chain count → warm-up, timed and
    traced steps): the energy check, DISCS's runs (with ``python``, DISCS's environment), ours."""
    spec = MODELS[model]
    dim = spec["size"] ** 2 if spec["kind"] == "ising" else spec["visible"]
    test_states = np.random.default_rng(seed).integers(0, 2, size=(TEST_STATES, dim), dtype=np.uint8)
    out = {"model": model, "rows": [], "discs_errors": {}}
    exported = run_discs(python, model, seed, test_states, []) if python else None
    target = our_target(model, exported, seed)
    if exported is not None:
        agree, worst = energies_agree(target.log_prob(test_states), exported["test_log_prob"])
        out["energy_check"] = {"states": TEST_STATES, "worst_relative_difference": worst, "agree": agree}
    h = {n: dlmc_step(target, n, seed) for n in plan}
    discs = {}
    if exported is not None and out["energy_check"]["agree"]:
        runs = discs_runs(plan, h)
        results = run_discs(python, model, seed, test_states, runs)
        for k, run in enumerate(runs):
            if f"{k}_error" in results:
                out["discs_errors"][run["sampler"]] = str(results[f"{k}_error"])
                continue
            discs[run["sampler"], run["chains"]] = {
                "seconds_per_step": float(results[f"{k}_seconds_per_step"]), "trace": results[f"{k}_trace"],
                "acceptance": float(results[f"{k}_acceptance"])}
    for n, (warm_up, timed, traced) in plan.items():
        for name in names:
            params, candidates = PAIRS[name]
            params = {**params, "step_size": h[n]} if name == "dlmc" else params
            print(f"  {model}: ours {name}, {n} chains: {warm_up} + {timed} + {traced} steps", file=sys.stderr,
                  flush=True)
            ours = run_ours(name, target, n, seed, warm_up, timed, traced, params)
            theirs_name = next((theirs for theirs in candidates if (theirs, n) in discs), None)
            out["rows"].append(row(name, params, n, ours, theirs_name, discs.get((theirs_name, n))))
    return out


def row(name: str, params: dict, chains: int, ours: dict, theirs_name: str | None, theirs: dict | None) -> dict:
    """One printed row's measurements; with DISCS's, the two ratios (ours ahead by) and whether they meet the goals."""
    kind = "gradient" if name in GRADIENT else "single-flip"
    measured = {"sampler": name, "kind": kind, "chains": chains, "params": params, "discs_sampler": theirs_name,
                "discs_settings": DISCS_SETTINGS.get(theirs_name),
                "ours": {"seconds_per_step": ours["seconds_per_step"], "acceptance": ours["acceptance"],
                         "ess_per_cpu_second": ess_per_cpu_second(ours["trace"], ours["seconds_per_step"])}}
    if theirs is not None:
        measured["discs"] = {"seconds_per_step": theirs["seconds_per_step"], "acceptance": theirs["acceptance"],
                             "ess_per_cpu_second": ess_per_cpu_second(theirs["trace"], theirs["seconds_per_step"])}
        measured["step_ratio"] = theirs["seconds_per_step"] / ours["seconds_per_step"]
        measured["ess_ratio"] = (measured["ours"]["ess_per_cpu_second"]
                                 / max(measured["discs"]["ess_per_cpu_second"], 1e-300))
        step_goal, ess_goal = GOALS[kind]
        measured["goal_met"] = bool(measured["step_ratio"] >= step_goal and measured["ess_ratio"] >= ess_goal)
    return measured


def print_model(result: dict, title: str) -> None:
    print(f"\n### {title}")
    if "energy_check" in result:
        check = result["energy_check"]
        verdict = "agree" if check["agree"] else "DISAGREE: no ratios printed"
        print(f"energy check: log p̃ of {check['states']} random states, DISCS against ours: largest difference "
              f"{check['worst_relative_difference']:.1e} of the largest |log p̃| (≤ {ENERGY_RTOL:g} needed): {verdict}")
    for theirs, error in result["discs_errors"].items():
        print(f"DISCS {theirs} did not run ({error}); its pair is compared with the next counterpart")
    for name, reason in result["left_out"].items():
        print(f"left out: our {name} ({reason}; --all-pairs 1 runs it)")
    print("| sampler | chains | DISCS | DISCS ms/step | ours ms/step | per step | acceptance DISCS / ours "
          "| DISCS ESS/CPU s | ours ESS/CPU s | ESS/CPU s | goal | met |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in result["rows"]:
        discs = r.get("discs")
        step_goal, ess_goal = GOALS[r["kind"]]
        label = r["sampler"] + (f" (h = {r['params']['step_size']:.2e})" if r["sampler"] == "dlmc" else "")
        print(f"| {label} | {r['chains']} | {r['discs_sampler'] or '–'} | "
              f"{_ms(discs['seconds_per_step']) if discs else '–'} | {_ms(r['ours']['seconds_per_step'])} | "
              f"{_times(r.get('step_ratio'))} | {_rate(discs['acceptance']) if discs else '–'} / "
              f"{_rate(r['ours']['acceptance'])} | {_ess(discs['ess_per_cpu_second']) if discs else '–'} | "
              f"{_ess(r['ours']['ess_per_cpu_second'])} | {_times(r.get('ess_ratio'))} | "
              f"≥ {step_goal:g}× step, ≥ {ess_goal:g}× ESS/s | "
              f"{'–' if 'goal_met' not in r else 'met' if r['goal_met'] else 'NOT MET'} |")


def print_goals(results: list[dict]) -> None:
    rows = [(result["model"], r) for result in results for r in result["rows"] if "goal_met" in r]
    print("\nGoals: every gradient sampler (GWG, DMALA, DLMC, PAS) ≥ 5× DISCS per step and ≥ 3× in ESS per CPU "
          "second, at every chain count, on the Ising and the RBM; the single-flip samplers keep their lead (≥ 1×).")
    if not rows:
        print("  not judged: no DISCS measurement")
        return
    for kind in GOALS:
        judged = [(model, r) for model, r in rows if r["kind"] == kind]
        missed = [f"{r['sampler']} on {model} at {r['chains']} chains ({_times(r['step_ratio'])} per step, "
                  f"{_times(r['ess_ratio'])} ESS/s)" for model, r in judged if not r["goal_met"]]
        print(f"  {kind}: met in {len(judged) - len(missed)} of {len(judged)} rows"
              + (f"; not met: {'; '.join(missed)}" if missed else ""))


def main(argv: list[str] | None = None) -> None:
    args = arguments("discs_vs_ours", argv, models="ising30,ising50,rbm200", chains="32,1024",
                     samplers=",".join(PAIRS), steps="1500,150", warm_up="500,50", timed="200,10", seed=0,
                     no_discs=0, all_pairs=0, results="", helps={
                         "models": f"comma-separated models, of {', '.join(MODELS)}",
                         "chains": "comma-separated chain counts",
                         "samplers": "comma-separated samplers of ours, each against its DISCS counterpart",
                         "steps": "traced steps (the ESS's) per run: one number, or one per chain count",
                         "warm_up": "untimed steps first, at least 2 (DISCS compiles in the first two): one, or "
                                    "one per chain count",
                         "timed": "steps whose CPU time gives the seconds per step: one, or one per chain count",
                         "seed": "seed of DISCS's model parameters (PRNGKey), of the chains and of the test states",
                         "no_discs": "1: skip DISCS, print our side only",
                         "all_pairs": "1: also run the pairs left out by default (our locally_balanced on the RBMs: "
                                      "exact flip ratios, seconds per step at 1,024 chains)",
                         "results": "directory of the measurements (default: benchmarks/results)"})
    plan = run_plan(args.chains, args.warm_up, args.timed, args.steps)
    names, models = args.samplers.split(","), args.models.split(",")
    unknown = sorted(set(names) - set(PAIRS)) + sorted(set(models) - set(MODELS))
    if unknown:
        raise SystemExit(f"unknown samplers or models {unknown}; samplers: {list(PAIRS)}, models: {list(MODELS)}")
    cache = Path(args.results or DEFAULT_RESULTS) / "discs_vs_ours"
    python, skipped = (None, "--no-discs 1") if args.no_discs else discs_python()
    results, failures = [], []
    for model in models:
        left_out = {name: LEFT_OUT[MODELS[model]["kind"], name] for name in names
                    if (MODELS[model]["kind"], name) in LEFT_OUT and not args.all_pairs}
        kept = [name for name in names if name not in left_out]
        try:
            results.append(measure_model(model, plan, python, kept, args.seed))
        except RuntimeError as error:  # DISCS's side failed: our side alone
            failures.append(str(error))
            results.append(measure_model(model, plan, None, kept, args.seed))
        results[-1]["left_out"] = left_out
    print(f"DISCS ({REFERENCE_DIR}) beside ours, one CPU thread each, CPU time; {args.chains} chains, steps "
          f"{args.warm_up} warm-up + {args.timed} timed + {args.steps} traced per run; ratios: ours ahead by")
    if python is None:
        print(f"DISCS skipped: {skipped}. Our side only, on our own draw of each model.")
    for failure in failures:
        print(f"DISCS skipped on one model: {failure}")
    for result in results:
        print_model(result, _title(result["model"], python is not None))
    print_goals(results)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "measurements.json").write_text(json.dumps(
        {"argv": argv or [], "discs": {"python": str(python) if python else None, "skipped": skipped,
                                       "packages": list(DISCS_PACKAGES)}, "models": results}, indent=1),
        encoding="utf-8")
    print(f"\nmeasurements written: {cache / 'measurements.json'}")


def _title(model: str, from_discs: bool) -> str:
    spec = MODELS[model]
    source = "DISCS's parameters" if from_discs else "our own draw"
    if spec["kind"] == "ising":
        return f"DISCS's Ising {spec['size']}×{spec['size']} (open, λ = 0.5, μ = 0.5, σ = 1.5; {source})"
    return f"DISCS's binary RBM {spec['visible']}×{spec['hidden']} (its initialisation; {source})"


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3g}"


def _rate(value: float) -> str:
    return f"{value:.2f}"


def _ess(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _times(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.1f}×" if ratio >= 1 else f"{ratio:.2g}×"


if __name__ == "__main__":
    main()
