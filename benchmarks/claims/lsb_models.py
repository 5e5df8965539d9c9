"""The LSB paper's claims on its other models: the RBM (§5.2, Fig. 4, Appendix F) and the Markov networks (§5.3,
Fig. 5, Table 3), and the abstract's headline on both, each judged on the axis its sentence names
(``samplers.diagnostics.verdicts``) over independent seeds.

**The RBM (Fig. 4, Appendix F).** Each seed runs, on the shipped RBM (64
visible, 16 hidden units on binarised 8×8 digits — a stand-in for the paper's
784 × 250 MNIST RBM, which is not shipped), 16 chains (the paper's batch) of
GWG, FLSB1, FLSB2, block Gibbs of 2 sites (Gibbs-2) and the Hamming ball of
block 10, radius 1 (HB-10-1), for K = ``models_iterations`` burn-in iterations
(FLSB learning; paper 24,000) and as many sampling iterations (paper
120,000). The statistic is log p̃ (the Hamming distance to a random state,
the DISCS statistic, is no convergence measure here: random starts and
exact samples are both about d/2 from a random state); its chain mean m(a)
converges to the exact expectation μ (the mean over 2,000 exact samples,
``sample_exact``). Per run:

* evaluations to converge: the first a (target evaluations per chain) with
  |m(a) − μ| ≤ max(1 %·|m(0) − μ|, 2·sd_π/√16) (``samplers.diagnostics.convergence.first_hit``);
  a run that never gets there counts at its last evaluation (``censored``);
* ESS: the bulk ESS of the statistic over the 16 chains after burn-in (equal
  iterations, as Fig. 4 plots it), and per 1,000 evaluations and per CPU
  second of the sampling phase;
* target evaluations and CPU seconds per sampling iteration (Appendix F's
  Table 4; §5.2's overhead).

Appendix F's other block samplers (Gibbs-4, Gibbs-10, HB-10-2, HB-10-3, of
Figs. 8–9 and Table 4) run only ``COUNT_STEPS`` iterations per seed, enough to
count their evaluations per step, which is all Appendix F's sentence claims of
them: runs as long as Fig. 4's would cost about 9 CPU minutes of ours (our
Gibbs-10 ≈ 1.5 minutes a seed) and 2 CPU hours of the authors' code (their
Gibbs-10 scores its 1,024 block values one torch call each, ≈ 0.19 s per
iteration, 19 minutes a seed) at the default settings, for Figs. 8–9's
curves, of which the paper claims nothing.

The paper's Fig. 4 plots MMD against iterations: the authors' ``rbm_sample.py``
logs it every 500 iterations and labels that axis "Likelihood Evaluations".

**The authors' code** (``../shared/reference/lsb/RBM``, MIT) cannot run as
published: ``rbm_sample.py`` downloads MNIST through torchvision (its
``--data random`` draws a Gaussian RBM instead) and imports
tensorflow_probability, torchvision, igraph and matplotlib, none installed. Its
sampler classes run unmodified (``AuthorsRbmRun``): ``samplers.DiffSampler``
(GWG), ``self_sampler.LSB`` ("lsb1", "lsb2", approx=True),
``block_samplers.BlockGibbsSampler`` ("bg-k") and ``HammingBallSampler``
("hb-b-r"), with the constructor arguments of ``rbm_sample.py``, on its
``rbm.BernoulliRBM`` holding our RBM's weights, stepped by that script's loop
(learning during the first K iterations, ``sampler.burn_in = False`` after);
torchvision and igraph, imported at the top of their modules but used only to
load MNIST and nowhere by these classes, are given empty stand-in modules.
Their evaluations are counted as their code pays them: every row their RBM's
forward scores (a gradient included) is one evaluation.

**The Markov networks (Fig. 5, Table 3).** The shipped 100-variable
near-deterministic networks stand in for the UAI 2006 networks (not
redistributable). Each seed runs 5 chains (the paper's) of the four fixed
balancing functions, LSB1 and LSB2 with the monotone network of Appendix D,
K = 500 burn-in iterations (LSB learning; fewer only when ``models_iterations``
is smaller, as in ``--quick``), then ``models_iterations`` sampling iterations
(paper 10,000); the statistic is log p̃, its equilibrium reference a long √t run
from over-dispersed starts (``reference_steps``): where that run's chains
disagree (split-R̂ ≥ 1.01) no convergence is measured and the verdict is
inconclusive. The authors published no code for these networks.

**The paper's own numbers.** Table 3 gives each sampler's ESS as mean ± sd
(over the 5 chains of Appendix D), so its ratios are judged by the criterion
ours are (``SummaryRatio``); Table 4 gives exact counts of evaluations per
sampling step (a count per step does not vary: sd 0). Every other sentence
here cites a figure, with no number.

Our runs are runs of the audit's sweep (``audit_runs``, with the authors' RBM
runs as ``AuthorsRbmRun`` tasks; ``benchmarks.claims.paper_claims`` runs it on Dask
and stores it), read back here.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import targets
from benchmarks.claims.claim import NO_AUTHORS_CODE, Claim, Evidence
from benchmarks.papers.lsb_markov import SAMPLERS as MARKOV_SAMPLERS
from benchmarks.papers.lsb_rbm import APPENDIX_F
from benchmarks.papers.lsb_rbm import SAMPLERS as RBM_SAMPLERS
from benchmarks.papers.lsb_runs import mixing_run
from benchmarks.papers.lsb_runs import reference as stored_reference
from benchmarks.papers.lsb_runs import reference_run
from samplers.diagnostics.convergence import Reference, exact_samples_reference, first_hit
from samplers.diagnostics.ess import ess
from samplers.diagnostics.verdicts import (SHORTFALL, Judgement, Much, NotWorse, Ratio, Similar,
                                           SummaryRatio, censored, censored_ratios, paired_ratios, ratio_evidence,
                                           weakest_judgement)
from sweeps import RunSpec, Task, run_seed
from targets.markov_network import shipped_networks

RBM_CHAINS, MARKOV_CHAINS = 16, 5  # Appendix D's batch sizes
#: Appendix D's burn-in for the UAI networks.
MARKOV_BURN_IN = 500
FIXED, LEARNED = ("t/(1+t)", "√t", "min(1,t)", "max(1,t)"), ("LSB1", "LSB2")
#: Our Markov-network samplers: the four fixed functions, LSB1, and LSB2 with Appendix D's monotone network.
MARKOV = {**{label: MARKOV_SAMPLERS[label] for label in FIXED}, "LSB1": ("lsb", {"parametrization": "lsb1"}),
          "LSB2": MARKOV_SAMPLERS["LSB monotone"]}
#: Exact samples giving the RBM statistic's expectation (as ``lsb_rbm``).
EXACT_SAMPLES = 2000
#: The authors' RBM code and its samplers, by our labels (their ``rbm_sample.py`` names in ``temps``).
AUTHORS_RBM_DIR = Path(__file__).resolve().parents[3] / "shared/reference/lsb/RBM"
AUTHORS_RBM = {"GWG": "gwg", "FLSB1": "lsb1", "FLSB2": "lsb2", "Gibbs-2": "bg-2", "HB-10-1": "hb-10-1"}
#: Appendix F's other block samplers in the authors' names (``rbm_sample.py`` parses "bg-k" and "hb-b-r").
AUTHORS_APPENDIX_F = {"Gibbs-4": "bg-4", "Gibbs-10": "bg-10", "HB-10-2": "hb-10-2", "HB-10-3": "hb-10-3"}
#: Iterations of the runs counting those samplers' evaluations per step: two passes of the authors' block samplers
#: over the 64 sites in blocks of 10 (7 blocks a pass, the last of 4), so that their count per step is a mean over
#: whole passes; ours score whole blocks of 10, so any length counts them.
COUNT_STEPS = 14
#: The block samplers Appendix F's sentence compares FLSB2 with ("these previous approaches").
BLOCK_SAMPLERS = ("Gibbs-2", "HB-10-1", *APPENDIX_F)
#: Table 4: target likelihood evaluations per sampling step, by our labels (exact counts).
TABLE_4 = {"Gibbs-2": 4, "Gibbs-4": 16, "Gibbs-10": 1024, "HB-10-1": 20, "HB-10-2": 180, "HB-10-3": 960, "FLSB2": 1}
#: Table 3: ESS, mean ± sd, per network and sampler (by our labels).
TABLE_3 = {"MN 1": {"t/(1+t)": (2.90, 0.76), "√t": (3.41, 0.77), "min(1,t)": (2.54, 0.32), "max(1,t)": (2.70, 0.63),
                    "LSB1": (3.19, 0.46), "LSB2": (3.22, 0.38)},
           "MN 2": {"t/(1+t)": (3.43, 0.75), "√t": (3.92, 0.94), "min(1,t)": (3.78, 0.50), "max(1,t)": (3.63, 0.67),
                    "LSB1": (3.52, 0.42), "LSB2": (3.44, 0.44)}}
#: Why the authors' script itself does not run here.
AUTHORS_SCRIPT = ("their rbm_sample.py cannot run as published (it downloads MNIST through torchvision and imports "
                  "tensorflow_probability, torchvision, igraph and matplotlib, none installed); their sampler classes "
                  "ran unmodified on their BernoulliRBM holding our RBM's weights, in their script's loop")
NO_MARKOV_CODE = f"{NO_AUTHORS_CODE} for the Markov networks (it has 2DIsing/ and RBM/ only)"
RBM_STAND_IN = ("the shipped RBM, 64 visible × 16 hidden units on binarised 8×8 digits, for the paper's 784 × 250 "
                "RBM on MNIST (not shipped); convergence and ESS of log p̃ (exact expectation), not MMD and the "
                "Hamming ESS")
MARKOV_STAND_IN = ("the shipped 100-variable near-deterministic networks (assets/markov, in the style of the UAI 2006 "
                   "networks, which are not redistributable) for the paper's MN 1 and MN 2")
AXES = {"iterations": "iterations", "evaluations": "target evaluations", "seconds": "CPU seconds"}


# -- runs ------------------------------------------------------------------------------------------------
def rbm_burn_in(args) -> int:
    return args.models_iterations


def markov_burn_in(args) -> int:
    return min(MARKOV_BURN_IN, args.models_iterations)


def rbm_runs(args) -> list[dict[str, RunSpec]]:
    """Each seed's run of every RBM sampler (``lsb_rbm.SAMPLERS``): K burn-in, then as many sampling iterations."""
    return _rbm_seeds(RBM_SAMPLERS, args.seeds, rbm_burn_in(args), args.models_iterations)


