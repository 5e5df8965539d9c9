"""The dashboard's views without a server: the periodic flush is driven by hand, the worker runs in-process.

What a view draws is compared with the same configuration run headless
(``RunConfig.build`` and ``step``), so these tests also check that a run in
the worker is the run its configuration describes.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from types import SimpleNamespace

import numpy as np
import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.models import ColorBar, GlyphRenderer, Plot

import targets
from dashboard.preset_picker import CUSTOM_RUN, DEFAULT_RUN, NOT_LOADED, comparable_presets
from dashboard.explorer import Explorer, open_link
from dashboard.views.adaptation import AdaptationView
from dashboard.views.balancing import BalancingView
from dashboard.views.dag import DagView
from dashboard.views.diagnostics import DiagnosticsView
from dashboard.views.inclusion import InclusionView
from dashboard.views.inspector import RING_COLOUR, InspectorView, describe, marks, proposal_picture
from dashboard.views.kl import FLOOR, SHORT, KLView
from dashboard.views.lattice import STATE_COLOURS, WALK_COLOURS, LatticeView, state_key
from dashboard.views.tempering import TemperingView
from dashboard.views.traces import WAITING, TraceView
from dashboard.views.tuning import TuningView
from engine.config import RunConfig
from engine.images import as_image, cell_centres, site_name, step_labels
from engine.links import link_query
from engine.presets import load_presets, run_key
from engine.session import ESS_DEFINITIONS
from engine.opad_tracker import OpadSnapshot
from engine.session import READY
from engine.snapshot import KINDS, RunInfo, TuningState
from samplers.diagnostics.inspection import ProposalInspection
from tests.explorer_driver import TIMEOUT, advance, applied, built, card
from tests.explorer_driver import make_explorer as explorer_for
from tests.explorer_driver import settle, shown, upload, view
from tests.tiny import TINY_UAI


def make_config(**overrides) -> RunConfig:
    values = dict(target="ising_segmentation", target_params={"size": 10}, sampler="locally_balanced",
                  sampler_params={"balancing": "sqrt"}, n_chains=4, seed=1, statistic="agreement")
    values.update(overrides)
    return RunConfig(**values)


def make_explorer(**overrides) -> Explorer:
    return explorer_for(make_config(**overrides))


def headless_states(config: RunConfig, n: int) -> np.ndarray:
    """The states of the same configuration after ``n`` steps, run without the dashboard."""
    _, sampler = config.build()
    for _ in range(n):
        sampler.step(record=False)
    return sampler.states


def figures_shown(live_view) -> list[str]:
    """The titles of the figures a view's layout holds and shows, in order."""
    panes = live_view.__panel__().select(pn.pane.Bokeh)
    return [pane.object.title.text for pane in panes if pane.visible and pane.object.visible]


@pytest.fixture
def explorer():
    app = make_explorer()
    yield app
    app.close()


def test_flush_moves_steps_into_status_lattice_and_traces(explorer):
    advance(explorer, 25)
    settle(explorer, lambda: "steps 25 ·" in explorer.controls.runs.status.object)
    traces = view(explorer, TraceView)
    assert list(traces.source.data["step"]) == list(range(26))
    statistic = explorer.client.history["statistic"]
    np.testing.assert_array_equal(traces.source.data["st0"], statistic[:, 0])
    # every chain counts in the mean and the band, not only those drawn singly
    np.testing.assert_allclose(traces.source.data["st_mean"], statistic.mean(axis=1))
    np.testing.assert_allclose(traces.source.data["st_low"], np.percentile(statistic, 10, axis=1))
    image = view(explorer, LatticeView)._state.source.data["image"][0]
    np.testing.assert_array_equal(image, headless_states(explorer.client.config, 25)[0].reshape(10, 10))
    advance(explorer, 5)
    assert list(traces.source.data["step"]) == list(range(31))


def test_a_preset_not_yet_loaded_says_it_is_not_the_run_shown(explorer):
    controls = explorer.controls
    settle(explorer, lambda: built(explorer.client))
    name = next(iter(controls.presets._presets))
    assert controls.presets.preset.value == name
    assert explorer.client.config.to_dict() != controls.presets._presets[name].run_config().to_dict()
    assert NOT_LOADED in controls.presets.preset_info.object  # the page opens on another run than this preset
    controls.presets.load_preset.clicks += 1
    settle(explorer, lambda: built(explorer.client) and NOT_LOADED not in controls.presets.preset_info.object)
    config = explorer.client.config
    applied(explorer, RunConfig.from_dict({**config.to_dict(), "seed": config.seed + 1}))
    settle(explorer, lambda: NOT_LOADED in controls.presets.preset_info.object)
    assert controls.presets.preset_info.object.startswith(f"**{CUSTOM_RUN}**")


def test_the_presets_a_run_is_compared_with_are_made_once_per_server_and_never_run(explorer):
    """Every page compares its run with the same preset configurations; Load preset runs a fresh one (a live β
    would change the run's own, never the shared one)."""
    compared = comparable_presets()
    assert comparable_presets() is compared
    controls = explorer.controls
    name = controls.presets.preset.value
    controls.presets.load_preset.clicks += 1
    settle(explorer, lambda: built(explorer.client) and NOT_LOADED not in controls.presets.preset_info.object)
    assert explorer.client.config is not compared[name].run_config()
    assert run_key(explorer.client.config) == run_key(compared[name].run_config())


def test_the_page_opening_on_its_default_run_says_so_not_that_it_is_a_custom_run():
    app = explorer_for(RunConfig())
    try:
        info = app.controls.presets.preset_info.object
        assert info.startswith(f"**{DEFAULT_RUN}**") and CUSTOM_RUN not in info and NOT_LOADED in info
    finally:
        app.close()


@pytest.mark.parametrize("seed", [0, 1])
def test_a_link_opens_under_its_own_preset_or_says_it_is_a_custom_run(seed):
    name = "Segmentation case 3 (dependent, noisy) · g = √t"  # the first preset is case 1: λ = 0, not 1
    preset = load_presets()[name]
    app = open_link(link_query(RunConfig.from_dict({**preset.config, "seed": seed})))  # seed 0: the preset's
    try:
        settle(app, lambda: built(app.client))
        info = app.controls.presets.preset_info.object
        if seed:
            assert info.startswith(f"**{CUSTOM_RUN}**") and NOT_LOADED in info
        else:
            assert app.controls.presets.preset.value == name and preset.description in info
            assert NOT_LOADED not in info and CUSTOM_RUN not in info
    finally:
        app.close()


def test_a_preset_meant_to_show_a_failure_says_so_and_a_run_that_barely_moves_is_flagged(explorer):
    controls = explorer.controls
    name = next(name for name, preset in controls.presets._presets.items() if preset.shows_failure
                and preset.config["target"] == "spin_glass_3d")
    failure = controls.presets._presets[name].shows_failure
    controls.presets.preset.value = name
    assert "Meant to show a failure:** " + failure in controls.presets.preset_info.object
    controls.presets.load_preset.clicks += 1
    settle(explorer, lambda: built(explorer.client) and explorer.client.config.target == "spin_glass_3d")
    settle(explorer, lambda: "this preset shows a failure:</b> " + failure in controls.runs.status.object)
    # the same settings with another seed are no longer the preset, and the status reads the run's own acceptance
    config = explorer.client.config
    applied(explorer, RunConfig.from_dict({**config.to_dict(), "seed": config.seed + 1, "compare_sampler": ""}))
    settle(explorer, lambda: "steps 0 ·" in controls.runs.status.object)
    assert ("preset shows a failure" not in controls.runs.status.object
            and "barely moves" not in controls.runs.status.object)
    advance(explorer, 1000)
    settle(explorer, lambda: "<b>⚠ the chain barely moves</b> (acceptance 0)" in controls.runs.status.object)


