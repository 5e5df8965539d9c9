"""The intracluster-moves paper's headlines (Hamze & de Freitas, UAI 2010, §4, Figs. 2–4, and §5), audited.

Each of the paper's three experiments (``benchmarks.papers.intracluster_paper``: the
60×60 critical ferromagnet with k = 90, γ = β; the 9×9×9 ±J spin glass with
k ~ U[1, 25], γ = 0.8β; the Gabor RBM with k ~ U[1, 20], γ = 0.8) is run in
``--seeds`` independent trials. A trial (``intracluster_paper.Trial``) starts
one chain of each setting — IM at the paper's settings, IM with the same walks
at γ = 1/2 (not the paper's: Zanella's locally balanced choice) and Kawasaki
exchange (the paper's constant-set Metropolis) — from the same uniform state of
S_n; the paper's IM makes ``--im-moves`` moves and the others run for the CPU
time those took (the paper's "computational parity"). Every energy trace is
read on one compute-time grid and the second half of it is kept
(``BURN_IN``), as the paper compares samplers "as a function of computational
time". Five kinds of claim, each judged by a written criterion
(``samplers.diagnostics.verdicts``, whose ``rule()`` is printed beside the
claim; seeds are the trials, so ≥ 5 are needed), every verdict derived from
judgements that carry their numbers (``benchmarks.claims.claim.Evidence``):

* **IM mixes markedly faster** (§4, Figs. 2–4, one row each): per seed
  ρ = τ_int(Kawasaki) / τ_int(IM) of the energy, both in CPU seconds (τ_int =
  window / ESS, censored at the window when a chain moved but never mixed);
  ``Much``, the strong word read as a claimed 1.5×. The same ratio per move (τ
  in moves = τ in seconds × moves per second) and per target evaluation is
  shown beside, and the γ = 1/2 row as a note on fair settings.
* **Metropolis has not reached IM's ensemble** (§4, Figs. 3 and 4): per seed,
  z = (Ē_Kawasaki − Ē_IM) / √(se_K² + se_IM²) over the kept half, se = sd /
  √ESS; ``Always``: z > 1.96 in every seed. The direction is the claim's:
  chains start at a uniform state of S_n, far above typical energies, so the
  sampler that has not converged is the one left higher up.
* **IM's ACF on the RBM reaches 0** (§4, Fig. 4): per seed, IM's energy ACF
  against compute-time lag falls below the white-noise band 2/√n (n: the kept
  points) at a lag within the first tenth of the kept window (``QUICKLY``); a
  chain that never moved has no ACF and fails. ``Always``.
* **IM outperforms Kawasaki by a significant margin** (§5): on each figure,
  both axes the sentence names — convergence to the stationary regime, per seed
  ρ = T(Kawasaki) / T(IM) with T the first CPU time at which a chain's energy is
  at or below the lower of the two chains' mean energies over the kept half
  (censored at the run's end when never), and independent samples, per seed
  ρ = ESS(IM) / ESS(Kawasaki) over the kept half at equal CPU time (which is
  τ_int(Kawasaki) / τ_int(IM) in CPU seconds) — each judged by ``Significant``
  (the direction, lo > 1), the weakest deciding.
* **The paper's settings give good acceptance rates** (§4 on the spin glass,
  §5 on all three models): per seed, IM at the paper's settings accepted at
  least ``GOOD_ACCEPTANCE`` of its moves; ``Always``. The paper states no rate;
  the floor and why it is generous are in the criterion (``GOOD_RATES``).

A seed in which a chain accepted no move gives no ratio on any axis
(``SeedRatios``): a chain that never moves has no mixing or convergence time,
only a censored bound — which per move even favours the frozen chain, whose
few moves fill the window — so the seed reads "censored: no move accepted",
never a number, and is never judged as a ratio. Every claim that IM is faster
requires instead that IM moved in every seed (``MOVES``), which a frozen IM
fails.

No code of the authors' exists (``NO_AUTHORS_CODE``). The Gabor filters are
ours (the paper does not give them), so Fig. 4 is always a stand-in; below
``--im-scale 1`` the lattices are too. The replay presets the rows link to
(``assets/presets.json``: 30×30, 6×6×6, 14×14 + 125, one chain run for as long
as it is let) are smaller than the audit at the paper's sizes: each row's reason
says what its preset runs beside what was audited (``replay_note``).

**Why the paper's settings accept almost nothing** (``investigations``): the
paper reports no acceptance rate. Eq. 6 with walk weights p̃^γ leaves a factor
(p̃(x')/p̃(x))^(1−2γ) in α besides the walks' normalisers (see
``samplers.intracluster.walks``): at γ = 1/2 it vanishes; at γ = β the walk's own
preference for low energy is charged back on acceptance, step after step. The
section measures the acceptance over walk lengths and γ, checks it against the
exact kernel on a small lattice (``transition_row`` enumerates every walk,
independently of the sampler's code), and lists where the paper's description
leaves room.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import samplers
import targets
from benchmarks.claims.claim import NO_AUTHORS_CODE, Claim, Evidence
from benchmarks.papers.intracluster_paper import (KAWASAKI, REFERENCE, Experiment, Summary, Trial, experiments, figures,
                                                  mixing_table, stored_trials, summarise, time_grid)
from engine.presets import load_presets
from samplers.diagnostics.convergence import interval
from samplers.diagnostics.verdicts import (Always, Judgement, Much, RatioEvidence, Significant, censored,
                                           censored_ratios, paired_ratios, ratio_evidence)

PAPER = "Intracluster"
#: Fraction of each compute window left out as burn-in.
BURN_IN = 0.5
#: "Quickly" (Fig. 4's ACF): the ACF must reach the band within this fraction of the kept window.
QUICKLY = 0.1
#: Standard normal quantile of a two-sided 95 % test (the ensemble criterion).
Z_95 = 1.96
#: The least acceptance rate read as "good" (§4's "function satisfactorily", §5's "good acceptance rates").
GOOD_ACCEPTANCE = 0.10
#: The acceptance rate Roberts, Gelman & Gilks (Ann. Appl. Probab. 7, 1997) find optimal for random-walk Metropolis.
OPTIMAL_ACCEPTANCE = 0.234
AUTHORS = Evidence(NO_AUTHORS_CODE)
AXIS = "compute time (CPU seconds): the paper's ACFs are \"as a function of computational time lag\" (§4)"
MIXING = Much()
MOVES = Always("IM at the paper's settings accepted at least one move (a chain that accepts none has no mixing or "
               "convergence time: its seed gives no ratio, and it cannot be the faster)")
OUTPERFORMS = Significant(against="Kawasaki, on each of Figs. 2–4 and each axis the sentence names (convergence, "
                                  "independent samples)")
ENSEMBLE = Always(f"Kawasaki's mean energy over the kept half of the compute window lies above IM's by more than "
                  f"{Z_95} combined Monte Carlo standard errors (sd / √ESS each)")
REACHES_ZERO = Always(f"IM's energy ACF against compute-time lag falls below 2/√n (n: the kept points) at a lag "
                      f"within the first {QUICKLY:.0%} of the kept window")
GOOD_RATES = Always(f"IM at the paper's settings accepted at least {GOOD_ACCEPTANCE:.0%} of its moves over the trial "
                    f"(the paper states no rate; {GOOD_ACCEPTANCE:.0%} is a conventional floor for a good rate, under "
                    f"half the {OPTIMAL_ACCEPTANCE:.1%} Roberts, Gelman & Gilks (1997) find optimal for random-walk "
                    "Metropolis, so generous to the paper)")


@dataclass(frozen=True)
class Figure:
    """One of the paper's Figs. 2–4: where, its size, its moves, its replay preset, its mixing sentence and the
    strong word in it."""

    where: str
    size: str
    im_moves: int
    moves: str
    replay: str
    quote: str
    word: str

    @property
    def name(self) -> str:
        """The figure without its section, e.g. "Fig. 2 (ferromagnet)"."""
        return self.where.split(", ", 1)[1]


FIGURES = (
    Figure("§4, Fig. 2 (ferromagnet)", "60×60 ferromagnet (3,600 spins)",
           10**5, "10⁵ IM moves against 5·10⁶ Metropolis moves",
           "IM Fig. 2 · ferromagnet 30×30 at β = 1/2.27, half up · paper's k, γ = β vs Kawasaki",
           "The algorithms’ ACFs shown below show a marked decrease in the mixing time when using IM.", "marked"),
    Figure("§4, Fig. 3 (spin glass)", "9×9×9 ±J spin glass (729 spins)",
           10**5, "10⁵ IM moves against 10⁶ Metropolis moves",
           "IM Fig. 3 · ±J spin glass 6×6×6 at β = 1, half up · k ~ U[1, 25], γ = 0.8β vs Kawasaki",
           "We can see once again from both the plots of the energy and of the ACF that IM mixes considerably "
           "faster than the Metropolis algorithm.", "considerably"),
    Figure("§4, Fig. 4 (Gabor RBM)", "Gabor RBM with 784 visible and 500 hidden units",
           10**4, "10⁴ IM moves against 10⁵ Metropolis moves",
           "IM Fig. 4 · Gabor-filter Boltzmann machine 14×14 + 125, a third active · k ~ U[1, 20], γ = 0.8 vs "
           "Kawasaki",
           "We can see again that the performance of IM is markedly superior to that of the Metropolis algorithm",
           "markedly"))
SPIN_GLASS, RBM = 1, 2
#: The sentences on Metropolis's ensemble (Figs. 3 and 4) and on the RBM's ACF (Fig. 4).
ENSEMBLE_QUOTES = {
    SPIN_GLASS: "Indeed from the energy plot one can see that the Metropolis algorithm has not settled into the "
                "same statistical ensemble as that of IM by the end of the simulation",
    RBM: "… as in the case of the spin glass, the ensemble sampled by Metropolis has not converged to the one that "
         "IM reached quite early in the simulation."}
ACF_QUOTE = ("The parameters we have chosen cause an especially rapid drop-off in the ACF of IM. Please note the "
             "vertical scale in the autocorrelation plots. In the RBM, it decreases quickly to 0 and not 0.1 as in "
             "the previous models.")
#: §5's headline: the sentence and the next, which names the axes.
OUTPERFORMS_QUOTE = ("The experiments demonstrated, in three Ising models of varying difficulty, that the new sampler "
                     "outperforms the popular algorithm in the literature by a significant margin. Energy and "
                     "autocorrelation plots, showed that the new sampler converges faster to the stationary regime "
                     "and that it produces more independent samples.")


@dataclass(frozen=True)
class Sentence:
    """A sentence on the paper's acceptance rates: where, its words, and the claim read in them."""

    where: str
    quote: str
    claim: str