def count_runs(args) -> list[dict[str, RunSpec]]:
    """Each seed's run of Appendix F's other block samplers (``lsb_rbm.APPENDIX_F``): ``COUNT_STEPS`` iterations, all
    of them sampling (block samplers learn nothing)."""
    return _rbm_seeds(APPENDIX_F, args.seeds, 0, COUNT_STEPS)


def _rbm_seeds(samplers: dict, seeds: int, burn_in: int, steps: int) -> list[dict[str, RunSpec]]:
    return [{label: mixing_run(label, "rbm", {}, name, params, "log_prob", chains=RBM_CHAINS, replicate=seed,
                               burn_in=burn_in, steps=steps)
             for label, (name, params) in samplers.items()} for seed in range(seeds)]


def markov_runs(args) -> dict[str, tuple[RunSpec, list[dict[str, RunSpec]]]]:
    """Per shipped network: its long √t reference run, and each seed's run of every sampler of ``MARKOV``."""
    k = markov_burn_in(args)
    out = {}
    for network in shipped_networks():
        target = {"network": network}
        out[network] = (reference_run("markov_network", target, "log_prob", MARKOV_CHAINS, args.reference_steps),
                        [{label: mixing_run(label, "markov_network", target, name, params, "log_prob",
                                            chains=MARKOV_CHAINS, replicate=seed, burn_in=k,
                                            steps=args.models_iterations)
                          for label, (name, params) in MARKOV.items()} for seed in range(args.seeds)])
    return out


