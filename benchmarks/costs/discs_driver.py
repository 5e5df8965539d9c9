"""DISCS's side of ``discs_vs_ours``: DISCS's own models and samplers, unmodified, timed and traced on one CPU thread.

Run by the python of DISCS's environment (jax 0.4.30, ml-collections, numpy,
flax for the RBM), never by the project's: it imports numpy, jax and DISCS
only. ``python discs_driver.py SPEC.json`` reads the job from SPEC:

* ``reference``: the directory holding DISCS's ``discs`` package;
* ``model``: ``{"kind": "ising", "size": L}`` (DISCS's ``models/ising.py`` with
  its config's λ, μ, σ and its field drawn by ``make_init_params`` from
  ``PRNGKey(seed)``), or ``{"kind": "rbm", "visible": V, "hidden": H}``
  (DISCS's binary ``models/rbm.py`` with the weights its ``make_init_params``
  draws from ``PRNGKey(seed)``);
* ``seed``, ``states`` (an .npz whose ``states`` are the test states of the
  energy-equality check) and ``out`` (the .npz written);
* ``runs``: each ``{"sampler", "chains", "settings", "state", "warm_up",
  "timed", "traced"}`` — DISCS sampler ``sampler`` built from its config in
  ``discs/samplers/configs`` updated with ``settings``, its initial sampler
  state (``make_init_state``) updated with ``state`` (floats as float32,
  integers as int32), on ``chains`` chains from DISCS's initial states, its
  ``step`` jitted as ``discs/experiment/sampling.py`` jits it.

Each run makes ``warm_up`` steps, then ``timed`` steps whose CPU seconds
(``time.process_time``, every step's result blocked on with
``block_until_ready``) give the seconds per step, then ``traced`` steps after
each of which the DISCS model's forward (log p̃) of every chain is recorded
(not timed; the forward is given float32 states, on which DISCS's Ising
computes its couplings exactly). One CPU thread: XLA runs with
``--xla_cpu_multi_thread_eigen=false`` (set by the caller), and its executables
may still split work over a pool of threads, so after the first
``COMPILING_STEPS`` warm-up steps, which compile as on any machine, every
thread of the process is confined to one CPU (``on_cpus``). (Confined from
the start instead, DMALA's step on the 50×50 lattice took 2.7× the CPU time
here; not confined, its threads overlapped and took 1.25× the CPU time.)

Written: the model's parameters as ``param_<name>`` (the Ising's ``params``,
DISCS's ``(3, L, L)`` array of horizontal and vertical couplings −λ and the
field b; the RBM's ``w``, ``b_v``, ``b_h``), the test states' log p̃ (DISCS's
forward on float32 states: ``test_log_prob``), and per run
``{k}_seconds_per_step``, ``{k}_trace`` (traced × chains) and
``{k}_acceptance`` (DISCS's mean acceptance probability over the traced
steps), or ``{k}_error`` for a run that fails.

``discs.common.utils`` imports absl, clu, flax and networkx through
``discs.graph_loader``; the samplers use only its ``copy_pytree``, so a
stand-in module holding that one function is put in its place.
DISCS's ``randomwalk`` casts the states it returns to int32, on which the
Ising forward truncates its ±λ couplings; its steps are therefore fed float32
states (the other samplers take DISCS's int32 states, as ``sampling.py`` does).
"""

import importlib
import json
import os
import sys
import time
import types

import jax
import jax.numpy as jnp
import numpy as np

#: Warm-up steps that run on every CPU (the first compiles, the second too when the first changed the structure of
#: the sampler's state); the rest of the run is confined to one CPU. The caller gives every run more warm-up steps.
COMPILING_STEPS = 2

def install_utils_stand_in():
    """Put a ``discs.common.utils`` holding only ``copy_pytree`` (a copy of every leaf) in ``sys.modules``."""
    import discs.common

    utils = types.ModuleType("discs.common.utils")
    utils.copy_pytree = lambda tree: jax.tree_util.tree_map(jnp.array, tree)
    sys.modules["discs.common.utils"] = utils
    discs.common.utils = utils


def on_cpus(cpus):
    """Let every thread of this process (XLA's pool threads too) run on the CPUs ``cpus`` only."""
    for thread in os.listdir("/proc/self/task"):
        os.sched_setaffinity(int(thread), cpus)