#: §4 (the spin glass's paragraph, which weighs rejection against rejection) and §5 on the acceptance rates.
TRADE_OFF = Sentence(
    "§4, Fig. 3 (spin glass): the trade-off",
    "… moves will then be mostly rejected. … The SAW lengths we used and setting γ to be slightly below the one at "
    "which the state space becomes difficult to explore were a good trade-off that allowed the sampler to function "
    "satisfactorily.",
    "On the spin glass, the paper's walk lengths (k ~ U[1, 25]) and γ = 0.8β let IM function satisfactorily: a "
    "good acceptance rate")
TUNED = Sentence(
    "§5 (conclusion): the acceptance rates",
    "We tuned the SAW length and the proposal parameter γ to obtain good acceptance rates.",
    "The paper's walk lengths and γ give IM good acceptance rates on all three models")
WALK_LENGTHS = (1, 3, 10, 30, 90)
GAMMAS = (0.5, 0.8, 1.0)


# -- runs ------------------------------------------------------------------------------------------------
def figure_trials(args) -> list[list[Trial]]:
    """Each figure's trials, one per seed (``intracluster_paper.Trial``: the paper's IM makes ``--im-moves`` moves,
    the others run for the CPU time those took)."""
    return [[Trial(args.im_scale, index, seed, 0.0, args.im_moves, f"IM {figure.where} seed {seed}")
             for seed in range(args.seeds)] for index, figure in enumerate(FIGURES)]