@functools.cache
def _authors_modules() -> dict[str, types.ModuleType]:
    """The authors' RBM modules (``rbm``, ``samplers``, ``self_sampler``, ``block_samplers``), loaded by file path
    under names of their own. Their ``import utils`` finds their ``utils.py``; torchvision and igraph (imported at
    the top of ``utils.py`` and ``rbm.py`` for MNIST loading only) get empty stand-in modules while they load."""
    stand_ins = {"torchvision": types.ModuleType("torchvision"), "igraph": types.ModuleType("igraph")}
    stand_ins["torchvision"].transforms = stand_ins["torchvision.transforms"] = types.ModuleType("transforms")
    saved = {name: sys.modules.get(name) for name in [*stand_ins, "utils"]}
    sys.modules.update({name: module for name, module in stand_ins.items() if name not in sys.modules})
    try:
        modules = {}
        for name in ("utils", "rbm", "samplers", "self_sampler", "block_samplers"):
            spec = importlib.util.spec_from_file_location(f"lsb_rbm_reference_{name}", AUTHORS_RBM_DIR / f"{name}.py")
            modules[name] = importlib.util.module_from_spec(spec)
            if name == "utils":
                sys.modules["utils"] = modules[name]
            spec.loader.exec_module(modules[name])
        return modules
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _authors_rbm(modules: dict):
    """Their ``rbm.BernoulliRBM`` holding the shipped RBM's weights (their W is our Wᵀ), its start distribution that
    of their MNIST run (Bernoulli(0.01)), counting every row its forward scores (``model.rows``)."""
    import torch

    class Counting(modules["rbm"].BernoulliRBM):
        rows = 0

        def forward(self, x):
            Counting.rows += x.shape[0] if x.dim() > 1 else 1
            return super().forward(x)

    target = targets.make("rbm")
    model = Counting(target.dim, target._W.shape[1], data_mean=0.01 * torch.ones(target.dim))
    with torch.no_grad():
        model.W.copy_(torch.tensor(target._W.T, dtype=torch.float32))
        model.b_v.copy_(torch.as_tensor(target._b, dtype=torch.float32))
        model.b_h.copy_(torch.as_tensor(target._c, dtype=torch.float32))
    return model


def _authors_sampler(modules: dict, name: str, dim: int, chains: int, model, seed: int):
    """The sampler ``name`` as ``rbm_sample.py`` builds it (its ``temps`` branch)."""
    if name == "gwg":
        return modules["samplers"].DiffSampler(dim, 1, fixed_proposal=False, approx=True, multi_hop=False, temp=2.)
    if name in ("lsb1", "lsb2"):
        extra = {"hidden": 10, "model": model} if name == "lsb2" else {}
        return modules["self_sampler"].LSB(dim, name, chains, 1, approx=True, lr=1e-2, burn_in=True, device="cpu",
                                           seed=seed, **extra)
    sizes = [int(v) for v in name.split("-")[1:]]  # rbm_sample.py's parsing of "bg-k" and "hb-b-r"
    if name.startswith("bg-"):
        return modules["block_samplers"].BlockGibbsSampler(dim, *sizes)
    return modules["block_samplers"].HammingBallSampler(dim, *sizes)


@dataclass(frozen=True, eq=False)
class AuthorsRbmRun(Task):
    """One run of the authors' RBM sampler ``sampler`` (a name of ``AUTHORS_RBM``) on the shipped RBM: 16 chains,
    ``burn_in`` learning iterations then ``steps`` sampling ones, log p̃ of every chain (our RBM's), the
    evaluations (rows their RBM scored) and the CPU seconds of the steps after every iteration."""

    sampler: str
    seed: int
    burn_in: int
    steps: int
    label: str = ""

    def description(self) -> dict:
        return {"kind": "lsb_authors_rbm", "sampler": self.sampler, "seed": self.seed, "burn_in": self.burn_in,
                "steps": self.steps, "chains": RBM_CHAINS}

    def perform(self, sweep_seed: int) -> dict:
        import contextlib
        import io
        import warnings

        import torch

        seed = run_seed(sweep_seed, self.run_id)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # their code's tensor-construction advice
                torch.manual_seed(seed)
                np.random.seed(seed % 2**32)  # their block samplers draw from numpy's global stream
                return self._run(seed)
        finally:
            torch.set_num_threads(threads)

    def _run(self, seed: int) -> dict:
        modules = _authors_modules()
        model = _authors_rbm(modules)
        target = targets.make("rbm")
        sampler = _authors_sampler(modules, self.sampler, model.data_dim, RBM_CHAINS, model, seed)
        x = model.init_dist.sample((RBM_CHAINS,))
        type(model).rows = 0
        values, rows, seconds, spent = [target.log_prob(x.numpy().astype(np.uint8))], [0], [0.0], 0.0
        for i in range(self.burn_in + self.steps):
            sampler.burn_in = i < self.burn_in  # rbm_sample.py: learning during the first K iterations
            started = time.process_time()
            x = sampler.step(x.detach(), model).detach()
            spent += time.process_time() - started
            values.append(target.log_prob(x.numpy().astype(np.uint8)))
            rows.append(type(model).rows)
            seconds.append(spent)
        return {"spec": json.dumps(self.to_dict()), "trace_statistic": np.array(values, dtype=float),
                "trace_evals": np.array(rows, dtype=float), "trace_seconds": np.array(seconds)}


def authors_rbm_runs(args) -> list[dict[str, AuthorsRbmRun]]:
    """Each of ``authors_seeds`` seeds' run of every authors' RBM sampler of Fig. 4 (none without their code)."""
    return _authors_seeds(AUTHORS_RBM, args.authors_seeds, rbm_burn_in(args), args.models_iterations)


def authors_count_runs(args) -> list[dict[str, AuthorsRbmRun]]:
    """Each of ``authors_seeds`` seeds' run of the authors' other block samplers of Appendix F, ``COUNT_STEPS``
    iterations (as ``count_runs``)."""
    return _authors_seeds(AUTHORS_APPENDIX_F, args.authors_seeds, 0, COUNT_STEPS)


def _authors_seeds(names: dict, seeds: int, burn_in: int, steps: int) -> list[dict[str, AuthorsRbmRun]]:
    if not (AUTHORS_RBM_DIR / "self_sampler.py").is_file():
        return []
    return [{label: AuthorsRbmRun(name, seed, burn_in, steps, label) for label, name in names.items()}
            for seed in range(seeds)]


def audit_runs(args) -> list[Task]:
    """Every run these claims read: ours on the RBM (Appendix F's counting runs included) and the Markov networks
    (with the networks' references), and the authors' RBM samplers."""
    seeds = [*rbm_runs(args), *count_runs(args), *authors_rbm_runs(args), *authors_count_runs(args)]
    for reference_spec, replicates in markov_runs(args).values():
        seeds += [{"reference": reference_spec}, *replicates]
    return [task for runs in seeds for task in runs.values()]