def test_lattice_shows_the_chosen_chain_and_segmentation_inputs(explorer):
    advance(explorer, 3)
    lattice = view(explorer, LatticeView)
    lattice.chain.value = 2
    expected = headless_states(explorer.client.config, 3)[2].reshape(10, 10)
    settle(explorer, lambda: np.array_equal(lattice._state.source.data["image"][0], expected))
    assert list(lattice._figures) == [lattice._state.pane, lattice._inputs]  # the inputs as a pair, small
    assert [pane.object.title.text for pane in lattice._inputs] == ["ground truth", "observation y"]
    assert "y from −" in lattice.key.object  # the key names the observation's grey scale too
    lattice.show_mean.value = True
    titles = [pane.object.title.text for pane in lattice._figures[:2]]
    assert titles == ["current state", "running mean"]
    settle(explorer, lambda: np.isfinite(lattice._mean.source.data["image"][0]).all())
    mean = lattice._mean.source.data["image"][0]
    assert np.all((mean >= 0) & (mean <= 1))


def test_a_3d_lattice_is_drawn_slice_by_slice():
    app = make_explorer(target="ising_lattice", target_params={"size": 4, "ndim": 3}, statistic="magnetisation")
    try:
        advance(app, 2)
        lattice = view(app, LatticeView)
        assert lattice.depth.visible and lattice.depth.end == 3
        lattice.depth.value = 2
        expected = headless_states(app.client.config, 2)[0].reshape(4, 4, 4)[2]
        settle(app, lambda: np.array_equal(lattice._state.source.data["image"][0], expected))
    finally:
        app.close()


def test_other_targets_are_drawn_as_a_grid_of_bits():
    image = as_image(np.arange(7) % 2, None)
    assert image.shape == (3, 3) and np.isnan(image[2, 1:]).all()


def test_bits_placed_by_position_are_drawn_and_outlined_in_their_cells():
    positions = np.array([1, 2, 3, 5, 6, 7])  # a 3-node DAG's off-diagonal cells
    image = as_image(np.array([1, 0, 0, 1, 1, 0]), (3, 3), positions=positions)
    np.testing.assert_array_equal(np.isnan(image), np.eye(3, dtype=bool))
    x, y = cell_centres(np.array([0, 3]), (3, 3), 6, positions=positions)
    assert list(zip(x, y)) == [(1.5, 0.5), (2.5, 1.5)]  # bit 0 is edge 0 → 1, bit 3 edge 1 → 2
    x, y = cell_centres(np.array([1, 17, 20]), (3, 3, 3), 27, depth=1)  # a 3-D lattice: the shown slice's only
    assert list(zip(x, y)) == [(2.5, 2.5)]


def test_an_rbm_is_drawn_as_its_visible_image_beside_its_hidden_units():
    target = targets.make("gabor_rbm", side=6, n_hidden=10, patch=3)
    assert target.image_shape == (6, 6 + 1 + 2)  # the 6 × 6 image, an empty column, 10 hidden units in 6 × 2
    x = np.random.default_rng(0).integers(0, 2, target.dim).astype(np.uint8)
    image = as_image(x, target.image_shape, positions=target.image_positions)
    np.testing.assert_array_equal(image[:, :6], x[:36].reshape(6, 6))
    assert np.isnan(image[:, 6]).all()
    np.testing.assert_array_equal(image[:, 7:].ravel()[:10], x[36:])
    assert np.isnan(image[:, 7:].ravel()[10:]).all()
    app = make_explorer(target="gabor_rbm", target_params={"side": 6, "n_hidden": 10, "patch": 3},
                        sampler="metropolis", sampler_params={}, n_chains=2, statistic="log_prob")
    try:  # the state card titles both blocks under them
        state = view(app, LatticeView)._state
        assert state.part_titles.data["text"] == ["visible v: 6 × 6 pixels", "hidden h: 10 units"]
        assert state.part_titles.data["x"] == [3.0, 8.0]
        assert state.figure.y_range.start > 6 == state.glyph.dh  # room under the blocks for their titles
        settle(app, lambda: np.array_equal(np.isnan(state.source.data["image"][0]), np.isnan(image)))
    finally:
        app.close()


def test_sites_are_named_as_the_picture_shows_them():
    gabor = targets.make("gabor_rbm", side=6, n_hidden=10, patch=3)
    named = [site_name(site, gabor.image_shape, gabor.image_positions, gabor.image_axes) for site in (8, 36, 45)]
    assert named == ["pixel (1, 2)", "hidden unit 0", "hidden unit 9"]
    dag = targets.make("dag", n_nodes=3)
    assert site_name(0, dag.image_shape, dag.image_positions, dag.image_axes) == "edge X0 → X1"
    assert site_name(14, (30, 30)) == "site (0, 14)" and site_name(31, (30, 30)) == "site (1, 1)"
    assert site_name(40, (6, 6, 6)) == "site (1, 0, 4)" and site_name(4, (1, 15)) == "spin 4"
    assert site_name(4, None) == "bit 4"


def test_colour_keys_name_the_states_values():
    assert "variable false (x = 0)" in state_key("markov_network") and "x = 0: 0" not in state_key("markov_network")
    assert "unit on (x = 1)" in state_key("from_log_prob") and "y from" not in state_key("from_log_prob")
    segmentation = state_key("ising_segmentation", observation_spread=12_345.678)
    assert "object (x = 1)" in segmentation and "y from −12,346 to 12,346" in segmentation


def lattice_info(side: int = 4) -> RunInfo:
    """What the views know of a run on a ``side`` × ``side`` lattice."""
    return RunInfo(run=0, request=0, sampler="intracluster", target_name="ising_lattice", dim=side * side,
                   n_chains=1, image_shape=(side, side), image_positions=None, image_axes=None, capabilities=None,
                   statistic="log_prob", opad_problem="")


def move(kind: str, path=None, sites=(0,), log_q=None) -> ProposalInspection:
    return ProposalInspection(kind=kind, step=3, before=np.zeros(16, dtype=np.uint8),
                              proposed_sites=np.array(sites), accepted=False, log_target_ratio=0.0, log_q=log_q,
                              path=None if path is None else np.array(path))


def test_walks_are_numbered_in_order_in_two_colours_apart_from_the_states():
    sites, labels = step_labels(np.array([5, 6, 7, 6]), first_step=1)
    assert sites.tolist() == [5, 6, 7] and labels == ["1", "2, 4", "3"]  # a site flipped twice has both numbers
    walk = marks(move("walk", path=[5, 6, 7, 6, 1, 2]), lattice_info())
    assert walk["label"] == ["1", "2", "3", "4", "5", "6"]
    assert walk["colour"] == [WALK_COLOURS[0]] * 3 + [WALK_COLOURS[1]] * 3
    assert len(set(WALK_COLOURS)) == 2 and not set(WALK_COLOURS) & set(STATE_COLOURS)
    assert (walk["x"][3], walk["y"][3]) == (2.8, 1.8)  # site 6 = (1, 2), flipped by both walks: the second moves off
    text = describe(move("walk", path=[5, 6, 7, 6, 1, 2]), lambda site: site_name(site, (4, 4)))
    assert "First walk (red, 1–3) site (1, 1) → site (1, 2) → site (1, 3)" in text