def audit_runs(args) -> list[Trial]:
    """Every trial of every figure: the runs of the audit's sweep."""
    return [trial for trials in figure_trials(args) for trial in trials]


@dataclass(frozen=True)
class Measured:
    """One figure's stored trials on their common compute-time grid: each setting's ``Summary`` (one row per
    measured seed) after ``BURN_IN``."""

    experiment: Experiment
    grid: np.ndarray
    summaries: dict[str, Summary]
    planned: int

    @property
    def paper(self) -> Summary:
        """IM at the paper's settings."""
        return self.summaries[self.experiment.settings[REFERENCE].label]

    @property
    def balanced(self) -> Summary:
        """IM with the same walks at γ = 1/2."""
        return self.summaries[self.experiment.settings[REFERENCE + 1].label]

    @property
    def kawasaki(self) -> Summary:
        return self.summaries[KAWASAKI]

    @property
    def seeds(self) -> int:
        return len(self.paper.tau)

    @property
    def kept(self) -> int:
        """Points of the grid after burn-in (those ``summarise`` keeps)."""
        return len(self.grid) - int(BURN_IN * len(self.grid))

    @property
    def window(self) -> float:
        """CPU seconds the kept points span."""
        return float(self.grid[-1] - self.grid[-self.kept])


def measure(experiment: Experiment, trials: list[Trial], store, moves: int) -> Measured | str:
    """The stored ``trials`` of ``experiment`` read on a grid of ``moves`` + 1 compute times, or why not measured."""
    stored = [trial for trial in trials if store.has(trial.run_id)]
    if not stored:
        return f"every one of the {len(trials)} trials failed (the sweep's summary says why)"
    try:
        traces, window = stored_trials(experiment, stored, store)
        grid = time_grid(traces, window, moves + 1)
    except (KeyError, ValueError) as error:  # a stored result of another form, or too few moves for a grid
        return f"the stored trials cannot be read ({error})"
    return Measured(experiment, grid, {label: summarise(label, runs, grid, BURN_IN) for label, runs in traces.items()},
                    len(trials))


@dataclass(frozen=True)
class Context:
    """One figure's audit: its index in ``FIGURES``, its measured trials (or why not measured), what stands in for
    the paper's model, and what the row's replay preset runs beside what was audited (``replay_note``)."""

    index: int
    found: Measured | str
    stand_in: str
    replay: str

    @property
    def figure(self) -> Figure:
        return FIGURES[self.index]


# -- the criteria's per-seed evidence ---------------------------------------------------------------------
@dataclass(frozen=True)
class SeedRatios:
    """Per-seed ratios (> 1 favours IM), the seeds where a chain accepted no move censored (``frozen``): a chain
    that never moves has no mixing or convergence time, only a censored bound, so such a seed gives no ratio — it
    reads "censored: no move accepted", and its evidence is NaN, never judged as a ratio."""

    values: np.ndarray
    frozen: np.ndarray

    @property
    def evidence(self) -> RatioEvidence:
        return ratio_evidence(np.where(self.frozen, np.nan, self.values))

    def __str__(self) -> str:
        if not self.frozen.any():
            return str(self.evidence)
        others = "" if self.frozen.all() else f"; the other seeds' ratios: {per_seed(self.values[~self.frozen])}"
        return f"censored: no move accepted in {np.count_nonzero(self.frozen)} of {len(self.frozen)} seeds{others}"


def seed_ratios(values, kawasaki: Summary, im: Summary) -> SeedRatios:
    """``values`` per seed, censored where Kawasaki or IM accepted no move."""
    return SeedRatios(np.asarray(values, dtype=float), (kawasaki.acceptance == 0) | (im.acceptance == 0))


def moved(summary: Summary) -> list[bool]:
    """Per seed whether the chain accepted at least one move (``MOVES``)."""
    return [bool(rate > 0) for rate in summary.acceptance]


def mixing_ratios(kawasaki: Summary, im: Summary) -> dict[str, SeedRatios]:
    """Per seed τ_int(Kawasaki) / τ_int(IM) on each axis: CPU seconds (τ as measured; this is also ESS(IM) /
    ESS(Kawasaki) over the same window), moves (τ × moves per second) and target evaluations (τ × evaluations per
    second); no ratio (NaN) where neither chain mixed, censored where either accepted no move."""
    seconds = censored_ratios(kawasaki.tau, im.tau, kawasaki.mixed, im.mixed)
    return {axis: seed_ratios(values, kawasaki, im) for axis, values in (
        ("CPU seconds", seconds),
        ("moves", seconds * paired_ratios(kawasaki.moves_per_second, im.moves_per_second)),
        ("target evaluations", seconds * paired_ratios(kawasaki.evaluations_per_second, im.evaluations_per_second)))}