# -- measures --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trace:
    """A stored run: the statistic of every chain after every iteration (row 0: the start), and per chain the
    target evaluations and the CPU seconds of the steps so far; the first ``burn_in`` iterations are burn-in."""

    values: np.ndarray  # (iterations + 1, chains)
    evaluations: np.ndarray  # (iterations + 1,), per chain
    seconds: np.ndarray
    burn_in: int

    @classmethod
    def from_result(cls, result: dict, burn_in: int) -> Trace:
        values = np.asarray(result["trace_statistic"], dtype=float)
        return cls(values, np.asarray(result["trace_evals"], dtype=float) / values.shape[1],
                   np.asarray(result["trace_seconds"], dtype=float), burn_in)

    def axis(self, name: str) -> np.ndarray:
        return {"iterations": np.arange(len(self.values), dtype=float), "evaluations": self.evaluations,
                "seconds": self.seconds}[name]

    def first_hit(self, reference: Reference, axis: str = "evaluations") -> float:
        """The first ``axis`` value where the chain mean is within max(1 % of its start's distance, the equilibrium
        noise of a mean of the run's chains) of μ; NaN when the run never gets there."""
        along = self.axis(axis)
        return first_hit(along, self.values.mean(axis=1), reference.value, noise=reference.noise(self.values.shape[1]))

    def to_converge(self, reference: Reference, axis: str = "evaluations") -> float:
        """``first_hit``, a run that never gets there counted at its last value (``censored``)."""
        return float(censored([self.first_hit(reference, axis)], self.axis(axis)[-1])[0])

    def spent(self, axis: str, phase: str = "sampling") -> float:
        """How much of ``axis`` the sampling phase (after burn-in), or the burn-in (``phase="burn-in"``), spent."""
        along = self.axis(axis)
        return float(along[-1] - along[self.burn_in] if phase == "sampling" else along[self.burn_in] - along[0])

    def ess(self) -> float:
        """Bulk ESS of the statistic over all chains after burn-in."""
        return ess(self.values[self.burn_in + 1:].T)

    def ess_per(self, axis: str) -> float:
        """ESS per unit of ``axis`` (evaluations: per 1,000) spent in the sampling phase."""
        return self.ess() / self.spent(axis) * (1e3 if axis == "evaluations" else 1.0)

    def per_iteration(self, axis: str, phase: str = "sampling") -> float:
        """``axis`` (target evaluations: Appendix F's Table 4; CPU seconds) per iteration of ``phase``."""
        return self.spent(axis, phase) / self.spent("iterations", phase)


def stored_traces(store, replicates: list[dict[str, Task]], burn_in: int | dict[str, int]) -> list[dict[str, Trace]]:
    """The seeds whose every run is stored, read, each with its burn-in (one for all, or by label); a seed with a
    failed run is missing, and the evidence then has fewer seeds."""
    return [{label: Trace.from_result(store.read(task.run_id),
                                      burn_in[label] if isinstance(burn_in, dict) else burn_in)
             for label, task in runs.items()}
            for runs in replicates if all(store.has(task.run_id) for task in runs.values())]


def ratios(seeds: list[dict[str, Trace]], measure, numerator: str, denominator: str):
    """``ratio_evidence`` of measure(numerator's run) / measure(denominator's run), one ratio per seed; of times to
    converge (``ToConverge``), no ratio where neither run converged (``censored_ratios``)."""
    values = [[measure(s[label]) for s in seeds] for label in (numerator, denominator)]
    if isinstance(measure, ToConverge):
        reached = [[measure.reached(s[label]) for s in seeds] for label in (numerator, denominator)]
        return ratio_evidence(censored_ratios(*values, *reached))
    return ratio_evidence(paired_ratios(*values))


def compare(seeds, measure, numerator: str, denominator: str, quantity: str, criterion, where: str = "") -> Judgement:
    """``criterion`` on the per-seed ratios of ``measure`` (``ratios``), labelled with what it divides (e.g. "GWG /
    FLSB2 of target evaluations to converge")."""
    what = f"{numerator} / {denominator} of {quantity}" + (f" ({where})" if where else "")
    return Judgement(what, criterion, ratios(seeds, measure, numerator, denominator))


def said(judgement: Judgement) -> str:
    """A judgement in words: what it compares and its evidence (only what, when it has none)."""
    return f"{judgement.label}: {judgement.evidence}" if judgement.evidence.n else judgement.label


@dataclass(frozen=True)
class ToConverge:
    """The measure "``axis`` to converge to ``reference``" of a run (censored, ``Trace.to_converge``)."""

    reference: Reference
    axis: str = "evaluations"

    def __call__(self, trace: Trace) -> float:
        return trace.to_converge(self.reference, self.axis)

    def reached(self, trace: Trace) -> bool:
        """Whether the run converged (its time is measured, not censored)."""
        return math.isfinite(trace.first_hit(self.reference, self.axis))


def converge(reference: Reference, axis: str = "evaluations") -> ToConverge:
    """The measure "``axis`` to converge to ``reference``" of a run."""
    return ToConverge(reference, axis)


def ess_per(axis: str):
    """The measure "ESS per ``axis`` of the sampling phase" of a run."""
    return lambda trace: trace.ess_per(axis)


def cost_per_iteration(axis: str, phase: str = "sampling"):
    """The measure "``axis`` per iteration of ``phase``" of a run (``Trace.per_iteration``)."""
    return lambda trace: trace.per_iteration(axis, phase)


def converge_fair(seeds, reference: Reference, numerator: str, denominator: str) -> str:
    """numerator / denominator of iterations, target evaluations and CPU seconds to converge."""
    return "; ".join(f"{numerator} / {denominator} of {title} to converge: "
                     f"{ratios(seeds, converge(reference, axis), numerator, denominator)}"
                     for axis, title in AXES.items())


def ess_fair(seeds, better: str, worse: str) -> str:
    """better / worse of ESS per equal iterations, per 1,000 evaluations and per CPU second."""
    return "; ".join(f"{better} / {worse} of ESS {title}: {ratios(seeds, measure, better, worse)}"
                     for title, measure in (("(equal iterations)", Trace.ess),
                                            ("per evaluation", ess_per("evaluations")),
                                            ("per CPU second", ess_per("seconds"))))


def column(judgements: list[Judgement], missing: str, shown: int = 3) -> Evidence:
    """A column of evidence judged by ``judgements`` (its verdict the weakest of theirs): their ratios in words
    (beyond ``shown`` of them, the weakest only); "not measured" (``missing`` says why) when there is none."""
    if not judgements:
        return Evidence.not_measured(missing)
    if len(judgements) <= shown:
        return Evidence("; ".join(map(said, judgements)), tuple(judgements))
    return Evidence(f"{said(weakest_judgement(judgements))} (the weakest of {len(judgements)} ratios, all in the "
                    "details)", tuple(judgements))


