"""One run of a bake-off as a sweep ``Task``: one sampler's kernel, tuned one way, on one seed.

``BakeoffRun`` carries the target (``TargetSource``, rebuilt in the worker),
the sampler and its requested parameters, the replicate number, the budget,
its axis, the chains, the statistic and the ``variant`` — which frozen kernel
it measures:

* ``"efficiency"``: the kernel tuned for the ESS of log p̃ per unit of the axis,
  estimated from pilot runs (samplers with a tuned parameter only);
* ``"acceptance"``: the kernel tuned toward 57.4 % acceptance, as DISCS does
  (the same samplers);
* ``"own"``: every other sampler, with its own burn-in (LSB/FLSB learn g)
  or none.

Both tuned variants of a sampler on a replicate run the same acceptance tuning
(its seed comes from the run's description without the variant), so they
differ only in the kernel measured. The tuning budget is ``TUNING_SHARE`` of
the measuring budget, spent before it (``phases``). The result holds the
measured trace, the frozen kernel as JSON (``kernel``: replaying it with
``samplers.make(sampler, target, **kernel)`` builds the same kernel), the
acceptance-tuned kernel, the tuning curve and what the tuning could not do as
planned (``tuning_note``: an acceptance target not reached, no room for the
efficiency search).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from samplers.common.warmup import kernels_ready, warm_up

from ..perform import run_seed
from ..spec import Task
from .phases import KEEP_DRAWS, kernel_record, measure, tune, tuned_parameter
from .source import TargetSource

#: Version of a bake-off run's description and result; part of its hash.
FORMAT = 2
#: The tuning phase's budget, as a share of the measuring budget.
TUNING_SHARE = 0.2
#: The kernels a run can measure (see the module docstring).
VARIANTS = ("efficiency", "acceptance", "own")


def variants(name: str) -> tuple[str, ...]:
    """The variants a sampler is measured in: both tunings if it has a tuned parameter, else its own."""
    return VARIANTS[:2] if tuned_parameter(name) else VARIANTS[2:]


def label(name: str, variant: str) -> str:
    """A row's name in the report."""
    return name if variant == "own" else f"{name} ({variant}-tuned)"


@dataclass(frozen=True, eq=False)
class BakeoffRun(Task):
    """One sampler kernel on one replicate (module docstring)."""

    source: TargetSource
    target_id: dict
    sampler: str
    variant: str
    replicate: int
    budget: float
    axis: str
    chains: int
    statistic: str
    params: dict = field(default_factory=dict)
    label: str = ""

    def description(self) -> dict:
        return {"bakeoff_format": FORMAT, "target": self.target_id, "sampler": self.sampler,
                "params": kernel_record(self.params), "variant": self.variant,
                "replicate": self.replicate, "budget": self.budget, "axis": self.axis, "chains": self.chains,
                "statistic": self.statistic, "tuning_share": TUNING_SHARE, "keep_draws": KEEP_DRAWS}

    @property
    def tuning_id(self) -> str:
        """The id the tuning's seed comes from: the run's, without its variant (shared by both tuned variants)."""
        return dataclasses.replace(self, variant="").run_id

    def perform(self, sweep_seed: int) -> dict:
        if not kernels_ready():
            warm_up()  # load the compiled kernels once per process, before anything is timed
        target = self.source.build()
        tuning = tune(target, self.sampler, self.params, self.chains, run_seed(sweep_seed, self.tuning_id),
                      self.axis, TUNING_SHARE * self.budget, efficiency=self.variant == "efficiency")
        kernel = tuning.efficiency_kernel if self.variant == "efficiency" else tuning.acceptance_kernel
        result = measure(target, self.sampler, kernel, self.chains, run_seed(sweep_seed, self.run_id), self.axis,
                         self.budget, self.statistic)
        return {**result, "spec": json.dumps(self.to_dict(), sort_keys=True), "kernel": json.dumps(kernel),
                "acceptance_kernel": json.dumps(tuning.acceptance_kernel), "tuned_parameter": tuning.parameter,
                "tuning_grid": tuning.grid, "tuning_efficiency": tuning.grid_efficiency,
                "tuning_acceptance": tuning.grid_acceptance, "tuning_used": tuning.used,
                "tuning_evals": tuning.evals, "tuning_note": tuning.note}