def first_passage(energy: np.ndarray, level: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Per seed (row of ``energy`` on ``grid``) the first time the energy is at or below the seed's ``level`` (∞:
    never)."""
    reached = energy <= level[:, None]
    return np.where(reached.any(axis=1), grid[reached.argmax(axis=1)], np.inf)


def convergence_ratios(kawasaki: Summary, im: Summary, grid: np.ndarray) -> SeedRatios:
    """Per seed T(Kawasaki) / T(IM), T the first time a chain's energy is at or below the lower of the two chains'
    mean energies over the kept half (``first_passage``): how much sooner IM reaches the lower ensemble. A chain that
    never reaches it is censored at the run's end; the chain with the lower mean always reaches it."""
    level = np.minimum(kawasaki.mean_energy, im.mean_energy)
    times = [first_passage(summary.energy, level, grid) for summary in (kawasaki, im)]
    values = censored_ratios(*(censored(t, grid[-1]) for t in times), *(np.isfinite(t) for t in times))
    return seed_ratios(values, kawasaki, im)


def outperforming(found: Measured, im: Summary) -> dict[str, SeedRatios]:
    """§5's axes for ``im`` against Kawasaki: convergence and independent samples at equal CPU time."""
    return {"convergence": convergence_ratios(found.kawasaki, im, found.grid),
            "independent samples": mixing_ratios(found.kawasaki, im)["CPU seconds"]}


def energy_gap(kawasaki: Summary, im: Summary) -> np.ndarray:
    """Per seed z = (Ē_Kawasaki − Ē_IM) / √(se_K² + se_IM²) over the kept half (NaN: neither chain moved)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (kawasaki.mean_energy - im.mean_energy) / np.hypot(kawasaki.standard_error, im.standard_error)


def above(gaps: np.ndarray) -> list[bool | float]:
    """Per seed, whether Kawasaki sits above IM beyond the noise (z > ``Z_95``; NaN where z is NaN: not told)."""
    return [np.nan if np.isnan(z) else bool(z > Z_95) for z in gaps]


def first_below(acf: np.ndarray, band: float) -> np.ndarray:
    """Per seed (row) the first lag index at which the ACF is below ``band`` (NaN: never; a row of NaN — a chain that
    never moved — never)."""
    below = acf < band  # NaN compares False
    return np.where(below.any(axis=1), below.argmax(axis=1), np.nan)


def reaches_zero(summary: Summary, kept: int) -> tuple[list[bool], np.ndarray, float]:
    """Per seed whether the ACF falls below 2/√``kept`` within ``QUICKLY`` of the kept points, the first such lag
    index (NaN: never), and the band."""
    band = 2.0 / np.sqrt(kept)
    first = first_below(summary.acf, band)
    return [bool(lag <= QUICKLY * kept) for lag in first], first, band


def good_rates(summary: Summary) -> list[bool]:
    """Per seed whether the chain accepted at least ``GOOD_ACCEPTANCE`` of its moves (``GOOD_RATES``)."""
    return [bool(rate >= GOOD_ACCEPTANCE) for rate in summary.acceptance]


# -- claims ----------------------------------------------------------------------------------------------
def claims(args, store) -> list[Claim]:
    """From the stored trials: each figure's mixing claim, the ensembles of Figs. 3–4, the ACF of Fig. 4, the
    spin glass's trade-off, and §5's outperforming and acceptance rates."""
    contexts = [Context(index, measure(experiment, trials, store, args.im_moves),
                        stand_in_text(index, args.im_scale, experiment),
                        replay_note(FIGURES[index], experiment, args.im_moves))
                for index, (experiment, trials) in enumerate(zip(experiments(args.im_scale), figure_trials(args)))]
    out = []
    for context in contexts:
        out.append(mixing_claim(context))
        if context.index in ENSEMBLE_QUOTES:
            out.append(ensemble_claim(context))
        if context.index == RBM:
            out.append(acf_claim(context))
    return out + [acceptance_claim(TRADE_OFF, [contexts[SPIN_GLASS]]), outperforms_claim(contexts),
                  acceptance_claim(TUNED, contexts)]


def stand_in_text(index: int, scale: float, experiment: Experiment) -> str:
    """What stands in for the paper's model: a shrunk model below scale 1, and our Gabor filters always."""
    parts = [f"{experiment.title.split(', n =')[0]} for the paper's {FIGURES[index].size} (--im-scale {scale:g})"
             ] if scale < 1 else []
    if index == RBM:
        parts.append("our Gabor-filter weights (targets.gabor_rbm: filters cut at a window, drawn with seed 0) — the "
                     "paper does not give its filters")
    return "; ".join(parts)


def replay_note(figure: Figure, experiment: Experiment, moves: int) -> str:
    """What the row's replay preset (``assets/presets.json``) runs beside what was audited — its model and IM's
    settings, one chain for as long as it is let run — so that a user who replays knows what differs."""
    config = load_presets()[figure.replay].config
    preset = targets.make(config["target"], **config["target_params"])
    params, reference = config["sampler_params"], experiment.settings[REFERENCE].params
    replayed = setup_text(preset.dim, params["n_active"], params["walk_length"], params["gamma"])
    audited = setup_text(experiment.target.dim, experiment.n_active, reference["walk_length"], reference["gamma"])
    runs = f"one chain for as long as it is let run, where the audit ran {moves:,} IM moves per seed"
    same_model = type(preset) is type(experiment.target) and all(
        getattr(experiment.target, key) == value for key, value in config["target_params"].items())
    if same_model and replayed == audited:
        return f"the replay preset runs the audited model and settings ({audited}), {runs}"
    size = ("a smaller" if preset.dim < experiment.target.dim else "a larger" if preset.dim > experiment.target.dim
            else "another")
    return f"the replay preset is {size} version of the audited model: {replayed}, {runs} on {audited}"