def reason(judgements: list[Judgement]) -> str:
    """One sentence from the numbers: the judgement deciding the verdict (the weakest) and what its interval says."""
    if not judgements:
        return "Not measured: the runs failed or no equilibrium reference was reached (the details say which)."
    worst = weakest_judgement(judgements)
    if not worst.evidence.decisive:
        return f"{worst.label} is {worst.evidence}, so it reads {worst.verdict}."
    return f"{worst.label} is {worst.evidence}, so by the rule it reads {worst.verdict}."


def comparison_lines(title: str, judgements: list[Judgement]) -> list[str]:
    return [f"{title}:", "", *(f"- {said(judgement)} → {judgement.verdict}" for judgement in judgements), ""]


def summary_table(title: str, seeds: list[dict[str, Trace]], reference: Reference | None) -> list[str]:
    """Per sampler, mean ± sd over seeds of evaluations to converge (censored), ESS, ESS per 1,000 evaluations and
    per CPU second, and evaluations per sampling iteration."""
    measures = {"evals to converge": converge(reference) if reference is not None and reference.reached else None,
                "ESS": Trace.ess, "ESS / 1k evals": ess_per("evaluations"), "ESS / CPU s": ess_per("seconds"),
                "evals / sampling iteration": cost_per_iteration("evaluations")}
    lines = [f"{title} ({len(seeds)} seeds; mean ± sd over seeds)", "",
             "| sampler | " + " | ".join(measures) + " |", "|---|" + "---|" * len(measures)]
    for label in (seeds[0] if seeds else {}):
        cells = [_mean_sd([measure(s[label]) for s in seeds]) if measure else "—" for measure in measures.values()]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + [""]


def _mean_sd(values) -> str:
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.4g} ± {values.std(ddof=1) if values.size > 1 else 0.0:.2g}"


# -- the RBM: Fig. 4 and Appendix F ----------------------------------------------------------------------
@dataclass(frozen=True)
class RbmEvidence:
    """What the RBM claims read: our seeds, the authors' seeds and the exact reference; and for Appendix F's
    evaluation counts (``counted``, ``counted_authors``), per seed FLSB2, Gibbs-2 and HB-10-1 of those seeds with the
    other block samplers' ``COUNT_STEPS``-iteration runs."""

    ours: list[dict[str, Trace]]
    authors: list[dict[str, Trace]]
    reference: Reference
    counted: list[dict[str, Trace]] = field(default_factory=list)
    counted_authors: list[dict[str, Trace]] = field(default_factory=list)

    def columns(self, judge, counts: bool = False,
                missing_ours: str = "every seed has a failed run (the sweep's summary says why)"):
        """(ours, authors') columns of the judgements ``judge(seeds)`` makes, with their lists: on the runs of Fig. 4,
        or with ``counts`` on those of Appendix F's counts."""
        mine, their_seeds = (self.counted, self.counted_authors) if counts else (self.ours, self.authors)
        ours, theirs = judge(mine) if mine else [], judge(their_seeds) if their_seeds else []
        authors = (column(theirs, "the authors' runs failed (the sweep's summary says why)", shown=3)
                   if (AUTHORS_RBM_DIR / "self_sampler.py").is_file() else Evidence(NO_AUTHORS_CODE))
        if theirs:
            authors = Evidence(f"{authors.text} — their sampler classes, run unmodified in their script's loop on "
                               "our RBM (their rbm_sample.py itself cannot run here: see the details)", authors.judged)
        return column(ours, missing_ours), authors, ours, theirs


#: The preset that replays FLSB2 on the RBM.
FLSB2_PRESET = "FLSB · RBM digits · FLSB2 learns g (K = 3000)"
#: The runs of Fig. 4 that Appendix F's counts pair with its other block samplers' counting runs.
COUNTED_WITH = ("FLSB2", "Gibbs-2", "HB-10-1")


def rbm_evidence(args, store) -> RbmEvidence:
    target = targets.make("rbm")
    reference = exact_samples_reference(target.log_prob(target.sample_exact(EXACT_SAMPLES, seed=123)))
    k = rbm_burn_in(args)
    burn_ins = {**dict.fromkeys(COUNTED_WITH, k), **dict.fromkeys(APPENDIX_F, 0)}

    def counted(runs, more):
        return stored_traces(store, [{**{label: seed[label] for label in COUNTED_WITH}, **extra}
                                     for seed, extra in zip(runs, more)], burn_ins)
    ours, theirs = rbm_runs(args), authors_rbm_runs(args)
    return RbmEvidence(stored_traces(store, ours, k), stored_traces(store, theirs, k), reference,
                       counted(ours, count_runs(args)), counted(theirs, authors_count_runs(args)))


def rbm_details(args, evidence: RbmEvidence, judgements: list[list[Judgement]]) -> list[str]:
    lines = [f"RBM 64×16, {RBM_CHAINS} chains, K = {rbm_burn_in(args)} burn-in iterations (FLSB learning), "
             f"{args.models_iterations} sampling iterations; log p̃'s exact expectation "
             f"{evidence.reference.value:.4g} ({evidence.reference.method}).", "",
             *summary_table("Ours", evidence.ours, evidence.reference)]
    if evidence.authors:
        lines += summary_table(f"The authors' samplers ({AUTHORS_SCRIPT}; evaluations: rows their RBM scored)",
                               evidence.authors, evidence.reference)
    for title, found in zip(("Ours", "The authors' code"), judgements):
        if found:
            lines += comparison_lines(title, found)
    return lines


def counts_table(title: str, seeds: list[dict[str, Trace]]) -> list[str]:
    """Per sampler, mean ± sd over seeds of target evaluations per sampling iteration, beside Table 4's count."""
    lines = [f"{title} ({len(seeds)} seeds)", "", "| sampler | evals / sampling iteration | Table 4 |", "|---|---|---|"]
    for label in (seeds[0] if seeds else {}):
        lines.append(f"| {label} | {_mean_sd([s[label].per_iteration('evaluations') for s in seeds])} | "
                     f"{TABLE_4[label]} |")
    return lines + [""]


def rbm_claim(args, evidence: RbmEvidence, columns: tuple, **fields) -> Claim:
    """A claim on the RBM from ``evidence.columns(judge)``: both columns, the stand-in, the reason and the details
    filled in (the replay preset FLSB2's unless ``fields`` name another)."""
    ours, authors, found, theirs = columns
    return Claim(**{"paper": "LSB", "authors": authors, "ours": ours, "stand_in": RBM_STAND_IN,
                    "reason": reason(found), "replay": FLSB2_PRESET,
                    "details": rbm_details(args, evidence, [found, theirs]), **fields})