def base_config(model_spec):
    """DISCS's common config with the model's config in it."""
    from discs.common import configs

    config = configs.get_config()
    if model_spec["kind"] == "ising":
        from discs.models.configs import ising_config

        config.model.update(ising_config.get_config())
        config.model.shape = (model_spec["size"], model_spec["size"])
    else:
        visible, hidden = model_spec["visible"], model_spec["hidden"]
        config.model.update(dict(name="rbm", num_categories=2, num_visible=visible, num_hidden=hidden,
                                 shape=(visible,)))
    return config


def build_model(model_spec, config, seed):
    """DISCS's model and its parameters as its ``make_init_params`` draws them from ``PRNGKey(seed)``."""
    model = importlib.import_module(f"discs.models.{model_spec['kind']}").build_model(config)
    return model, model.make_init_params(jax.random.PRNGKey(seed))


def run(model, params, config, spec, seed):
    """One run's seconds per step, trace of log p̃ and mean acceptance (see the module docstring)."""
    config.sampler = importlib.import_module(f"discs.samplers.configs.{spec['sampler']}_config").get_config()
    config.sampler.update(spec["settings"])
    sampler = importlib.import_module(f"discs.samplers.{spec['sampler']}").build_sampler(config)
    as_float = spec["sampler"] == "randomwalk"

    def step(rng, x, model_param, state):
        return sampler.step(model=model, rng=rng, x=x.astype(jnp.float32) if as_float else x,
                            model_param=model_param, state=state)

    compiled = jax.jit(step)
    forward = jax.jit(model.forward)
    rng_x0, rng_state, rng_steps = jax.random.split(jax.random.PRNGKey(seed), 3)
    x = model.get_init_samples(rng_x0, spec["chains"])
    state = sampler.make_init_state(rng_state)
    for key, value in spec["state"].items():
        state[key] = jnp.asarray(value, dtype=jnp.float32 if isinstance(value, float) else jnp.int32)
    total = spec["warm_up"] + spec["timed"] + spec["traced"]
    keys = list(jax.random.split(rng_steps, total))
    every_cpu = os.sched_getaffinity(0)
    try:
        for k in range(spec["warm_up"]):
            x, state, _ = compiled(keys[k], x, params, state)
            if k == COMPILING_STEPS - 1:
                on_cpus({max(every_cpu)})
        x.block_until_ready()
        start = time.process_time()
        for k in range(spec["warm_up"], spec["warm_up"] + spec["timed"]):
            x, state, _ = compiled(keys[k], x, params, state)
            x.block_until_ready()
        seconds = (time.process_time() - start) / spec["timed"]
        trace, acceptance = [], []
        for k in range(spec["warm_up"] + spec["timed"], total):
            x, state, acc = compiled(keys[k], x, params, state)
            trace.append(np.asarray(forward(params, x.astype(jnp.float32))))
            acceptance.append(float(acc))
    finally:
        on_cpus(every_cpu)
    return seconds, np.array(trace), float(np.mean(acceptance))


def main(spec_path):
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    sys.path.insert(0, spec["reference"])
    install_utils_stand_in()
    config = base_config(spec["model"])
    model, params = build_model(spec["model"], config, spec["seed"])
    out = {f"param_{name}": np.asarray(value) for name, value in params.items()}
    with np.load(spec["states"]) as states:
        test = states["states"].reshape((-1,) + tuple(config.model.shape)).astype(np.float32)
    out["test_log_prob"] = np.asarray(jax.jit(model.forward)(params, jnp.asarray(test)))
    for k, job in enumerate(spec["runs"]):
        print(f"DISCS {job['sampler']}, {job['chains']} chains: {job['warm_up']} + {job['timed']} + "
              f"{job['traced']} steps", flush=True)
        try:
            seconds, trace, acceptance = run(model, params, config, job, spec["seed"])
        except Exception as error:  # a sampler DISCS ships that does not run on this model: reported, not fatal
            out[f"{k}_error"] = np.array(f"{type(error).__name__}: {error}")
            continue
        out[f"{k}_seconds_per_step"] = np.array(seconds)
        out[f"{k}_trace"] = trace
        out[f"{k}_acceptance"] = np.array(acceptance)
    np.savez(spec["out"], **out)


if __name__ == "__main__":
    main(sys.argv[1])