def test_a_path_is_numbered_and_proposed_sites_are_ringed_in_a_contrasting_colour():
    path = marks(move("path", path=[9, 3], log_q=np.linspace(-3, -1, 16)), lattice_info())
    assert path["label"] == ["1", "2"] and len(set(path["colour"])) == 1 and path["fill_alpha"] == [1.0, 1.0]
    rings = marks(move("single flip", sites=[6], log_q=np.linspace(-3, -1, 16)), lattice_info())
    assert rings["colour"] == [RING_COLOUR] and rings["fill_alpha"] == [0.0] and rings["label"] == [""]
    assert RING_COLOUR not in STATE_COLOURS
    assert "Path of 1 flip " in describe(move("path", path=[9], log_q=np.linspace(-3, -1, 16)))


def test_a_uniform_proposal_shows_the_state_not_a_flat_map():
    uniform = move("single flip", sites=[6], log_q=np.full(16, -np.log(16)))
    assert proposal_picture(uniform) is None
    text = describe(uniform, lambda site: site_name(site, (4, 4)))
    assert "flip site (1, 2)" in text and "same chance 1/16" in text
    peaked = move("single flip", sites=[6], log_q=np.log(np.arange(1, 17) / 136))
    np.testing.assert_allclose(10 ** proposal_picture(peaked), np.arange(1, 17) / 136)


@pytest.mark.parametrize("target, selector, value, shown, hidden", [
    ("bvs", "dataset", "diabetes", {"a", "rho"}, {"n_predictors", "n_samples"}),
    ("dag", "score", "bdeu", {"equivalent_sample_size"}, {"am", "aw"}),
])
def test_a_form_shows_only_the_parameters_that_apply(explorer, target, selector, value, shown, hidden):
    explorer.controls.target.value = target
    form = explorer.controls._target_forms[target]
    assert all(form.widgets[name].visible for name in hidden)
    form.widgets[selector].value = value
    assert all(form.widgets[name].visible for name in shown) and not any(form.widgets[name].visible
                                                                         for name in hidden)


def test_the_trace_says_how_to_start_until_the_first_step(explorer):
    traces = view(explorer, TraceView)
    assert traces._log_prob_figure.title.text == WAITING
    advance(explorer, 2)
    settle(explorer, lambda: traces._log_prob_figure.title.text == "")
    before = explorer.client.info
    explorer.client.reset()  # a new run, with a view of its own
    settle(explorer, lambda: explorer.client.info is not before
           and view(explorer, TraceView)._log_prob_figure.title.text == WAITING)


def test_x_axis_toggle_switches_to_evaluations(explorer):
    traces = view(explorer, TraceView)
    traces.x_axis.value = "target evaluations"
    glyphs = [r.glyph for fig in traces._figures for r in fig.renderers]
    assert glyphs and all(glyph.x == "n_evals" for glyph in glyphs)


