"""What a run sends to the views: one ``RunInfo`` per run and immutable ``Snapshot``s as it goes.

A worker (``engine.worker``) owns the target and the sampler; the
views never see either. When a run is (re)built the worker sends a
``RunInfo`` — everything about the run that does not change while it runs
(shape of the states, the target's inputs and labels, what the sampler can
do). While it runs it answers each request of the client with one
``Snapshot``: the trace rows added since the previous one, the chain shown as
an image, and, when they changed, the slower parts (diagnostics, learning,
adaptation, OPAD, the comparison run). ``None`` means "unchanged": a view
keeps what it drew. Model code: no Panel import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from samplers.diagnostics.inspection import ProposalInspection
from samplers.lsb.balancing import BALANCING, FORMULAS
from samplers.opad.store import KINDS
from targets.picture import ImageAxes

from .capabilities import Capabilities
from .images import as_image, cell_centres, grid_shape, in_slice, site_name, step_labels
from .move_replay import MoveReplay
from .numbers import exp_number, number, wide_number
from .opad_tracker import OpadSnapshot
from .statistics import LABELS, folds, folds_sign

#: The module's surface: the snapshots, and what the views read besides them (re-exported: a view imports nothing
#: of the library but this module, ``tests/test_layout.py``).
__all__ = ["BvsInfo", "DagInfo", "RunInfo", "Display", "Status", "LearningState", "AdaptationState", "TuningState",
           "TemperingState", "ComparisonState", "Snapshot", "BARELY_MOVES", "BARELY_MOVES_AFTER", "LOG_T",
           "ESS_DEFINITIONS", "AXES", "BALANCING", "FORMULAS", "KINDS", "ImageAxes", "ProposalInspection",
           "OpadSnapshot", "Capabilities", "grid_shape", "in_slice", "site_name", "step_labels", "MoveReplay",
           "exp_number", "number", "wide_number", "LABELS", "folds", "folds_sign"]
#: log t grid on which a sampler's balancing function g is sent to the balancing view.
LOG_T = np.linspace(np.log(1e-3), np.log(1e3), 241)
#: The three definitions of ESS the diagnostics table puts side by side.
ESS_DEFINITIONS = ("ESS", "ESS per chain, DISCS (2nd half)", "ESS per chain, LSB code (lags ≤ 500)")
#: The axes a comparison can share (``RunConfig.compare_axis``): the trace history's column and the axis's unit
#: (views and controls name the axis by its unit in the plural).
AXES = {"seconds": ("seconds", "compute second"), "steps": ("step", "step"),
        "evaluations": ("n_evals", "target evaluation")}

#: Acceptance under which a chain barely moves: its trace is nearly flat, and its ESS and autocorrelation mislead.
BARELY_MOVES = 0.01
#: Steps after which a run's acceptance is read against ``BARELY_MOVES`` (a full recent window).
BARELY_MOVES_AFTER = 1000


@dataclass(frozen=True)
class BvsInfo:
    """Labels of a variable-selection target: predictor names and the generating model γ* (synthetic data)."""

    predictor_names: tuple[str, ...]
    true_inclusion: np.ndarray | None


@dataclass(frozen=True)
class DagInfo:
    """Labels of a structure-learning target: node names, the bit ↔ edge map and the generating graph."""

    node_names: tuple[str, ...]
    edge_pairs: np.ndarray  # (n(n−1), 2): bit k is the edge edge_pairs[k, 0] → edge_pairs[k, 1]
    true_adjacency: np.ndarray | None


@dataclass(frozen=True)
class RunInfo:
    """A run as built: its configuration and what the views need to know about its target and sampler."""

    run: int  # serial number of the run in its worker (a reset is a new run)
    request: int  # the client's number of the ``configure`` request that built it
    sampler: str
    target_name: str
    dim: int
    n_chains: int
    image_shape: tuple[int, ...] | None
    image_positions: np.ndarray | None  # the flat picture cell of each bit (None: bit i in cell i)
    image_axes: ImageAxes | None  # names of the picture's rows and columns (named variables, not a lattice)
    capabilities: Capabilities
    statistic: str
    opad_problem: str  # why OPAD is not tracked ('' when it is)
    companion: str = ""  # the comparison sampler's name ('' for none)
    compare_axis: str = "seconds"  # what both samplers get as much of: "seconds", "steps" or "evaluations"
    #: moves per step of the sampler and of its comparison sampler while they learn (an LSB sampler's
    #: ``learning_moves``; 1 for every sampler that makes one move a step)
    moves_per_step: tuple[int, int] = (1, 1)
    log_g: np.ndarray | None = None  # the balancing function on ``session.LOG_T`` as built (locally balanced)
    inputs: dict = field(default_factory=dict)  # segmentation: "ground_truth" and "observation" images
    bvs: BvsInfo | None = None
    dag: DagInfo | None = None
    hidden_units: int = 0  # an RBM's summed-out hidden units, drawn as p(h_j = 1 | v) beside its state

    @property
    def opad_tracked(self) -> bool:
        return not self.opad_problem

    def picture(self, values: np.ndarray, depth: int = 0) -> np.ndarray:
        """Per-bit ``values`` drawn as the target's picture (``images.as_image``; a 3-D lattice: slice ``depth``)."""
        return as_image(values, self.image_shape, depth, self.image_positions)

    def cells(self, sites: np.ndarray, depth: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) centres of the picture's cells drawing bits ``sites`` (``images.cell_centres``)."""
        return cell_centres(sites, self.image_shape, self.dim, depth, self.image_positions)