def setup_text(dim: int, n_active: int, walk_length, gamma: float) -> str:
    """A model's size and IM's settings in words."""
    k = f"U[{walk_length[0]}, {walk_length[1]}]" if isinstance(walk_length, (list, tuple)) else walk_length
    return f"{dim:,} units, {n_active:,} on, k = {k}, γ = {gamma:g}"


def run_text(found: Measured) -> str:
    """The runs behind a row, with their axes: seeds, IM moves, the compute window and its kept half."""
    return (f"{found.seeds} of {found.planned} seeds, each {len(found.grid) - 1} IM moves ({found.grid[-1]:.3g} CPU "
            f"s; the others the same CPU time), statistics on the last {1 - BURN_IN:.0%} ({found.window:.3g} CPU s)")


def per_seed(values, digits: int = 3) -> str:
    return ", ".join("—" if not np.isfinite(v) else f"{v:.{digits}g}" for v in np.asarray(values, dtype=float))


def percent(rate: float) -> str:
    """A rate in per cent to three significant digits (0.04 %, not 0.0 %: a rate that is not zero never reads 0)."""
    return f"{100 * rate:.3g}%"


def not_measured(where: str, quote: str, claim: str, rule: str, papers_number: str, why: str, context: Context,
                 axis: str = AXIS) -> Claim:
    return Claim(PAPER, where, quote, claim, axis, rule, papers_number, AUTHORS, Evidence.not_measured(why),
                 fair="not measured", stand_in=context.stand_in, reason=f"not measured: {why}; {context.replay}",
                 replay=context.figure.replay)


def mixing_claim(context: Context) -> Claim:
    """Figs. 2–4: IM mixes markedly faster than Kawasaki at equal CPU time (``Much`` on τ_int(K) / τ_int(IM), and
    ``MOVES``)."""
    figure, found = context.figure, context.found
    claim = "IM mixes markedly faster than Kawasaki (constant-set Metropolis) at equal compute time"
    rule = ("per seed ρ = τ_int(Kawasaki) / τ_int(IM at the paper's k and γ), the energy's integrated "
            "autocorrelation time in CPU seconds at equal CPU time (censored at the window when a chain moved but "
            "never mixed; a seed where a chain accepted no move gives no ratio: censored); " + MIXING.rule()
            + "; and " + MOVES.rule())
    number = f"no number, the word \"{figure.word}\" (ACFs against computational time; {figure.moves})"
    if isinstance(found, str):
        return not_measured(figure.where, figure.quote, claim, rule, number, found, context)
    paper = mixing_ratios(found.kawasaki, found.paper)
    balanced = mixing_ratios(found.kawasaki, found.balanced)["CPU seconds"]
    accepted, accepted_balanced = percent(found.paper.acceptance.mean()), percent(found.balanced.acceptance.mean())
    ours = (f"τ_int(Kawasaki) / τ_int(IM) in CPU seconds: {paper['CPU seconds']}; IM accepted {accepted} of its "
            f"moves; {run_text(found)}")
    fair = (f"per move: {paper['moves']}; per target evaluation: {paper['target evaluations']}; per CPU second: "
            f"{paper['CPU seconds']}. Fair settings (not the paper's): IM with the same walks at γ = 1/2 accepts "
            f"{accepted_balanced}, τ_int(Kawasaki) / τ_int in CPU seconds {balanced}")
    reason = (f"at the paper's γ IM accepted {accepted} of its moves (γ = 1/2: {accepted_balanced}); "
              f"τ_int(Kawasaki) / τ_int(IM) per CPU second: {paper['CPU seconds']}; {context.replay}")
    details = [f"{found.experiment.title}; {run_text(found)}. Mean ± sd over seeds; the per-seed ratios below (a "
               "seed where a chain accepted no move censored, never a ratio) give the verdict's interval.", "",
               run_length(found, figure.im_moves), "",
               mixing_table(list(found.summaries.values()), ratios=False), "",
               "| τ_int(Kawasaki) / τ_int(setting), per seed | CPU seconds | moves | target evaluations |",
               "|---|---|---|---|",
               *(f"| {summary.label} | " + " | ".join(map(str, mixing_ratios(found.kawasaki, summary).values())) + " |"
                 for summary in (found.paper, found.balanced)), ""]
    judged = (Judgement("τ_int(Kawasaki) / τ_int(IM), CPU seconds", MIXING, paper["CPU seconds"].evidence),
              Judgement("IM moves", MOVES, moved(found.paper)))
    return Claim(PAPER, figure.where, figure.quote, claim, AXIS, rule, number, AUTHORS, Evidence(ours, judged), fair,
                 stand_in=context.stand_in, reason=reason, replay=figure.replay, details=details,
                 figures=figures(found.experiment, found.grid, list(found.summaries.values())))