def figure_4_claim(args, evidence: RbmEvidence, judge, fair, **fields) -> Claim:
    """A claim of §5.2's Fig. 4 on the RBM (``rbm_claim`` of ``judge``'s columns), with its fairness note ``fair(ours)``
    when our runs exist."""
    return rbm_claim(args, evidence, evidence.columns(judge), where="§5.2, Fig. 4 (RBM)",
                     fair=fair(evidence.ours) if evidence.ours else "—", **fields)


def figure_4_flsb2(args, evidence: RbmEvidence) -> Claim:
    """Fig. 4: FLSB2 converges with much fewer target evaluations than GWG."""
    def judge(seeds):
        return [compare(seeds, converge(evidence.reference), "GWG", "FLSB2", "target evaluations to converge",
                        Much())]
    return figure_4_claim(
        args, evidence, judge,
        quote="FLSB 2 is able to adapt to the target distribution and to converge using a much smaller number of "
              "target likelihood evaluations.",
        claim="FLSB2 converges with much fewer target evaluations than GWG", axis="target evaluations to converge",
        plotted="MMD against iterations (rbm_sample.py logs it every 500 iterations and labels the axis "
                "\"Likelihood Evaluations\")",
        rule=Much().rule(), papers_number="much smaller (no number)",
        fair=lambda ours: converge_fair(ours, evidence.reference, "GWG", "FLSB2"))


def figure_4_flsb1(args, evidence: RbmEvidence) -> Claim:
    """Fig. 4: FLSB1 performs like GWG — to converge, in ESS and in ESS per second."""
    similar = Similar(2)

    def judge(seeds):
        return [compare(seeds, converge(evidence.reference), "GWG", "FLSB1", "target evaluations to converge",
                        similar),
                compare(seeds, Trace.ess, "FLSB1", "GWG", "ESS (equal iterations)", similar),
                compare(seeds, ess_per("seconds"), "FLSB1", "GWG", "ESS per CPU second", similar)]
    return figure_4_claim(
        args, evidence, judge,
        quote="In Figure 4, we see that FLSB 1 recovers the performance of GWG. … when comparing the samplers based "
              "on ESS/sec (Figure 4), we observe that, while FLSB 1 and GWG achieve comparable results, …",
        claim="FLSB1 performs like GWG (to converge, ESS, ESS per second)",
        axis="Fig. 4's three measures: target evaluations to converge, ESS, ESS per second",
        plotted="MMD against iterations; log ESS and ESS per second after burn-in",
        rule=f"each of the three ratios: {similar.rule()}; the weakest of the three",
        papers_number="comparable (no number)",
        fair=lambda ours: converge_fair(ours, evidence.reference, "GWG", "FLSB1"),
        replay="FLSB · RBM digits · FLSB1 learns the mixture (K = 3000)")


def figure_4_ess(args, evidence: RbmEvidence) -> Claim:
    """Fig. 4: FLSB2's ESS not worse than GWG's, Gibbs-2's and HB-10-1's."""
    criterion = NotWorse(ratio="FLSB2's ESS / each other's (GWG, Gibbs-2, HB-10-1)")

    def judge(seeds):
        return [compare(seeds, Trace.ess, "FLSB2", other, "ESS (equal iterations)", criterion)
                for other in ("GWG", "Gibbs-2", "HB-10-1")]
    return figure_4_claim(
        args, evidence, judge,
        quote="Furthermore, we observe that FLSB 2 performs well also in terms of ESS.",
        claim="FLSB2's ESS is not worse than GWG's, Gibbs-2's and HB-10-1's",
        axis="ESS of the summary statistic after burn-in, at equal iterations", plotted="log ESS after burn-in",
        rule=f"{criterion.rule()}; the weakest of the three",
        papers_number="performs well (no number)",
        fair=lambda ours: ess_fair(ours, "FLSB2", "GWG"))


def figure_4_ess_per_second(args, evidence: RbmEvidence) -> Claim:
    """Fig. 4: FLSB2's ESS per second is below GWG's and FLSB1's."""
    def judge(seeds):
        return [compare(seeds, ess_per("seconds"), other, "FLSB2", "ESS per CPU second", Ratio(1))
                for other in ("GWG", "FLSB1")]
    return figure_4_claim(
        args, evidence, judge,
        quote="when comparing the samplers based on ESS/sec (Figure 4), we observe that, while FLSB 1 and GWG achieve "
              "comparable results, the performance of FLSB 2 are inferior on average.",
        claim="FLSB2's ESS per second is below GWG's and FLSB1's", axis="ESS per second after burn-in",
        rule=f"GWG / FLSB2 and FLSB1 / FLSB2 of ESS per CPU second, each: {Ratio(1).rule()}; the weaker of the two",
        papers_number="inferior on average (no number)",
        fair=lambda ours: ess_fair(ours, "GWG", "FLSB2"))


def overhead(args, evidence: RbmEvidence) -> Claim:
    """§5.2: FLSB2's overhead (its 31-parameter balancing function) costs balancing-function evaluations, not target
    evaluations: per sampling iteration, FLSB2 / FLSB1 and FLSB2 / GWG of target evaluations ``Similar`` within
    ``SHORTFALL`` (the count unaffected), and of CPU seconds above 1 (``Ratio(1)``: the overhead is there)."""
    similar = Similar(SHORTFALL)

    def judge(seeds):
        return [*(compare(seeds, cost_per_iteration("evaluations"), "FLSB2", other,
                          "target evaluations per sampling iteration", similar) for other in ("FLSB1", "GWG")),
                *(compare(seeds, cost_per_iteration("seconds"), "FLSB2", other, "CPU seconds per sampling iteration",
                          Ratio(1)) for other in ("FLSB1", "GWG"))]
    ours, authors, found, theirs = evidence.columns(judge)
    learning = [f"{title}: FLSB2 / GWG of target evaluations per burn-in iteration (learning): "
                f"{ratios(seeds, cost_per_iteration('evaluations', 'burn-in'), 'FLSB2', 'GWG')}"
                for title, seeds in (("ours", evidence.ours), ("the authors' code", evidence.authors)) if seeds]
    return rbm_claim(
        args, evidence, (ours, authors, found, theirs), where="§5.2 (RBM)",
        quote="Clearly, there is a distinction between the number of evaluations of the likelihood and the number of "
              "evaluations for the balancing function. Our proposed strategy reduces the first ones and the "
              "introduced computational overhead affects only the second kind of evaluations.",
        claim="FLSB2's overhead costs CPU time, not target evaluations: per sampling iteration as many target "
              "evaluations as FLSB1 and GWG, more CPU seconds",
        axis="target evaluations and CPU seconds per sampling iteration",
        rule=(f"FLSB2 / FLSB1 and FLSB2 / GWG of target evaluations per sampling iteration, each: {similar.rule()}; of "
              f"CPU seconds per sampling iteration, each: {Ratio(1).rule()}; the weakest of the four (\"reduces the "
              "first ones\" is the Fig. 4 row's claim, judged there)"),
        papers_number="no number (FLSB2's balancing function has 31 parameters, FLSB1's 4; Fig. 4's ESS/sec)",
        stand_in=(f"{RBM_STAND_IN}; CPU seconds per iteration depend on the model: a balancing function's cost weighs "
                  "more beside an evaluation of a 64 × 16 RBM than of a 784 × 250 one"),
        fair="; ".join(learning) + " — not judged: the sentence explains the sampling iterations' cost"
        if learning else "—")