@dataclass(frozen=True)
class Display:
    """What the views show of the chains: which chain, which slice of a 3-D lattice, the running mean or not, and
    whether the proposal inspector follows the shown chain's moves."""

    chain: int = 0
    depth: int = 0
    mean: bool = False
    inspect: bool = False  # the proposal inspector is open: record the shown chain's moves


@dataclass(frozen=True)
class Status:
    """Where a run stands; ``barely_moves`` once a full window of steps accepts under ``BARELY_MOVES`` of moves.

    A run that is not running takes no steps: its ``steps_per_second`` is 0 whatever rate was measured last
    (a paused or failed run never reports the speed it had before).
    """

    phase: str = "paused"  # "paused", "running", "failed", or a set-up phase (``engine.session.READY`` and after)
    n_steps: int = 0
    n_evals: int = 0
    seconds: float = 0.0  # time spent inside the sampler's steps
    steps_per_second: float = 0.0  # measured while running
    acceptance: float = float("nan")  # over the recent window

    def __post_init__(self):
        if not self.running:
            object.__setattr__(self, "steps_per_second", 0.0)

    @property
    def running(self) -> bool:
        return self.phase == "running"

    @property
    def barely_moves(self) -> bool:
        return self.n_steps >= BARELY_MOVES_AFTER and self.acceptance < BARELY_MOVES


@dataclass(frozen=True)
class LearningState:
    """A sampler that learns its balancing function (LSB, FLSB), as the balancing view draws it."""

    history: dict  # step, loss, eta (and LSB1's w_*) arrays
    log_g: np.ndarray  # log g(t) of the current function on ``balancing.LOG_T``
    adapting: bool
    frozen_at: int | None
    burn_in: int
    keep_adapting: bool
    skipped: int
    parametrization: str
    step: int


@dataclass(frozen=True)
class AdaptationState:
    """An intracluster sampler tuning its walks (γ, walk length), as the adaptation view draws it."""

    history: dict  # step, gamma, walk_length, acceptance arrays
    adapting: bool
    frozen_at: int | None
    burn_in: int
    gamma: float
    walk_length: object
    target_acceptance: float
    step: int


@dataclass(frozen=True)
class TuningState:
    """A sampler tuning one kernel parameter toward an acceptance rate (DMALA, DLMC, PAS), for its status line."""

    parameter: str  # the tuned parameter's name (step_size, path_length)
    value: float  # its value in force
    adapting: bool
    frozen_at: int | None
    burn_in: int
    target_acceptance: float
    step: int


@dataclass(frozen=True)
class TemperingState:
    """Parallel tempering's ladder and how often neighbouring replicas exchanged, as the tempering view draws it."""

    betas: np.ndarray  # (K,) inverse temperatures, β₁ = 1 first (the replica shown)
    swap_acceptance: np.ndarray  # (K − 1,) mean acceptance probability of exchanges between replicas k and k + 1
    base: str  # the sampler every replica runs
    swap_every: int
    step: int


@dataclass(frozen=True)
class ComparisonState:
    """The run's sampler and its comparison sampler at an equal share of one axis (see ``engine.comparison``)."""

    trace: tuple[dict, dict]  # per sampler: "x" (the shared axis) and "y" (the chains' mean; energy for log p̃)
    acf: tuple[dict, dict]  # per sampler: "lag" (in the shared axis) and "acf"
    lines: tuple[str, ...]  # one line of text per sampler, then the ratio when resolved


@dataclass(frozen=True)
class Snapshot:
    """One update of a run for the views; ``None`` fields are unchanged since the previous snapshot."""

    run: int
    status: Status
    new_history: dict | None = None  # history rows added since the previous snapshot
    full_history: dict | None = None  # the whole (decimated) history, when decimation rewrote it
    image: np.ndarray | None = None  # the chain shown (``Display``) as a 2-D image
    mean_image: np.ndarray | None = None  # its running mean, when asked for
    hidden_image: np.ndarray | None = None  # an RBM: p(h_j = 1 | v) of the chain shown, as a near-square grid
    adjacency: np.ndarray | None = None  # structure learning: the shown chain's DAG
    diagnostics: dict | None = None
    learning: LearningState | None = None
    adaptation: AdaptationState | None = None
    tempering: TemperingState | None = None
    tuning: TuningState | None = None
    inspection: ProposalInspection | None = None  # the shown chain's last move, when the inspector is open
    opad: OpadSnapshot | None = None
    comparison: ComparisonState | None = None
    frozen: dict | None = None  # once adaptation stopped: {"at_step": n, "sampler_params": {...}}
    beta_changes: tuple | None = None  # ((step, β), …) so far, when the β slider changed it