def run_length(found: Measured, paper_moves: int) -> str:
    """What the paper's longer run would change for IM at its settings. A chain that rejects stays where it is, so
    each of its proposals there is an independent trial with one acceptance probability p: none accepted in N
    gives p ≤ 3/N at 95 % (the rule of three)."""
    moves = len(found.grid) - 1
    accepted, total = float(np.sum(found.paper.acceptance * moves)), moves * found.seeds
    run = f"Run length: {moves:,} moves of IM per seed, the paper {paper_moves:,}. "
    if accepted == 0:
        return run + (f"IM at the paper's settings accepted none of its {total:,} moves (p ≤ {3 / total:.2g} per "
                      f"move at 95 %), so the paper's run would accept at most about {_count(3 * paper_moves / total)} "
                      "per trial.")
    return run + (f"IM at the paper's settings accepted {accepted / total:.2g} of its moves, about "
                  f"{_count(paper_moves * accepted / total)} over the paper's run at that rate.")


def _count(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def ensemble_claim(context: Context) -> Claim:
    """Figs. 3 and 4: Metropolis has not reached the ensemble IM reached (``Always`` on the late energy gap)."""
    figure, found, quote = context.figure, context.found, ENSEMBLE_QUOTES[context.index]
    where = f"{figure.where}: the ensembles"
    claim = "Metropolis (Kawasaki) has not converged to the ensemble IM reached by the end of the run"
    rule = (f"{ENSEMBLE.rule()} (z = (Ē_K − Ē_IM) / √(se_K² + se_IM²); the chains start at a uniform state of "
            "S_n, far above typical energies, so the sampler that has not converged is the one left higher up)")
    number = "no number: read off the energy plot (10 trials; " + figure.moves + ")"
    if isinstance(found, str):
        return not_measured(where, quote, claim, rule, number, found, context)
    gaps, balanced_gaps = energy_gap(found.kawasaki, found.paper), energy_gap(found.kawasaki, found.balanced)
    held, held_balanced = above(gaps), above(balanced_gaps)
    energies = {s.label: s.mean_energy for s in (found.kawasaki, found.paper, found.balanced)}
    late = "; ".join(f"{label} {values.mean():.4g} ± {values.std():.2g}" for label, values in energies.items())
    ours = (f"Kawasaki above IM beyond the noise in {held.count(True)} of {len(held)} seeds "
            f"(z per seed: {per_seed(gaps)}); {run_text(found)}")
    speed = paired_ratios(found.kawasaki.moves_per_second, found.paper.moves_per_second).mean()
    evaluations = paired_ratios(found.kawasaki.evaluations_per_second, found.paper.evaluations_per_second).mean()
    fair = (f"at equal CPU time Kawasaki made {speed:.3g}× IM's moves and {evaluations:.3g}× its target evaluations; "
            f"mean late energy (mean ± sd over seeds): {late}. Fair settings (not the paper's): Kawasaki above IM at "
            f"γ = 1/2 in {held_balanced.count(True)} of {len(held_balanced)} seeds (z: {per_seed(balanced_gaps)})")
    lower = sum(bool(z < -Z_95) for z in gaps)
    reason = (f"Kawasaki's late energy is above IM's beyond the noise in {held.count(True)} of {len(held)} seeds "
              f"and below it in {lower}; IM at the paper's γ accepted {percent(found.paper.acceptance.mean())} of its "
              f"moves; {context.replay}")
    return Claim(PAPER, where, quote, claim, AXIS, rule, number, AUTHORS,
                 Evidence.judging(ours, ENSEMBLE, held, "Kawasaki above IM (z > 1.96)"), fair,
                 stand_in=context.stand_in, reason=reason, replay=figure.replay)


def acf_claim(context: Context) -> Claim:
    """Fig. 4: IM's energy ACF on the RBM drops quickly to 0 (``Always`` on reaching the white-noise band)."""
    figure, found = context.figure, context.found
    where = f"{figure.where}: the ACF"
    claim = "On the RBM, IM's energy ACF drops quickly to 0 (not to 0.1 as on the other models)"
    rule = REACHES_ZERO.rule()
    number = "ACF of IM reaches 0 (about 0.1 on Figs. 2–3), read off Fig. 4(b)"
    if isinstance(found, str):
        return not_measured(where, ACF_QUOTE, claim, rule, number, found, context)
    held, first, band = reaches_zero(found.paper, found.kept)
    step = float(found.grid[1])
    held_balanced, _, _ = reaches_zero(found.balanced, found.kept)
    held_kawasaki, _, _ = reaches_zero(found.kawasaki, found.kept)
    ours = (f"IM's ACF below {band:.3g} within {QUICKLY * found.window:.3g} CPU s of lag in {sum(held)} of {len(held)} "
            f"seeds (first lag below, CPU s per seed: {per_seed(first * step)}; — never); "
            f"{run_text(found)}")
    fair = (f"the lag limit is {QUICKLY * found.window:.3g} CPU s ≈ {QUICKLY * found.kept:.0f} moves of the paper's "
            f"IM; Kawasaki's ACF reaches the band as quickly in {sum(held_kawasaki)} of {len(held_kawasaki)} seeds. "
            f"Fair settings (not the paper's): IM at γ = 1/2 in {sum(held_balanced)} of {len(held_balanced)} seeds")
    reason = (f"IM's ACF reached the band within the limit in {sum(held)} of {len(held)} seeds; IM at the paper's "
              f"γ accepted {percent(found.paper.acceptance.mean())} of its moves (γ = 1/2: {sum(held_balanced)} of "
              f"{len(held_balanced)} seeds); {context.replay}")
    return Claim(PAPER, where, ACF_QUOTE, claim, AXIS, rule, number, AUTHORS,
                 Evidence.judging(ours, REACHES_ZERO, held, "IM's ACF reaches the band quickly"), fair,
                 stand_in=context.stand_in, reason=reason, replay=figure.replay)


def several(contexts: list[Context]) -> tuple[list[Context], str, str]:
    """Of a claim drawn on several figures: the measured contexts, what was not measured (by figure) and what
    stands in (by figure)."""
    missing = "; ".join(f"{c.figure.name}: {c.found}" for c in contexts if isinstance(c.found, str))
    stand_in = "; ".join(f"{c.figure.name}: {c.stand_in}" for c in contexts if c.stand_in)
    return [c for c in contexts if not isinstance(c.found, str)], missing, stand_in


def column(texts: list[str], judged: list[Judgement], missing: str) -> Evidence:
    """A column of several figures: their texts, their judgements, and what was not measured (inconclusive)."""
    return Evidence(" · ".join(texts + ([f"not measured: {missing}"] if missing else [])), tuple(judged), missing)


def outperforms_claim(contexts: list[Context]) -> Claim:
    """§5: IM outperforms Kawasaki by a significant margin — it converges faster to the stationary regime and gives
    more independent samples — on the three models (``Significant`` on each figure's two axes, and ``MOVES``; the
    weakest deciding)."""
    claim = ("IM outperforms Kawasaki by a significant margin on all three models: it converges faster to the "
             "stationary regime and gives more independent samples")
    rule = ("per figure and seed at equal CPU time: convergence ρ = T(Kawasaki) / T(IM), T the first CPU time the "
            "energy is at or below the lower of the two chains' mean energies over the kept half (censored at the "
            "run's end when never), and independent samples ρ = ESS(IM) / ESS(Kawasaki) over the kept half (= "
            "τ_int(Kawasaki) / τ_int(IM) in CPU seconds); a seed where a chain accepted no move gives no ratio "
            "(censored); " + OUTPERFORMS.rule() + "; and per figure " + MOVES.rule())
    measured, missing, stand_in = several(contexts)
    judged, texts, balanced = [], [], []
    for context in measured:
        found, name = context.found, context.figure.name
        axes = outperforming(found, found.paper)
        judged += [Judgement(f"{name}: {axis}", OUTPERFORMS, ratios.evidence) for axis, ratios in axes.items()]
        judged.append(Judgement(f"{name}: IM moves", MOVES, moved(found.paper)))
        texts.append(f"{name}: " + "; ".join(f"{axis} {ratios}" for axis, ratios in axes.items())
                     + f"; IM accepted {percent(found.paper.acceptance.mean())} of its moves; {found.seeds} of "
                     f"{found.planned} seeds measured")
        balanced.append(f"{name}: " + "; ".join(f"{axis} {ratios}" for axis, ratios in
                                                outperforming(found, found.balanced).items()))
    fair = ("both axes at equal CPU time (the paper's parity); per move and per target evaluation in the rows of "
            "Figs. 2–4. Fair settings (not the paper's), IM with the same walks at γ = 1/2: " + " · ".join(balanced))
    reason = "; ".join([f"{judgement.label}: {judgement.verdict}" for judgement in judged]
                       + ([f"not measured: {missing}"] if missing else []))
    return Claim(PAPER, "§5 (conclusion): outperforms", OUTPERFORMS_QUOTE, claim,
                 "compute time (CPU seconds): convergence to the stationary regime and independent samples (ESS) "
                 "at equal CPU time", rule,
                 "no number: \"a significant margin\", read off Figs. 2–4's energy and ACF plots (10 trials each; no "
                 "test named)", AUTHORS, column(texts, judged, missing), fair,
                 plotted="energy and its ACF against computational time (Figs. 2–4)", stand_in=stand_in, reason=reason)


def acceptance_claim(sentence: Sentence, contexts: list[Context]) -> Claim:
    """§4's trade-off (the spin glass) and §5's "good acceptance rates" (all three models): IM at the paper's
    settings accepts at least ``GOOD_ACCEPTANCE`` of its moves in every seed (``GOOD_RATES``)."""
    measured, missing, stand_in = several(contexts)
    judged, texts, fair = [], [], []
    for context in measured:
        found, name = context.found, context.figure.name
        held = good_rates(found.paper)
        judged.append(Judgement(f"{name}: IM's acceptance", GOOD_RATES, held))
        texts.append(f"{name}: IM at the paper's settings accepted {per_seed(100 * found.paper.acceptance)} % per "
                     f"seed, at least {GOOD_ACCEPTANCE:.0%} in {sum(held)} of {len(held)}")
        fair.append(f"{name}: IM with the same walks at γ = 1/2 accepted {percent(found.balanced.acceptance.mean())}, "
                    f"Kawasaki {percent(found.kawasaki.acceptance.mean())}")
    single = len(contexts) == 1
    replay = contexts[0].figure.replay if single else ""
    reason = "; ".join([f"{judgement.label}: {judgement.verdict}" for judgement in judged]
                       + ([f"not measured: {missing}"] if missing else []) + ([contexts[0].replay] if single else []))
    return Claim(PAPER, sentence.where, sentence.quote, sentence.claim,
                 "acceptance rate of IM moves at the paper's walk lengths and γ, over each trial", GOOD_RATES.rule(),
                 "no number: the paper reports no acceptance rate", AUTHORS, column(texts, judged, missing),
                 "; ".join(fair) or "not measured", stand_in=stand_in, reason=reason, replay=replay)


# -- why the paper's settings accept almost nothing --------------------------------------------------------
def investigations(args) -> list[str]:
    """Markdown: acceptance over k and γ on the ferromagnet, the exact check, and the paper's open points."""
    ferromagnet = experiments(args.im_scale)[0]
    target, n_active = ferromagnet.target, ferromagnet.n_active
    limit = min(n_active, target.dim - n_active)
    lengths = [k for k in WALK_LENGTHS if k <= limit]
    lines = ["## Intracluster moves: why the paper's settings accept almost nothing", "",
             f"### Acceptance of IM moves on the ferromagnet ({target.size}×{target.size}, β = 1/2.27, "
             f"n = {n_active}), 8 chains, {args.im_acceptance_moves} moves after 20", "",
             "| γ | reflip | " + " | ".join(f"k = {k}" for k in lengths) + " |", "|---|---|" + "---|" * len(lengths)]
    for gamma in GAMMAS:
        for reflip in (False, True):
            rates = [measured_acceptance(target, n_active, k, gamma, reflip, args.im_acceptance_moves).mean()
                     for k in lengths]
            lines.append(f"| {gamma} | {'yes' if reflip else 'no'} | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
    units = targets.make("ising_lattice", size=target.size, beta=1 / 2.27, J=0.25)
    in_units = measured_acceptance(units, n_active, max(lengths), 1.0, False, args.im_acceptance_moves).mean()
    lines += ["", "Were the ferromagnet's energy written over x ∈ {0, 1} (a Boltzmann machine's units) instead of "
              "the ±1 spins of §4, it would be, at fixed n, our ±1 lattice with J/4 (four times hotter). There, at "
              f"k = {max(lengths)} and γ = 1: acceptance {in_units:.3f}.", ""]
    lines += exact_check(args)
    lines += ["", "Where the paper's description leaves room (none of these brings long walks at γ = β near the "
              "acceptance at γ = 1/2):", "",
              "* Eq. 2 draws the upward step from P(x₀), which §2 defines as the bits that *agree* with c; "
              "flipping one moves *away* from S_{n−1}. The text (\"the n single-flip neighbours on S_{n−1}\") and "
              "Fig. 1 flip disagreeing bits, as we do.",
              "* Whether the second walk may flip back bits of the first: Fig. 1 does (σ = [4, 2, 5], "
              "ρ = [5, 7, 2]), the word self-avoiding suggests not; both are offered (``reflip``) and measured above.",
              "* The lattices' boundaries (ours are periodic) and the spin glass's couplings (ours: one draw, seed 0) "
              "are not given.",
              "* No acceptance rate is reported; with Eq. 6 as written and γ = β, long walks are rejected, so the "
              "published ACFs need a chain that moves, which Eq. 6 at these settings does not give here."]
    return ["\n".join(lines)]


def measured_acceptance(target, n_active: int, k: int, gamma: float, reflip: bool, moves: int, chains: int = 8,
                        init: np.ndarray | None = None, settle: int = 20) -> np.ndarray:
    """Each chain's acceptance over ``moves`` IM moves after ``settle`` (from ``init``, or uniform starts on S_n)."""
    sampler = samplers.make("intracluster", target, n_chains=chains, seed=0, n_active=n_active, walk_length=k,
                            gamma=gamma, reflip=reflip, init=init)
    for _ in range(settle):
        sampler.step(record=False)
    accepted = np.zeros(chains)
    for _ in range(moves):
        sampler.step(record=False)
        accepted += sampler.last_accepted
    return accepted / moves


def exact_acceptance(target, n_active: int, k: int, gamma: float, states: np.ndarray) -> np.ndarray:
    """At each of ``states``, the exact probability that an IM move (walk length k, bias γ, no reflip) is accepted:
    the mass ``transition_row`` (which enumerates every walk) puts on leaving x, since a move changes 2k bits."""
    kernel = samplers.make("intracluster", target, n_chains=1, seed=0, n_active=n_active, walk_length=k, gamma=gamma)
    leave = []
    for x in states:
        finals, probs = kernel.transition_row(x)
        leave.append(probs[np.any(finals != x, axis=1)].sum())
    return np.array(leave)


def stationary_states(target, n_active: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` states drawn from π_n by enumerating S_n."""
    support, log_p = target.enumerate()
    inside = support.sum(axis=1) == n_active
    support, weights = support[inside], np.exp(log_p[inside] - log_p[inside].max())
    return support[rng.choice(len(support), size=count, p=weights / weights.sum())]


def exact_check(args, side: int = 4, states: int = 200, chains: int = 50) -> list[str]:
    """Exact E_π[acceptance] on a side×side ferromagnet (n = half) at states drawn from π_n (``exact_acceptance``),
    beside the sampler's rate with ``chains`` chains started from π_n (so stationary): the acceptance is Eq. 6's,
    not an artefact of the sampler's code."""
    target = targets.make("ising_lattice", size=side, beta=1 / 2.27)
    n_active = target.dim // 2
    drawn = stationary_states(target, n_active, states, np.random.default_rng(0))
    lines = [f"Exact check on a {side}×{side} ferromagnet (n = {n_active}): E_π[acceptance] from the enumerated "
             f"kernel (``transition_row``, every walk, at {states} states drawn from π_n) against the sampler's rate "
             f"({chains} chains started from π_n, {args.im_acceptance_moves} moves each); mean [95 % interval].", "",
             "| k | γ | exact | sampler |", "|---|---|---|---|"]
    for k in (1, 2):
        for gamma in (0.5, 1.0):
            exact = interval(exact_acceptance(target, n_active, k, gamma, drawn))
            sampled = measured_acceptance(target, n_active, k, gamma, False, args.im_acceptance_moves, chains,
                                          init=drawn[:chains], settle=0)
            lines.append(f"| {k} | {gamma} | {exact} | {interval(sampled)} |")
    return lines