def test_views_that_do_not_apply_are_hidden(explorer):
    assert card(explorer, BalancingView).visible
    applied(explorer, RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
    assert not card(explorer, BalancingView).visible
    traces = view(explorer, TraceView)  # the statistic is log p̃ itself: one trace plot
    assert traces._statistic_figure is None and len(figures_shown(traces)) == 1


def test_many_sessions_refresh_less_often_so_the_server_keeps_time_for_clicks():
    from dashboard.explorer import MAX_FAIR_MS, SERVER_SHARE, fair_period
    assert fair_period(100, 1, 0.01) == 100  # one session: its own setting
    assert fair_period(100, 30, 0.01) == round(1000 * 30 * 0.01 / SERVER_SHARE)  # 30 × 10 ms within the share
    assert fair_period(500, 4, 0.01) == 500
    # a window that held the building of many pages costs seconds per flush: the period stays bounded, so every
    # session flushes (and reads the load again) within MAX_FAIR_MS
    assert fair_period(100, 30, 1.0) == MAX_FAIR_MS and fair_period(5000, 30, 1.0) == 5000


def test_the_server_load_is_the_flushing_threads_cpu_time_per_flush_including_what_follows_a_flush():
    import threading

    from dashboard.explorer import ServerLoad

    load = ServerLoad(window_seconds=0.0)
    started = time.thread_time()
    while time.thread_time() - started < 0.02:  # work between flushes (serialising, building a page) counts
        pass
    load.count_flush()
    assert load.cost >= 0.02
    other = threading.Thread(target=load.count_flush)  # a flush on another thread starts a window there
    other.start()
    other.join()
    assert load._thread == other.ident


def test_views_are_built_only_when_a_run_needs_them(explorer):
    assert DagView not in explorer.views and InclusionView not in explorer.views
    assert not len(explorer.catalogue)
    explorer.catalogue.collapsed = False
    assert len(explorer.catalogue) == 1 and "Tabulator" in repr(explorer.catalogue[0])


@pytest.mark.parametrize("name", list(load_presets()))
def test_a_page_holds_no_figure_or_line_it_does_not_show(name):
    """Every figure and glyph of a preset's page shows: none is made hidden for a run that never draws it (each
    figure is some forty models the server builds and sends and the browser lays out)."""
    app = explorer_for(load_presets()[name].run_config())
    try:
        with pn.io.hold():  # no document events: only the models are wanted
            root = pn.panel(app).get_root(Document())
        hidden = [f"{type(model).__name__} {getattr(getattr(model, 'title', None), 'text', '')}"
                  for model in root.references() if isinstance(model, (Plot, GlyphRenderer)) and not model.visible]
        assert hidden == [], name
    finally:
        app.close()


def test_a_new_run_gets_views_of_its_own_and_the_old_ones_let_go(explorer):
    old_lattice, old_traces = view(explorer, LatticeView), view(explorer, TraceView)
    config = RunConfig(target="ising_lattice", target_params={"size": 6}, n_chains=2, sampler="gibbs",
                       statistic="magnetisation")
    applied(explorer, config)
    lattice, traces = view(explorer, LatticeView), view(explorer, TraceView)
    assert lattice is not old_lattice and traces is not old_traces
    assert old_lattice._client_watchers == []  # a slow-motion move of the new run never reaches the old view
    assert lattice._state.glyph.dw == 6 and len(lattice._figures) == 1
    assert [r.visible for r in traces.chain_lines[0]] == [True, True]  # two chains drawn singly
    advance(explorer, 3)
    np.testing.assert_array_equal(lattice._state.source.data["image"][0],
                                  headless_states(config, 3)[0].reshape(6, 6))
    assert list(traces.source.data["step"]) == [0, 1, 2, 3]


def test_balancing_view_draws_the_samplers_function(explorer):
    balancing = view(explorer, BalancingView)
    data = balancing.curve_source.data
    np.testing.assert_allclose(data["g"], np.sqrt(data["t"]), rtol=1e-12)
    # a fixed function: no learning traces or controls
    assert figures_shown(balancing) == ["balancing function g(t)"]
    assert not balancing.freeze_button.visible


def test_learning_view_follows_lsb_and_freeze_now_stops_it():
    app = make_explorer(sampler="lsb", sampler_params={"parametrization": "lsb1", "burn_in": 500}, n_chains=4)
    try:
        balancing = view(app, BalancingView)
        assert figures_shown(balancing) == ["balancing function g(t)", "objective L̂ (Eq. 5)", "η",
                                            "LSB1 weights softmax(θ)"]
        advance(app, 30)
        settle(app, lambda: len(balancing.history_source.data["step"]) == 30)
        first_curve = np.array(balancing.curve_source.data["g"])
        history = balancing.history_source.data
        assert list(history["step"]) == list(range(30))
        assert np.all(np.isfinite(history["loss"])) and np.all(np.isfinite(history["w_sqrt"]))
        assert "learning" in balancing.status.object and not balancing.freeze_button.disabled
        advance(app, 30)
        settle(app, lambda: len(balancing.history_source.data["step"]) == 60)
        assert not np.array_equal(balancing.curve_source.data["g"], first_curve)  # g(t) is redrawn as it learns
        assert not any(marker.visible for marker in balancing.frozen_markers)
        balancing.freeze_button.clicks += 1
        settle(app, lambda: "frozen</b> at step 60" in balancing.status.object)
        assert all(marker.visible and marker.location == 60 for marker in balancing.frozen_markers)
        assert balancing.freeze_button.disabled
        frozen_curve = np.array(balancing.curve_source.data["g"])
        advance(app, 10)
        np.testing.assert_array_equal(balancing.curve_source.data["g"], frozen_curve)
        # the download records the requested settings and the frozen kernel, and loads back as the same run
        record = json.loads(asyncio.run(app.controls.sharing._config_file()).read())
        assert record["sampler_params"] == {"parametrization": "lsb1", "burn_in": 500}
        assert record["frozen"]["at_step"] == 60 and record["frozen"]["sampler_params"]["burn_in"] == 0
        assert set(record["frozen"]["sampler_params"]["theta"]) and RunConfig.from_dict(record).sampler == "lsb"
    finally:
        app.close()


def test_keep_adapting_shows_a_warning_and_lsb2_has_no_weights_panel():
    app = make_explorer(sampler="lsb", sampler_params={"parametrization": "lsb2", "keep_adapting": True}, n_chains=2)
    try:
        balancing = view(app, BalancingView)
        advance(app, 5)
        settle(app, lambda: "adaptive MCMC" in balancing.status.object)
        assert figures_shown(balancing) == ["balancing function g(t)", "objective L̂ (Eq. 5)", "η"]
        assert np.all(np.isnan(balancing.history_source.data["w_sqrt"]))
    finally:
        app.close()


def test_learning_history_is_thinned_for_display():
    from dashboard.views.balancing import thinned
    history = {"step": np.arange(5000.0), "loss": np.zeros(5000)}
    small = thinned(history, max_points=100)
    assert len(small["step"]) <= 101 and small["step"][-1] == 4999 and small["step"][0] == 0


def test_diagnostics_table_fills_after_a_run(explorer):
    advance(explorer, 200)
    diagnostics = view(explorer, DiagnosticsView)
    settle(explorer, lambda: len(diagnostics._table.object) and diagnostics._table.object["value"][0] == "201")
    rates = ("per step", "per 1000 evaluations", "per second")
    assert list(diagnostics._table.object["diagnostic"]) == ["window (steps)", "acceptance", "R-hat"] + [
        name + suffix for name in ESS_DEFINITIONS for suffix in ("", *(f" {rate}" for rate in rates))]
    values = dict(zip(diagnostics._table.object["diagnostic"], diagnostics._table.object["value"]))
    assert " ± " in values[ESS_DEFINITIONS[1]] and " ± " in values[ESS_DEFINITIONS[2]]


def test_the_diagnostics_say_what_an_ess_above_the_draws_and_a_high_rhat_mean():
    from dashboard.views.diagnostics import notes
    wolff = {"window (steps)": 884, ESS_DEFINITIONS[0]: 5177.3, "R-hat": 1.2301}  # as the issue saw Wolff's
    antithetic, disagreeing = notes(wolff, 4)
    assert antithetic.startswith("ESS 5177 is more than the 884 × 4 = 3,536 draws") and "negatively" in antithetic
    assert disagreeing.startswith("R-hat 1.23 is above 1.01") and "4 chains do not yet agree" in disagreeing
    assert notes({"window (steps)": 884, ESS_DEFINITIONS[0]: 900.0, "R-hat": 1.01004}, 4) == []  # R̂ reads "1.01"
    assert notes({"window (steps)": 1, ESS_DEFINITIONS[0]: float("nan"), "R-hat": float("nan")}, 4) == []


def test_invalid_settings_show_a_message_and_keep_the_run(explorer):
    advance(explorer, 10)
    controls = explorer.controls
    controls.target.value = "markov_network"
    controls.sampler.value = "gwg"
    controls.apply()
    settle(explorer, lambda: controls.runs.alert.visible)
    assert "differentiable" in controls.runs.alert.object
    assert explorer.client.config.target == "ising_segmentation" and explorer.client.status.n_steps == 10
    controls.sampler.value = "metropolis"
    assert controls.apply()
    settle(explorer, lambda: explorer.client.info.target_name == "markov_network")
    assert not controls.runs.alert.visible


def test_presets_load_into_the_widgets(explorer):
    controls = explorer.controls
    controls.presets.preset.value = "OPAD Fig. 1 · 1-D Ising chain · Metropolis"
    controls.presets._on_load_preset()
    settle(explorer, lambda: controls.target.value == "ising1d")
    assert controls.sampler.value == "metropolis"
    assert explorer.client.config.n_chains == 20 and controls.n_chains.value == 20
    assert controls.draft().to_dict() == explorer.client.config.to_dict()
    controls.presets.preset.value = ("OPAD Fig. 1 · 1-D Ising chain · locally balanced √t, "
                                     "OPAD+ with every scored neighbour")
    controls.presets._on_load_preset()
    settle(explorer, lambda: controls.opad_neighbours.value)
    assert explorer.client.info.capabilities.records_neighbours
    assert controls.draft().to_dict() == explorer.client.config.to_dict()


def test_parallel_tempering_shows_its_base_samplers_parameters(explorer):
    controls = explorer.controls
    controls.presets.preset.value = next(name for name in controls.presets._presets if name.startswith("Tempering ·"))
    controls.presets._on_load_preset()
    settle(explorer, lambda: controls.sampler.value == "parallel_tempering")
    form = controls._sampler_forms["parallel_tempering"]
    assert form.widgets["base"].value == "metropolis" and form.widgets["n_replicas"].value == 8
    form.widgets["base"].value = "dmala"
    nested = form._nested_form()
    assert "step_size" in nested.widgets and "burn_in" in nested.widgets and "n_chains" not in nested.widgets
    nested.widgets["step_size"].value = 0.8
    draft = controls.draft()
    assert draft.sampler_params["base"] == "dmala" and draft.sampler_params["base_params"] == {"step_size": 0.8}
    assert controls.apply(draft)
    settle(explorer, lambda: explorer.client.config is draft and explorer.client.info is not None
           and explorer.client.info.sampler == "parallel_tempering")
    assert not controls.runs.alert.visible
    nested.widgets["burn_in"].value = 100  # a kernel still adapting cannot be tempered: refused in the page
    controls.apply()
    settle(explorer, lambda: controls.runs.alert.visible)
    assert "fixed kernel in every replica" in controls.runs.alert.object


def test_upload_and_configuration_import(explorer):
    controls = explorer.controls
    controls.target.value = "markov_network"
    controls.sampler.value = "gibbs"
    upload(controls.upload, "tiny.uai", TINY_UAI.encode())
    settle(explorer, lambda: explorer.client.info.dim == 6)
    assert "tiny.uai" in controls.upload_note.object
    upload(controls.upload, "broken.uai", b"MARKOV\n2\n2 2\n1\n1 7\n")
    assert "line" in controls.runs.alert.object and explorer.client.info.dim == 6
    exported = asyncio.run(controls.sharing._config_file()).read().decode()
    upload(controls.sharing.import_config, "broken.json", b"{broken")
    assert "not valid JSON" in controls.runs.alert.object
    upload(controls.sharing.import_config, "run.json", exported.encode())
    settle(explorer, lambda: not controls.runs.alert.visible and explorer.client.config.to_json() == exported)


def test_a_run_stored_by_a_sweep_opens_and_replays_its_trace(explorer, tmp_path):
    from sweeps import RunSpec, Sweep, run_sweep

    spec = RunSpec(make_config(), steps=12, trace_points=13)
    report = run_sweep(Sweep("class", 3, (spec,)), tmp_path, workers=0, progress=False)
    upload(explorer.controls.sharing.import_config, "run.npz", report.store.path(spec.run_id).read_bytes())
    stored = report.store.read(spec.run_id)
    settle(explorer, lambda: explorer.client.config.seed == stored["sampler_seed"] and built(explorer.client))
    advance(explorer, 12)
    np.testing.assert_array_equal(explorer.client.history["log_prob"], stored["trace_log_prob"])


def test_a_file_over_the_limit_is_refused_in_the_browser_with_its_size(explorer):
    controls = explorer.controls
    controls.upload.refused = {"name": "huge.npz", "size": 15_000_000, "serial": 1}
    assert controls.runs.alert.visible
    assert "huge.npz is 15 MB" in controls.runs.alert.object and "10 MB" in controls.runs.alert.object


def test_traces_download_is_csv(explorer):
    advance(explorer, 4)
    text = explorer.controls.sharing._traces_file().read()
    assert text.splitlines()[0].startswith("step,n_evals,seconds,log_prob_0")
    assert len(text.strip().splitlines()) == 6


def test_close_stops_the_worker():
    app = make_explorer()
    app.client.start()
    engine = app.client.engine
    app.close()
    assert not app.client.worker_alive and engine.n_workers == 0


def test_kl_view_draws_every_chain_and_the_band_of_the_three_approximations():
    app = make_explorer(target="ising1d", target_params={"m": 8}, sampler="metropolis", sampler_params={},
                        n_chains=5, statistic="log_prob")
    try:
        kl = view(app, KLView)
        assert "No KL curve" not in kl.status.object
        snapshots = []
        app.client.step(300)
        end = time.monotonic() + TIMEOUT
        while "step 300" not in kl.status.object:
            for snapshot in app.client.poll():
                snapshots.append(snapshot)
                kl.update(snapshot)
            assert time.monotonic() < end
            time.sleep(0.01)
        opad = [s.opad for s in snapshots if s.opad is not None][-1]
        for kind in ("mcmc", "opad", "opad_plus"):
            lines = kl.line_sources[kind].data
            assert len(lines["y"]) == 5 * (len(opad.steps) + 1)  # five chains' curves, each ended by a break
            np.testing.assert_array_equal(np.isnan(lines["y"]), np.isnan(lines["x"]))
            assert np.isnan(lines["y"]).sum() == 5
            band = {key: np.asarray(column, dtype=float) for key, column in kl.band_sources[kind].data.items()}
            assert np.all(band["lower"] <= band["mean"] + 1e-15) and np.all(band["mean"] <= band["upper"] + 1e-15)
            np.testing.assert_allclose(band["mean"], np.maximum(opad.kl[kind][:, :5], 1e-10).mean(axis=1))
        assert "MCMC/OPAD" in kl.status.object
        applied(app, RunConfig(target="ising_segmentation", target_params={"size": 6}, sampler="metropolis",
                               statistic="log_prob"))
        kl = view(app, KLView)  # the new run's own view: why there is no curve, and no figure
        assert figures_shown(kl) == [] and "d = 36" in kl.status.object
    finally:
        app.close()


def test_inclusion_view_shows_four_bars_per_predictor_and_the_true_model():
    app = make_explorer(target="bvs", target_params={"n_predictors": 6, "n_samples": 40}, sampler="gibbs",
                        sampler_params={}, n_chains=4, statistic="log_prob")
    try:
        inclusion = view(app, InclusionView)
        assert shown(app, InclusionView) and not shown(app, DagView)
        # the state: one row of cells named by the predictors
        state = view(app, LatticeView)._state
        assert state.figure.x_range.end == 6 and state.figure.y_range.start == 1
        assert state.figure.xaxis[0].visible and not state.figure.yaxis[0].visible
        assert list(state.figure.xaxis[0].major_label_overrides.values()) == [f"x{j}" for j in range(6)]
        advance(app, 200)
        settle(app, lambda: "largest error" in inclusion.status.object)
        np.testing.assert_array_equal(state.source.data["image"][0], headless_states(app.client.config, 200)[:1])
        data = inclusion.source.data
        assert list(data["name"]) == [f"x{j}" for j in range(6)] == list(inclusion.figure.x_range.factors)
        target = app.client.config.build_target()
        np.testing.assert_array_equal(np.isfinite(data["truth"]), target.true_inclusion == 1)
        states, log_p = target.enumerate()
        exact = np.exp(log_p - log_p.max()) / np.exp(log_p - log_p.max()).sum() @ states
        np.testing.assert_allclose(data["exact"], exact, rtol=1e-9)
    finally:
        app.close()


def test_dag_view_draws_the_current_graph_and_edge_probability_heatmaps():
    app = make_explorer(target="dag", target_params={"n_nodes": 4}, sampler="locally_balanced",
                        sampler_params={"balancing": "sqrt"}, n_chains=4, statistic="log_prob")
    try:
        dag = view(app, DagView)
        assert shown(app, DagView) and not shown(app, InclusionView)
        advance(app, 100)
        settle(app, lambda: "largest error" in dag.status.object)
        target = app.client.config.build_target()
        adjacency = target.adjacency(headless_states(app.client.config, 100)[:1])[0]
        assert len(dag.edge_source.data["x0"]) == adjacency.sum()
        # the state card draws the same DAG as its adjacency matrix, parents in rows, the diagonal empty
        state = view(app, LatticeView)._state
        image = state.source.data["image"][0]
        np.testing.assert_array_equal(np.isnan(image), np.eye(4, dtype=bool))
        np.testing.assert_array_equal(np.nan_to_num(image), adjacency)
        assert state.figure.yaxis[0].axis_label == "parent" and state.figure.xaxis[0].axis_label == "child"
        assert sum(1 for fig in dag.heat_figures for item in fig.right if isinstance(item, ColorBar)) == 2
        heat = dag.heat_source.data
        assert len(heat["parent"]) == 12
        pairs = target.edge_pairs
        assert [b == "black" for b in heat["border"]] == list(target.true_adjacency[pairs[:, 0], pairs[:, 1]] == 1)
        assert np.all((np.asarray(heat["exact"]) >= 0) & (np.asarray(heat["exact"]) <= 1))
        assert figures_shown(dag) == ["DAG of the chain shown", *(fig.title.text for fig in dag.heat_figures)]
        assert len(dag.heat_figures) == 4
        assert dag.caption.visible and "black outline: an edge of the true graph" in dag.caption.object
    finally:
        app.close()


def test_tempering_view_shows_each_pairs_exchange_rate():
    app = make_explorer(target="ising_lattice", target_params={"size": 6, "beta": 0.6}, sampler="parallel_tempering",
                        sampler_params={"base": "metropolis", "n_replicas": 4, "min_beta": 0.1},
                        n_chains=2, statistic="magnetisation")
    try:
        tempering = view(app, TemperingView)
        assert shown(app, TemperingView) and not shown(app, AdaptationView)
        advance(app, 50)
        # the exchange rates come with a snapshot after the one that shows the steps (slower parts wait)
        settle(app, lambda: "weakest pair" in tempering.status.object
               and all(0 < rate <= 1 for rate in tempering.source.data["acceptance"]))
        assert len(tempering.source.data["pair"]) == 3
        assert tempering.figure.x_range.factors == tempering.source.data["pair"]
        assert tempering.source.data["pair"][0] == "β 1 ↔ 0.4642"
        status = tempering.status.object
        assert "4 replicas of <b>metropolis</b> on p̃^β" in status and "weakest pair" in status
    finally:
        app.close()


def test_the_live_beta_slider_moves_the_run_and_reset_starts_at_the_new_beta():
    app = make_explorer(target="ising_lattice", target_params={"size": 8, "beta": 0.3}, sampler="swendsen_wang",
                        sampler_params={}, n_chains=2, statistic="magnetisation")
    try:
        slider = app.controls.runs.live_beta
        assert slider.visible and slider.value == 0.3 and "β_c ≈ 0.4407" in slider.label
        advance(app, 20)
        with param.edit_constant(slider):
            slider.value_throttled = 0.7  # what releasing the slider in the browser sets
        settle(app, lambda: app.client.config.beta_changes == [[20, 0.7]])
        advance(app, 10)
        assert app.client.status.n_steps == 30 and not app.client.error
        app.client.reset()
        settle(app, lambda: app.client.config.target_params["beta"] == 0.7 and app.client.status.n_steps == 0)
        assert app.client.config.beta_changes == [] and slider.value == 0.7
        applied(app, RunConfig(target="ising_segmentation", target_params={"size": 6}, statistic="log_prob"))
        assert not slider.visible
    finally:
        app.close()


def test_proposal_inspector_follows_the_shown_chain_step_by_step():
    app = make_explorer(target="ising_lattice", target_params={"size": 6, "beta": 0.4}, sampler="locally_balanced",
                        n_chains=3, statistic="magnetisation")
    try:
        card = card_of = app.cards[InspectorView]
        assert card.visible and card.collapsed and not app.client.display.inspect  # costs nothing while closed
        assert InspectorView not in app.views and not len(card)  # nor any Bokeh model in the page: built on opening
        card_of.collapsed = False
        inspector = view(app, InspectorView)
        assert app.client.display.inspect
        pictures = []
        for step in range(1, 4):
            advance(app, 1)
            settle(app, lambda: f"Step {step}. Proposed: flip site (" in inspector.text.object)
            image = inspector._panel.source.data["image"][0]
            np.testing.assert_allclose((10.0 ** image[np.isfinite(image)]).sum(), 1.0, atol=1e-5)  # Q sums to one
            pictures.append((image.copy(), "accepted" in inspector.text.object))
            assert len(inspector.marks.data["x"]) == 1
        # the picture is the proposal at the state before each step: it changes after every accepted move
        for (picture, accepted), (following, _) in zip(pictures, pictures[1:]):
            assert accepted == (not np.array_equal(picture, following))
        card_of.collapsed = True
        assert not app.client.display.inspect
    finally:
        app.close()


@pytest.mark.parametrize("sampler, params, words", [
    ("block_gibbs", {"block_size": 3}, "Block {"),
    ("pas", {"path_length": 3, "random_length": False, "burn_in": 0}, "Path of 3 flips"),
    ("intracluster", {"n_active": 18, "walk_length": 2, "gamma": 0.3}, "First walk"),
])
def test_the_inspector_shows_a_block_a_path_or_the_walks_and_their_probability(sampler, params, words):
    app = make_explorer(target="ising_lattice", target_params={"size": 6, "beta": 0.4}, sampler=sampler,
                        sampler_params=params, n_chains=2, statistic="magnetisation")
    try:
        app.cards[InspectorView].collapsed = False
        inspector = view(app, InspectorView)
        advance(app, 1)
        settle(app, lambda: words in inspector.text.object)
        sites = {"block_gibbs": 3, "pas": 3}.get(sampler)
        assert len(inspector.marks.data["x"]) == sites if sites else 1 <= len(inspector.marks.data["x"]) <= 4
        image = inspector._panel.source.data["image"][0]
        if sampler == "pas":  # the first flip's distribution
            np.testing.assert_allclose((10.0 ** image[np.isfinite(image)]).sum(), 1.0, atol=1e-5)
        assert "nan" not in inspector.text.object
    finally:
        app.close()


def test_tuned_step_size_is_exported_once_frozen():
    app = make_explorer(target="ising_lattice", target_params={"size": 6}, sampler="dmala",
                        sampler_params={"burn_in": 10}, n_chains=2, statistic="magnetisation")
    try:
        tuning = view(app, TuningView)
        assert card(app, TuningView).visible
        advance(app, 5)
        settle(app, lambda: "<b>adapting</b> the step size (now " in tuning.status.object
               and "toward 57.4% acceptance" in tuning.status.object)
        advance(app, 10)
        settle(app, lambda: app.client.frozen is not None)
        assert app.client.frozen["at_step"] == 10
        assert set(app.client.frozen["sampler_params"]) == {"step_size", "burn_in"}
        settle(app, lambda: "<b>frozen</b> at step 10: step size = " in tuning.status.object)
        assert f"{app.client.frozen['sampler_params']['step_size']:.4g}" in tuning.status.object
    finally:
        app.close()


def walk_tuning_explorer():
    """An explorer of intracluster moves that tune γ and the walk length for 20 steps, then freeze them."""
    return make_explorer(target="ising_lattice", target_params={"size": 6}, sampler="intracluster",
                         sampler_params={"n_active": 18, "walk_length": 2, "adapt": True, "burn_in": 20},
                         n_chains=2, statistic="magnetisation")


def test_adaptation_view_follows_the_walk_tuning_and_its_freeze():
    app = walk_tuning_explorer()
    try:
        adaptation = view(app, AdaptationView)
        assert card(app, AdaptationView).visible
        advance(app, 30)
        settle(app, lambda: "frozen</b> at step 20" in adaptation.status.object)
        assert all(marker.visible and marker.location == 20 for marker in adaptation.frozen_markers)
        assert len(adaptation.source.data["step"]) > 0
    finally:
        app.close()


# ---------------------------------------------------------------------------------------------------------------
# Every number a card prints is on its plot (issue 40): the numbers are read back from the card's text, as printed
# (``engine.numbers``: "30,714", "0.0001459", "1.3 × 10⁻⁶"), and compared with the data its plot draws.



#: A number as ``number`` or ``wide_number`` prints it.
PRINTED = r"(?:[−-]?\d[\d,]*(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?|10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)"


def read_number(text: str) -> tuple[float, float]:
    """A printed number and the relative rounding of its print (four significant digits, or the one decimal of a
    power of ten's mantissa)."""
    text = text.replace(",", "").replace("−", "-")
    power = re.fullmatch(r"(?:(.+) × )?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if power is None:
        return float(text), 5e-4 if float(text) else 0.0
    exponent = int(power.group(2).translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
    mantissa = float(power.group(1) or 1)
    return mantissa * 10.0 ** exponent, 0.05 / mantissa


def assert_printed(text: str, value: float) -> None:
    """``text`` is ``value`` as printed, within its print's rounding."""
    printed, rounding = read_number(text)
    assert printed == pytest.approx(value, rel=rounding, abs=0), (text, value)


def kl_snapshot(mcmc: float, opad: float, opad_plus: float) -> OpadSnapshot:
    """Three checkpoints of KL for four chains and pooled, ending at the given pooled values; the single chains
    end above them (each has a quarter of the samples), as in a run."""
    steps = np.array([1, 10, 300])
    ends = {"mcmc": mcmc, "opad": opad, "opad_plus": opad_plus}
    kl = {}
    for kind, end in ends.items():
        pooled_curve = np.array([1.0, 0.1, end])
        chains = pooled_curve[:, None] * np.array([3.0, 4.0, 5.0, 20.0]) + 1e-3
        kl[kind] = np.column_stack([chains, pooled_curve])
    return OpadSnapshot(steps=steps, kl=kl, n_particles=12)


@pytest.mark.parametrize("ends", [(0.03903, 0.0001459, 0.000001271), (0.07, 0.004, 0.0)])
def test_the_kl_text_prints_the_ends_of_the_pooled_curves_it_draws_and_their_ratios(ends):
    kl = KLView()
    kl.reconfigure(SimpleNamespace(opad_tracked=True, opad_problem=""))  # all the view reads of a tracked run
    snapshot = kl_snapshot(*ends)
    kl.draw(snapshot)
    text = kl.status.object
    assert text.startswith("All chains pooled")
    match = re.search(rf"step ({PRINTED}): KL MCMC ({PRINTED}) · OPAD ({PRINTED})(?: \(drawn at ({PRINTED})\))? "
                      rf"\(MCMC/OPAD ({PRINTED})×\) · OPAD\+ ({PRINTED})(?: \(drawn at ({PRINTED})\))? "
                      rf"\(MCMC/OPAD\+ (?:({PRINTED})×|∞: exact)\)$", text)
    assert match, text
    step, mcmc, opad, opad_floor, opad_ratio, plus, plus_floor, plus_ratio = match.groups()
    curves = {kind: np.asarray(source.data["kl"], dtype=float) for kind, source in kl.pooled_sources.items()}
    for kind in KINDS:  # the pooled curves are drawn, each the pooled column, and named in the legend
        assert list(kl.pooled_sources[kind].data["step"]) == [1, 10, 300]
        np.testing.assert_allclose(curves[kind], np.maximum(snapshot.kl[kind][:, -1], FLOOR))
    labels = [item.label.value for item in kl.figure.legend[0].items]
    assert labels == ["MCMC", "OPAD", "OPAD+"]  # each a colour: its pooled curve, its checkpoints, its chains' mean
    for kind, item in zip(KINDS, kl.figure.legend[0].items):
        line, markers, mean = (renderer.glyph for renderer in item.renderers)
        assert [type(glyph).__name__ for glyph in (line, markers, mean)] == ["Line", "Scatter", "Line"]
        assert [renderer.data_source for renderer in item.renderers[:2]] == [kl.pooled_sources[kind]] * 2
    assert_printed(step, 300)
    assert_printed(mcmc, curves["mcmc"][-1])
    assert_printed(opad, curves["opad"][-1])
    assert_printed(opad_ratio, curves["mcmc"][-1] / curves["opad"][-1])
    assert opad_floor is None
    assert_printed(plus, ends[2])
    if ends[2]:
        assert_printed(plus, curves["opad_plus"][-1])
        assert_printed(plus_ratio, curves["mcmc"][-1] / curves["opad_plus"][-1])
        assert plus_floor is None
    else:  # exactly 0: drawn at the floor, which the text says
        assert plus_ratio is None and curves["opad_plus"][-1] == FLOOR
        assert_printed(plus_floor, FLOOR)
    assert "0.0000" not in text  # tiny values as powers of ten


def test_the_first_checkpoint_printed_is_drawn_as_a_point():
    """At the first checkpoint each pooled curve is one point: no line yet, so its marker is what shows the
    values the text prints."""
    kl = KLView()
    kl.reconfigure(SimpleNamespace(opad_tracked=True, opad_problem=""))
    first = kl_snapshot(0.07, 0.004, 0.0005)
    kl.draw(OpadSnapshot(steps=first.steps[:1], kl={kind: curve[:1] for kind, curve in first.kl.items()},
                         n_particles=12))
    assert "step 1:" in kl.status.object
    for kind in KINDS:
        markers = [r for r in kl.figure.renderers if type(r.glyph).__name__ == "Scatter"
                   and r.data_source is kl.pooled_sources[kind]]
        assert len(markers) == 1 and markers[0].visible and markers[0].glyph.size > 0
        assert list(kl.pooled_sources[kind].data["step"]) == [1]
        assert_printed(re.search(rf"{re.escape(SHORT[kind])} ({PRINTED})", kl.status.object).group(1),
                       kl.pooled_sources[kind].data["kl"][0])


def test_the_kl_view_of_a_run_prints_the_ends_of_its_pooled_curves():
    app = make_explorer(target="ising1d", target_params={"m": 8}, sampler="metropolis", sampler_params={},
                        n_chains=5, statistic="log_prob")
    try:
        kl = view(app, KLView)
        advance(app, 200)
        settle(app, lambda: "step 200:" in kl.status.object)
        values = re.findall(rf"(?:MCMC|OPAD|OPAD\+) ({PRINTED})(?= [·(]|$)", kl.status.object)
        assert len(values) == 3, kl.status.object
        for text, kind in zip(values, KINDS):
            assert_printed(text, kl.pooled_sources[kind].data["kl"][-1])
            # the pooled chains hold five chains' samples: their curve is not the mean of the single chains'
            assert kl.pooled_sources[kind].data["kl"][-1] <= kl.band_sources[kind].data["mean"][-1]
    finally:
        app.close()


def largest_error_numbers(text: str) -> dict:
    """``{"MCMC": …, "OPAD": …, "OPAD+": …}`` read from a "largest error of …" line."""
    return dict(re.findall(rf"(MCMC|OPAD\+?) ({PRINTED})(?= ·|$)", text))


def test_the_inclusion_and_dag_texts_print_the_largest_gap_between_the_bars_drawn():
    for target, params, kind, read in (("bvs", {"n_predictors": 6, "n_samples": 40}, InclusionView, "source"),
                                       ("dag", {"n_nodes": 4}, DagView, "heat_source")):
        app = make_explorer(target=target, target_params=params, sampler="metropolis", sampler_params={},
                            n_chains=4, statistic="log_prob")
        try:
            card_view = view(app, kind)
            advance(app, 150)
            settle(app, lambda: "largest error" in card_view.status.object)
            data = getattr(card_view, read).data
            printed = largest_error_numbers(card_view.status.object)
            assert set(printed) == {"MCMC", "OPAD", "OPAD+"}, card_view.status.object
            for label, series in (("MCMC", "mcmc"), ("OPAD", "opad"), ("OPAD+", "opad_plus")):
                drawn = np.abs(np.asarray(data[series], dtype=float) - np.asarray(data["exact"], dtype=float))
                assert_printed(printed[label], drawn.max())
        finally:
            app.close()


def test_the_diagnostics_caption_prints_only_numbers_of_its_table(explorer):
    advance(explorer, 200)
    diagnostics = view(explorer, DiagnosticsView)
    settle(explorer, lambda: len(diagnostics._table.object))
    table = dict(zip(diagnostics._table.object["diagnostic"], diagnostics._table.object["value"]))
    assert f"over the last {table['window (steps)']} steps" in diagnostics._caption.object
    wolff = {"window (steps)": 884, ESS_DEFINITIONS[0]: 5177.3, "R-hat": 1.2301}
    diagnostics.update(SimpleNamespace(diagnostics=wolff))
    table = dict(zip(diagnostics._table.object["diagnostic"], diagnostics._table.object["value"]))
    caption = diagnostics._caption.object
    assert f"ESS {table[ESS_DEFINITIONS[0]]} is more than the {table['window (steps)']} × 4 = 3,536 draws" in caption
    assert f"R-hat {table['R-hat']} is above" in caption
    assert re.search(r"over the last (\S+) steps", caption).group(1) == table["window (steps)"]


def test_the_tuning_line_prints_the_value_in_force_its_target_and_its_step():
    tuning = TuningView()
    state = TuningState(parameter="step_size", value=0.0123456, adapting=True, frozen_at=None, burn_in=500,
                        target_acceptance=0.574, step=37)
    tuning.update(SimpleNamespace(tuning=state))
    match = re.search(rf"now ({PRINTED})\) toward ({PRINTED})% acceptance: step ({PRINTED}) of the burn-in's "
                      rf"({PRINTED})", tuning.status.object)
    assert match, tuning.status.object
    for text, value in zip(match.groups(), (state.value, 100 * state.target_acceptance, state.step, state.burn_in)):
        assert_printed(text, value)


def test_the_walk_tuning_prints_its_freeze_and_its_values_where_its_plots_draw_them():
    app = walk_tuning_explorer()
    try:
        adaptation = view(app, AdaptationView)
        advance(app, 10)
        settle(app, lambda: "<b>adapting</b>" in adaptation.status.object)
        target = re.search(rf"toward ({PRINTED})% acceptance", adaptation.status.object).group(1)
        assert_printed(target, 100 * adaptation.target_line.location)
        advance(app, 20)
        settle(app, lambda: "frozen</b> at step" in adaptation.status.object)
        match = re.search(rf"at step ({PRINTED}): γ = ({PRINTED}), walk length ({PRINTED})", adaptation.status.object)
        assert match, adaptation.status.object
        assert all(marker.visible for marker in adaptation.frozen_markers)
        assert_printed(match.group(1), adaptation.frozen_markers[0].location)
        assert_printed(match.group(2), adaptation.source.data["gamma"][-1])
        assert_printed(match.group(3), adaptation.source.data["walk_length"][-1])
    finally:
        app.close()


def test_the_trace_key_counts_the_single_chains_it_draws(explorer):
    advance(explorer, 3)
    traces = view(explorer, TraceView)
    shown_lines = sum(renderer.visible for renderer in traces.chain_lines[0])
    assert re.search(r"(\d+) single chains", traces.key.object).group(1) == str(shown_lines) == "4"


# -- issue 40: the status line before the first step, the default run's preset pane, tempering's traces ------------


def test_the_status_line_says_ready_and_names_the_set_up_evaluations_until_the_first_step():
    """A run never started is "ready" (not "paused"), and the evaluations it shows then are its set-up's, counted
    in full; after a step the line reads as before."""
    app = explorer_for(RunConfig())
    try:
        status = app.controls.runs.status
        settle(app, lambda: app.client.drawn and f"<b>{READY}</b>" in status.object)
        _, sampler = RunConfig().build()  # the same run headless: its evaluations before any step
        assert status.object.startswith(f"<b>{READY}</b> · steps 0 · evaluations {sampler.n_evals:,} in set-up · ")
        advance(app, 1)
        settle(app, lambda: "<b>paused</b> · steps 1 · evaluations " in status.object)
        assert "in set-up" not in status.object
    finally:
        app.close()


def test_the_default_run_is_never_described_by_the_selected_presets_text():
    """On the page's default run the pane first says what the run shown is, then, below a rule, the preset that
    is selected, which Load preset would run: its description is never the run's."""
    app = explorer_for(RunConfig())
    try:
        presets = app.controls.presets
        preset = presets._presets[presets.preset.value]
        shown, selected = presets.preset_info.object.split("\n\n---\n\n")
        default = RunConfig()
        assert shown.startswith(f"**{DEFAULT_RUN}**") and f"`{default.target}` with `{default.sampler}`" in shown
        assert f"{default.n_chains} chains" in shown and preset.description not in shown
        assert selected.startswith(f"*{NOT_LOADED}*") and preset.description in selected
    finally:
        app.close()


def test_the_tempering_presets_single_chains_are_drawn_and_change_sign_as_its_text_says():
    """The tempering preset tells to watch a single chain's magnetisation (a thin line) change sign: the traces
    card draws single chains for it, and one of them does within the first steps of the preset's seed."""
    name, preset = next((name, preset) for name, preset in load_presets().items()
                        if preset.config["sampler"] == "parallel_tempering")
    assert "single chain's magnetisation (a thin coloured line) change sign" in preset.description
    assert "watch its magnetisation trace" not in preset.description
    app = explorer_for(RunConfig.from_dict({**preset.config, "compare_sampler": ""}))
    try:
        traces = view(app, TraceView)
        drawn = [i for i, renderer in enumerate(traces.chain_lines[1]) if renderer.visible]
        assert drawn and f"{len(drawn)} single chains" in traces.key.object
        advance(app, 1500)
        signs = [np.sign(traces.source.data[f"st{i}"]) for i in drawn]
        assert any(np.any(sign[:-1] * sign[1:] < 0) for sign in signs), name
    finally:
        app.close()


def test_preset_texts_and_the_inspectors_words_carry_no_raw_tex():
    """Written for a projector: no TeX command, no braced or caret super- or subscript (e^{−2βJ}, x^(j))."""
    def tex(text: str) -> list[str]:
        return [mark for mark in ("\\", "^", "_{") if mark in text]

    for name, preset in load_presets().items():
        assert not tex(name + preset.description + preset.shows_failure), name
    inspections = [move("single flip", sites=[6], log_q=np.linspace(-3, -1, 16)),
                   move("path", path=[9, 3], log_q=np.linspace(-3, -1, 16)), move("walk", path=[5, 6, 7, 6, 1, 2]),
                   move("independent flips", sites=[1, 2], log_q=np.linspace(-3, -1, 16)), move("other")]
    for inspection in inspections:
        assert not tex(describe(inspection)), inspection.kind
    assert not tex(InspectorView().scatter.title.text)