def appendix_f(args, evidence: RbmEvidence) -> Claim:
    """Appendix F: FLSB2 uses much fewer target evaluations per sampling step than each block sampler it is compared
    with there (``BLOCK_SAMPLERS``: Gibbs-2, -4, -10; HB-10-1, -2, -3), as Table 4 summarises: ``Much`` on each
    sampler / FLSB2 of evaluations per sampling iteration, the weakest deciding; Table 4's own counts judged alike."""
    criterion = Much()

    def judge(seeds):
        return [compare(seeds, cost_per_iteration("evaluations"), other, "FLSB2",
                        "target evaluations per sampling iteration", criterion) for other in BLOCK_SAMPLERS]
    ours, authors, found, theirs = evidence.columns(judge, counts=True)
    table = [Judgement(f"{other} / FLSB2 of target evaluations per sampling step (Table 4)", criterion,
                       SummaryRatio((TABLE_4[other], 0.0), (TABLE_4["FLSB2"], 0.0), RBM_CHAINS))
             for other in BLOCK_SAMPLERS]
    full = [other for other in BLOCK_SAMPLERS if other not in APPENDIX_F]
    fair = "; ".join(converge_fair(evidence.ours, evidence.reference, other, "FLSB2") + "; "
                     + ess_fair(evidence.ours, "FLSB2", other) for other in full) if evidence.ours else "—"
    balls = ", ".join(f"{label} {sum(math.comb(params['block_size'], i) for i in range(params['radius'] + 1))}"
                      for label, (name, params) in {**RBM_SAMPLERS, **APPENDIX_F}.items() if name == "hamming_ball")
    return rbm_claim(
        args, evidence, (ours, authors, found, theirs), where="Appendix F, Table 4 (RBM)",
        quote="In particular, we compare FLSB 2 against Gibbs 2, Gibbs 4 and Gibbs 10 and also compare FLSB 2 "
              "against HB-10-1, HB-10-2 and HB-10-3. … It is important to mention also that FLSB 2 uses a much "
              "smaller number of target likelihood evaluations compared to these previous approaches, as "
              "summarized in Table 4.",
        claim="FLSB2 uses much fewer target evaluations per step than Gibbs-2 and HB-10-1, and than Gibbs-4, "
              "Gibbs-10, HB-10-2 and HB-10-3",
        axis="target evaluations per sampling iteration (Table 4)",
        rule=f"each block sampler / FLSB2 ({', '.join(BLOCK_SAMPLERS)}), each: {criterion.rule()}; the weakest of all",
        papers_number="Table 4, per sampling step: " + ", ".join(f"{label} {count}"
                                                                 for label, count in TABLE_4.items()),
        papers=Evidence("Table 4's exact counts per step (sd 0: a count per step does not vary), over the paper's "
                        f"{RBM_CHAINS} chains: " + "; ".join(f"{other} / FLSB2 = {TABLE_4[other] / TABLE_4['FLSB2']:g}"
                                                             for other in BLOCK_SAMPLERS), tuple(table)),
        fair=f"{fair}; {', '.join(APPENDIX_F)}: {COUNT_STEPS}-iteration runs, counted only (Figs. 8–9's curves, of "
             "which the paper claims nothing, are not run)",
        equivalent=("evaluations per sampling iteration depend neither on the RBM nor on the run's length: block "
                    "Gibbs scores the 2^k values of its block, the Hamming ball its ball, a frozen FLSB2 its "
                    "proposal, on any model at any iteration"),
        details=[*rbm_details(args, evidence, [found, theirs]),
                 *counts_table("Ours, evaluations per sampling iteration", evidence.counted),
                 *(counts_table("The authors' code, rows their RBM scored per sampling iteration",
                                evidence.counted_authors) if evidence.counted_authors else []),
                 f"Table 4's Hamming-ball counts are not the sizes of the balls ({balls}: the states one step "
                 "scores, in ours and in the authors' block_samplers.py).", ""])


def abstract(args, rbm: RbmEvidence, markov: dict) -> Claim:
    """Abstract: LSB converges in fewer target evaluations ("queries to the oracle distribution") than the recent
    local samplers the paper compares it with — GWG on the RBM (FLSB2), the four locally balanced functions of
    [Zan20] on the Markov networks (LSB2) — each ``Ratio(1)``, the weakest deciding."""
    def judge(seeds):
        return [compare(seeds, converge(rbm.reference), "GWG", "FLSB2", "target evaluations to converge", Ratio(1),
                        "RBM")]
    _, authors, found, theirs = rbm.columns(judge)
    networks = markov_converge(markov, ("LSB2",))
    judged = found + networks
    return Claim(
        paper="LSB", where="Abstract (RBM, Markov networks)",
        quote="Experiments on energy-based models and Markov networks show that LSB converges using a smaller number "
              "of queries to the oracle distribution compared to recent local MCMC samplers.",
        claim="LSB converges in fewer target evaluations than recent local samplers (GWG on the RBM; the locally "
              "balanced functions on the Markov networks)",
        axis="target evaluations to converge (\"queries to the oracle distribution\")",
        rule=(f"GWG / FLSB2 on the RBM and each fixed function / LSB2 on each Markov network, of target evaluations "
              f"to converge, each: {Ratio(1).rule()}; the weakest of all. LSB is its second parametrization, the one "
              "the paper credits with fewer evaluations (FLSB1 \"recovers the performance of GWG\", §5.2); the "
              "Ising models (§5.1) are judged in the Fig. 2 rows"),
        papers_number="smaller (no number; Figs. 2, 4 and 5)",
        authors=Evidence(f"{authors.text}; {NO_MARKOV_CODE}", authors.judged, authors.missing),
        ours=column(judged, "every seed has a failed run (the sweep's summary says why)"),
        fair=converge_fair(rbm.ours, rbm.reference, "GWG", "FLSB2") + " (RBM)" if rbm.ours else "—",
        stand_in=f"{RBM_STAND_IN}; {MARKOV_STAND_IN}", reason=reason(judged), replay=FLSB2_PRESET,
        details=[*rbm_details(args, rbm, [found, theirs]), *markov_details(args, markov, networks)])


