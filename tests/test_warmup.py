"""The warm-up (``samplers.common.warmup``, run by ``make`` after an install and by every worker's forkserver) compiles
every kernel signature that a preset's run reaches: a kernel compiled in the middle of a served run stalls that
session for tens of seconds on a loaded machine (a browser test timed out on the particle store's fold)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Run in a fresh interpreter, so that no earlier test has compiled a signature the warm-up lacks.
SCRIPT = textwrap.dedent("""
    import gc, time
    from numba.core.registry import CPUDispatcher
    from samplers.common.warmup import warm_up
    from engine.budget import Budget, check
    from engine.presets import load_presets
    from engine.session import RunSession

    def signatures():
        counts = {}
        for obj in gc.get_objects():
            try:
                if type(obj) is CPUDispatcher:
                    counts[f"{obj.py_func.__module__}.{obj.py_func.__name__}"] = len(obj.signatures)
            except ReferenceError:  # a weak proxy whose object is gone
                pass
        return counts

    warm_up()
    before, compiled = signatures(), []
    for name, preset in load_presets().items():
        config = preset.run_config()
        session = RunSession(config, 1, 1, check(config, Budget()).opad_particles)
        session.step(5)
        deadline = time.monotonic() + 300
        while session.busy and time.monotonic() < deadline:
            session.advance()
        assert session.sampler.n_steps == 5 and not session.failed, (name, session.failed)
        after = signatures()
        compiled += [f"{name}: {kernel}" for kernel, n in after.items() if n > before.get(kernel, 0)]
        before = after
    print("compiled:", "; ".join(compiled) or "none")
""")


def test_after_the_warm_up_no_preset_compiles_a_kernel():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=1200, cwd=ROOT,
                            env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "compiled: none", result.stdout[-3000:]
