"""ARCHITECTURE.md's "Where to add" for a sampler, tried from scratch: a new module and one registry line, in a copy of
the tree, and nothing else. The conformance suite then checks it, and the dashboard's list, parallel tempering's
bases, the kernel warm-up and the inspector pick it up, with no test or list edited."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A new sampler as a user would write it (random-scan heat bath on one site), with its facts.
TOY_MODULE = '''"""Heat bath on one uniformly drawn site: set x_i to 1 with probability p̃(x_i = 1 | x_−i) (a toy, for the test
that adds a sampler from scratch)."""

from __future__ import annotations

import numpy as np

from samplers.base import ExactCase, Sampler, SamplerFacts
from samplers.diagnostics.inspection import ProposalInspection
from targets.base import flip


class HeatBath(Sampler):
    """Heat bath on one uniformly drawn site."""

    registry_name = "heat_bath"
    facts = SamplerFacts(exact=(ExactCase(), ExactCase(target="boltzmann", target_params={})),
                         warm_up=({},), inspection="single flip")

    def _step(self):
        n = self.n_chains
        idx = self.rng.integers(0, self.target.dim, size=n)
        log_ratio = self.target.flip_log_ratio(self.states, idx, self.log_p)
        accepted = self.rng.random(n) < 1.0 / (1.0 + np.exp(-log_ratio))  # flip with probability t / (1 + t)
        old_bits = self.states[np.arange(n), idx]
        proposed_log_prob = self.log_p + log_ratio
        self._apply_flips(idx, accepted, log_ratio)
        return self._single_flip_record(idx, old_bits, accepted, proposed_log_prob)

    def transition_row(self, x):
        sites = np.arange(x.size)
        batch = np.repeat(x[None, :], x.size, axis=0)
        log_ratio = self.target.flip_log_ratio(batch, sites, self.target.log_prob(batch))
        return self._with_stay(x, flip(batch, sites), 1.0 / (1.0 + np.exp(-log_ratio)) / x.size)

    def describe_move(self, x, proposal, record, chain, common):
        site = common["proposed_sites"][0]
        log_q = np.full(x.size, -np.log(x.size))
        return ProposalInspection(kind="single flip", log_q=log_q, log_q_forward=float(log_q[site]),
                                  log_q_reverse=float(log_q[site]),
                                  acceptance=float(1.0 / (1.0 + np.exp(-common["log_target_ratio"]))), **common)
'''

#: What the rest of the project should learn of it, read in the copy.
PICKED_UP = '''
import dashboard
import samplers
from dashboard.catalogue import samplers_frame
from samplers.common.warmup import _warm_runs
assert "heat_bath" in samplers.ParallelTempering.param.base.objects
assert any(name == "heat_bath" for _, name, _ in _warm_runs())
assert "heat_bath" in samplers_frame().index.tolist() + samplers_frame().iloc[:, 0].tolist()
app = dashboard.create_app()
try:
    assert "heat_bath" in app.controls.sampler.options
finally:
    app.close()
print("picked up")
'''


def test_a_new_sampler_is_its_module_and_one_registry_line_and_the_suite_checks_it(tmp_path):
    root = tmp_path / "tree"
    for path in ("samplers", "targets", "engine", "sweeps", "dashboard", "tests", "assets", "pyproject.toml"):
        copy = shutil.copytree if (ROOT / path).is_dir() else shutil.copy
        copy(ROOT / path, root / path, **({"ignore": shutil.ignore_patterns("__pycache__", "results", "browser")}
                                          if (ROOT / path).is_dir() else {}))
    (root / "samplers" / "local" / "heat_bath.py").write_text(TOY_MODULE, encoding="utf-8")
    registry = root / "samplers" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    text = text.replace("from samplers.local.block_gibbs import BlockGibbs\n",
                        "from samplers.local.block_gibbs import BlockGibbs\nfrom samplers.local.heat_bath import HeatBath\n")
    text = text.replace("SAMPLERS.add(Metropolis,", "SAMPLERS.add(HeatBath, Metropolis,")
    registry.write_text(text, encoding="utf-8")
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                            "tests/test_conformance.py", "-k", "heat_bath"],
                           cwd=root, capture_output=True, text=True, timeout=900)
    assert suite.returncode == 0, suite.stdout[-3000:] + suite.stderr[-2000:]
    assert "\n5 passed" in suite.stdout, suite.stdout[-500:]  # exact ×2, long run, counts, inspector
    picked = subprocess.run([sys.executable, "-c", PICKED_UP], cwd=root, capture_output=True, text=True, timeout=600)
    assert picked.stdout.strip() == "picked up", picked.stdout[-2000:] + picked.stderr[-2000:]