# -- the Markov networks: Fig. 5 and Table 3 ---------------------------------------------------------------
def markov_evidence(args, store) -> dict[str, tuple[Reference | None, list[dict[str, Trace]]]]:
    """Per network: its reference (None if the run failed) and our stored seeds."""
    out = {}
    for network, (reference_spec, replicates) in markov_runs(args).items():
        reference = stored_reference(store.read(reference_spec.run_id)) if store.has(reference_spec.run_id) else None
        out[network] = (reference, stored_traces(store, replicates, markov_burn_in(args)))
    return out


def markov_details(args, found: dict, judgements: list[Judgement]) -> list[str]:
    lines = [f"{MARKOV_CHAINS} chains, K = {markov_burn_in(args)} burn-in iterations (LSB learning), "
             f"{args.models_iterations} sampling iterations, statistic log p̃; LSB2 uses Appendix D's monotone "
             "network.", ""]
    for network, (reference, seeds) in found.items():
        said_reference = ("the reference run failed" if reference is None else
                          f"reference {reference.value:.4g} ({reference.method})"
                          + ("" if reference.reached else ": not reached, no convergence measured"))
        lines += summary_table(f"{network}: {said_reference}", seeds, reference)
    return lines + comparison_lines("Ours", judgements)


def markov_converge(found: dict, learned: tuple[str, ...]) -> list[Judgement]:
    """fixed / LSB of target evaluations to converge (``Ratio(1)``) for each of ``learned`` against each fixed
    function on each network; a network without a reached reference gives one judgement without evidence
    (inconclusive) that names it."""
    judgements = []
    for network, (reference, seeds) in found.items():
        if reference is None or not reference.reached:
            why = ("its reference run failed" if reference is None
                   else f"its long run's split-R̂ is {reference.rhat:.4g}")
            judgements.append(Judgement(f"{network}: no equilibrium reference ({why})", Ratio(1), ratio_evidence([])))
            continue
        judgements += [compare(seeds, converge(reference), fixed, label, "target evaluations to converge", Ratio(1),
                               network) for label in learned for fixed in FIXED if seeds]
    return judgements


def figure_5(args, found: dict) -> Claim:
    """Fig. 5: LSB reduces the target evaluations needed to converge, against every fixed function."""
    judgements = markov_converge(found, LEARNED)
    reached = [(reference, seeds) for reference, seeds in found.values()
               if reference is not None and reference.reached and seeds]
    return Claim(
        paper="LSB", where="§5.3, Fig. 5 (Markov networks)",
        quote="Also in this case, we observe that the proposed strategy is able to adapt to the target distribution "
              "and reduce the number of target likelihood evaluations required to converge (Figure 5).",
        claim="LSB converges in fewer target evaluations than the fixed functions",
        axis="target evaluations to converge", plotted="burn-in traceplots",
        rule=(f"fixed / LSB of target evaluations to converge for LSB1 and LSB2 against each of the four fixed "
              f"functions on each network: {Ratio(1).rule()}; the weakest of all"),
        papers_number="reduces (no number)", authors=Evidence(NO_MARKOV_CODE),
        ours=column(judgements, "every seed has a failed run"),
        fair=(converge_fair(reached[0][1], reached[0][0], "√t", "LSB2") + " (first network with a reached "
              "reference)") if reached else "—",
        stand_in=MARKOV_STAND_IN, reason=reason(judgements),
        replay="LSB · Markov network · monotone network learns g (K = 500)",
        details=markov_details(args, found, judgements))


def table_3(args, found: dict) -> Claim:
    """Table 3: LSB's ESS similar to the fixed functions' (``Similar(2)`` on each LSB / fixed ratio, the weakest
    deciding), ours over seeds and the table's own means ± sds over Appendix D's 5 chains (``SummaryRatio``)."""
    similar = Similar(2)
    judgements = [compare(seeds, Trace.ess, learned, fixed, "ESS (equal iterations)", similar, network)
                  for network, (_, seeds) in found.items() if seeds for learned in LEARNED for fixed in FIXED]
    table = [Judgement(f"{learned} / {fixed} of ESS ({network}, Table 3)", similar,
                       SummaryRatio(TABLE_3[network][learned], TABLE_3[network][fixed], MARKOV_CHAINS))
             for network in TABLE_3 for learned in LEARNED for fixed in FIXED]
    first = next((seeds for _, seeds in found.values() if seeds), [])
    return Claim(
        paper="LSB", where="§5.3, Table 3 (Markov networks)",
        quote="In this case, we observe similar performance in terms of ESS (cf. Table 3).",
        claim="LSB's ESS is similar to the fixed functions'", axis="ESS of log p̃ after burn-in, equal iterations",
        rule=(f"LSB / fixed of ESS for LSB1 and LSB2 against each of the four fixed functions on each network: "
              f"{similar.rule()}; the weakest of all"),
        papers_number="similar: " + "; ".join(
            f"{network} " + ", ".join(f"{label} {mean:.2f} ± {sd:.2f}" for label, (mean, sd) in row.items())
            for network, row in TABLE_3.items()),
        papers=column(table, "", shown=0),
        authors=Evidence(NO_MARKOV_CODE), ours=column(judgements, "every seed has a failed run"),
        fair=(ess_fair(first, "LSB2", "√t") + " (first network)") if first else "—",
        stand_in=MARKOV_STAND_IN, reason=reason(judgements),
        replay="LSB · Markov network · monotone network learns g (K = 500)",
        details=[*markov_details(args, found, judgements),
                 *comparison_lines(f"Table 3's own means ± sds, over Appendix D's {MARKOV_CHAINS} chains", table)])


def claims(args, store) -> list[Claim]:
    """The RBM's and the Markov networks' claims, and the abstract's on both, from the audit's stored runs."""
    rbm = rbm_evidence(args, store)
    markov = markov_evidence(args, store)
    return [abstract(args, rbm, markov), figure_4_flsb2(args, rbm), figure_4_flsb1(args, rbm),
            figure_4_ess(args, rbm), figure_4_ess_per_second(args, rbm), overhead(args, rbm), appendix_f(args, rbm),
            figure_5(args, markov), table_3(args, markov)]
