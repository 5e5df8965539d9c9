"""The dashboard's views without a server: the periodic flush is driven by hand."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.model.config import RunConfig
from dashboard.explorer import Explorer
from dashboard.views.lattice import as_image
from tests.tiny import TINY_UAI


def make_explorer(**overrides) -> Explorer:
    values = dict(target="ising_segmentation", target_params={"size": 10}, sampler="locally_balanced",
                  sampler_params={"balancing": "sqrt"}, n_chains=4, seed=1, statistic="agreement")
    values.update(overrides)
    return Explorer(RunConfig(**values))


@pytest.fixture
def explorer():
    app = make_explorer()
    yield app
    app.close()


def advance(app: Explorer, n: int) -> None:
    app.model.step(n)
    assert app.model.wait_idle()
    app.flush()


def test_flush_moves_steps_into_status_lattice_and_traces(explorer):
    advance(explorer, 25)
    assert "steps 25" in explorer.controls.status.object
    source = explorer.traces.source
    assert source.data["step"].tolist() == list(range(26))
    np.testing.assert_array_equal(source.data["st0"], explorer.model.buffer.history()["statistic"][:, 0])
    image = explorer.lattice._state.source.data["image"][0]
    np.testing.assert_array_equal(image, explorer.model.sampler.states[0].reshape(10, 10))
    advance(explorer, 5)
    assert source.data["step"].tolist() == list(range(31))


def test_lattice_shows_the_chosen_chain_and_segmentation_inputs(explorer):
    advance(explorer, 3)
    explorer.lattice.chain.value = 2
    image = explorer.lattice._state.source.data["image"][0]
    np.testing.assert_array_equal(image, explorer.model.sampler.states[2].reshape(10, 10))
    titles = [pane.object.title.text for pane in explorer.lattice._figures]
    assert titles == ["current state", "ground truth", "noisy observation y"]
    explorer.lattice.show_mean.value = True
    titles = [pane.object.title.text for pane in explorer.lattice._figures]
    assert titles[:2] == ["current state", "running mean"]
    mean = explorer.lattice._mean.source.data["image"][0]
    assert np.all((mean >= 0) & (mean <= 1))


def test_a_3d_lattice_is_drawn_slice_by_slice():
    app = make_explorer(target="ising_lattice", target_params={"size": 4, "ndim": 3}, statistic="magnetisation")
    try:
        advance(app, 2)
        assert app.lattice.depth.visible and app.lattice.depth.end == 3
        app.lattice.depth.value = 2
        np.testing.assert_array_equal(app.lattice._state.source.data["image"][0],
                                      app.model.sampler.states[0].reshape(4, 4, 4)[2])
    finally:
        app.close()


def test_other_targets_are_drawn_as_a_grid_of_bits():
    target = RunConfig(target="ising1d", target_params={"m": 7}).build_target()
    image = as_image(np.arange(7) % 2, target)
    assert image.shape == (3, 3) and np.isnan(image[2, 1:]).all()


def test_x_axis_toggle_switches_to_evaluations(explorer):
    explorer.traces.x_axis.value = "target evaluations"
    glyphs = [r.glyph for fig in explorer.traces._figures for r in fig.renderers]
    assert glyphs and all(glyph.x == "n_evals" for glyph in glyphs)


def test_views_that_do_not_apply_are_hidden(explorer):
    assert explorer._balancing_card.visible
    assert explorer.controls.apply(RunConfig(target="ising1d", sampler="metropolis", statistic="log_prob"))
    assert not explorer._balancing_card.visible
    assert not explorer.traces._statistic_figure.visible  # statistic is log p̃ itself: one trace plot


def test_a_new_run_reuses_the_figures(explorer):
    figures = [panel.figure for panel in (explorer.lattice._state, explorer.lattice._truth)]
    traces = list(explorer.traces._figures)
    assert explorer.controls.apply(RunConfig(target="ising_lattice", target_params={"size": 6}, n_chains=2,
                                             sampler="gibbs", statistic="magnetisation"))
    assert [panel.figure for panel in (explorer.lattice._state, explorer.lattice._truth)] == figures
    assert explorer.traces._figures == traces
    assert explorer.lattice._state.glyph.dw == 6 and len(explorer.lattice._figures) == 1
    assert [r.visible for r in traces[0].renderers][:3] == [True, True, False]
    advance(explorer, 3)
    np.testing.assert_array_equal(explorer.lattice._state.source.data["image"][0],
                                  explorer.model.sampler.states[0].reshape(6, 6))
    assert explorer.traces.source.data["step"].tolist() == [0, 1, 2, 3]


def test_balancing_view_draws_the_samplers_function(explorer):
    view = explorer.balancing
    view.refresh()
    data = view.curve_source.data
    np.testing.assert_allclose(data["g"], np.sqrt(data["t"]), rtol=1e-12)
    # a fixed function: no learning traces or controls
    assert not any(fig.visible for fig in (view.loss_figure, view.eta_figure, view.weights_figure))
    assert not view.freeze_button.visible


def _refresh_now(view):
    view._last_refresh = -np.inf
    view.refresh()


def test_learning_view_follows_lsb_and_freeze_now_stops_it():
    app = make_explorer(sampler="lsb", sampler_params={"parametrization": "lsb1", "burn_in": 500}, n_chains=4)
    try:
        view = app.balancing
        assert view.loss_figure.visible and view.eta_figure.visible and view.weights_figure.visible
        advance(app, 30)
        _refresh_now(view)
        first_curve = np.array(view.curve_source.data["g"])
        history = view.history_source.data
        assert list(history["step"]) == list(range(30))
        assert np.all(np.isfinite(history["loss"])) and np.all(np.isfinite(history["w_sqrt"]))
        assert "learning" in view.status.object and not view.freeze_button.disabled
        advance(app, 30)
        _refresh_now(view)
        assert not np.array_equal(view.curve_source.data["g"], first_curve)  # g(t) is redrawn as it learns
        assert not any(marker.visible for marker in view.frozen_markers)
        view.freeze_button.clicks += 1
        assert app.model.sampler.frozen_at == 60 and not app.model.sampler.learning
        advance(app, 10)
        _refresh_now(view)
        assert all(marker.visible and marker.location == 60 for marker in view.frozen_markers)
        assert "frozen</b> at step 60" in view.status.object and view.freeze_button.disabled
        frozen_curve = np.array(view.curve_source.data["g"])
        advance(app, 10)
        _refresh_now(view)
        np.testing.assert_array_equal(view.curve_source.data["g"], frozen_curve)
    finally:
        app.close()


def test_keep_adapting_shows_a_warning_and_lsb2_has_no_weights_panel():
    app = make_explorer(sampler="lsb", sampler_params={"parametrization": "lsb2", "keep_adapting": True}, n_chains=2)
    try:
        advance(app, 5)
        _refresh_now(app.balancing)
        assert "adaptive MCMC" in app.balancing.status.object
        assert app.balancing.loss_figure.visible and not app.balancing.weights_figure.visible
        assert np.all(np.isnan(app.balancing.history_source.data["w_sqrt"]))
    finally:
        app.close()


def test_learning_history_is_thinned_for_display():
    from dashboard.views.balancing import thinned
    history = {"step": np.arange(5000.0), "loss": np.zeros(5000)}
    small = thinned(history, max_points=100)
    assert len(small["step"]) <= 101 and small["step"][-1] == 4999 and small["step"][0] == 0


def test_diagnostics_table_fills_after_a_run(explorer):
    advance(explorer, 200)
    explorer.diagnostics.refresh()
    table = explorer.diagnostics._table.object
    assert list(table["diagnostic"]) == ["window (steps)", "acceptance", "ESS", "R-hat",
                                         "ESS per 1000 evaluations", "ESS per second"]
    assert table["value"][0] == "201"


def test_invalid_settings_show_a_message_and_keep_the_run(explorer):
    advance(explorer, 10)
    controls = explorer.controls
    controls.target.value = "markov_network"
    controls.sampler.value = "gwg"
    assert not controls.apply()
    assert controls.alert.visible and "differentiable" in controls.alert.object
    assert explorer.model.config.target == "ising_segmentation" and explorer.model.poll().n_steps == 10
    controls.sampler.value = "metropolis"
    assert controls.apply()
    assert not controls.alert.visible and explorer.model.target.dim == 100


def test_presets_load_into_the_widgets(explorer):
    controls = explorer.controls
    name = "OPAD Fig. 1 · 1-D Ising chain · Metropolis"
    controls.preset.value = name
    controls._on_load_preset()
    assert controls.target.value == "ising1d" and controls.sampler.value == "metropolis"
    assert explorer.model.config.n_chains == 20 and controls.n_chains.value == 20
    assert controls.draft().to_dict() == explorer.model.config.to_dict()
    controls.preset.value = "OPAD Fig. 1 · 1-D Ising chain · locally balanced √t, OPAD+ with every scored neighbour"
    controls._on_load_preset()
    assert controls.opad_neighbours.value and explorer.model.sampler.record_neighbours
    assert controls.draft().to_dict() == explorer.model.config.to_dict()


def test_upload_and_configuration_import(explorer):
    controls = explorer.controls
    controls.target.value = "markov_network"
    controls.sampler.value = "gibbs"
    controls.upload.filename = "tiny.uai"
    controls.upload.value = TINY_UAI.encode()
    assert explorer.model.target.dim == 6 and "tiny.uai" in controls.upload_note.object
    controls.upload.filename = "broken.uai"
    controls.upload.value = b"MARKOV\n2\n2 2\n1\n1 7\n"
    assert "line" in controls.alert.object and explorer.model.target.dim == 6
    exported = controls._config_file().read()
    controls.import_config.value = b"{broken"
    assert "not valid JSON" in controls.alert.object
    controls.import_config.value = exported.encode()
    assert not controls.alert.visible and explorer.model.config.to_json() == exported


def test_traces_download_is_csv(explorer):
    advance(explorer, 4)
    text = explorer.controls._traces_file().read()
    assert text.splitlines()[0].startswith("step,n_evals,seconds,log_prob_0")
    assert len(text.strip().splitlines()) == 6


def test_close_stops_the_thread():
    app = make_explorer()
    app.model.start()
    app.close()
    assert not app.model.thread_alive


def redraw_opad_views(app: Explorer) -> None:
    """Flush with the OPAD views' throttle expired."""
    for view in (app.kl, app.inclusion, app.dag):
        view.throttle.reset()
    app.flush()


def test_kl_view_draws_every_chain_and_the_band_of_the_three_approximations():
    app = make_explorer(target="ising1d", target_params={"m": 8}, sampler="metropolis", sampler_params={},
                        n_chains=5, statistic="log_prob")
    try:
        assert "No KL curve" not in app.kl.status.object
        advance(app, 300)
        redraw_opad_views(app)
        snapshot = app.model.opad_snapshot()
        for kind in ("mcmc", "opad", "opad_plus"):
            lines = app.kl.line_sources[kind].data
            assert len(lines["ys"]) == 5 and all(len(y) == len(snapshot.steps) for y in lines["ys"])
            band = app.kl.band_sources[kind].data
            assert np.all(band["lower"] <= band["mean"] + 1e-15) and np.all(band["mean"] <= band["upper"] + 1e-15)
            np.testing.assert_allclose(band["mean"], np.maximum(snapshot.kl[kind][:, :5], 1e-10).mean(axis=1))
        assert "step 300" in app.kl.status.object and "MCMC/OPAD" in app.kl.status.object
        assert app.controls.apply(RunConfig(target="ising_segmentation", target_params={"size": 6},
                                            sampler="metropolis", statistic="log_prob"))
        assert not app.kl.figure.visible and "d = 36" in app.kl.status.object
        assert app.kl.line_sources["mcmc"].data["ys"] == []
    finally:
        app.close()


def test_inclusion_view_shows_four_bars_per_predictor_and_the_true_model():
    app = make_explorer(target="bvs", target_params={"n_predictors": 6, "n_samples": 40}, sampler="gibbs",
                        sampler_params={}, n_chains=4, statistic="log_prob")
    try:
        assert app._inclusion_card.visible and not app._dag_card.visible
        advance(app, 200)
        redraw_opad_views(app)
        data = app.inclusion.source.data
        assert list(data["name"]) == [f"x{j}" for j in range(6)] == list(app.inclusion.figure.x_range.factors)
        truth = app.model.target.true_inclusion
        np.testing.assert_array_equal(np.isfinite(data["truth"]), truth == 1)
        np.testing.assert_allclose(data["exact"], app.model.opad_snapshot().marginals["exact"])
        assert "largest error" in app.inclusion.status.object
    finally:
        app.close()


def test_dag_view_draws_the_current_graph_and_edge_probability_heatmaps():
    app = make_explorer(target="dag", target_params={"n_nodes": 4}, sampler="locally_balanced",
                        sampler_params={"balancing": "sqrt"}, n_chains=4, statistic="log_prob")
    try:
        assert app._dag_card.visible and not app._inclusion_card.visible
        advance(app, 100)
        redraw_opad_views(app)
        adjacency = app.model.target.adjacency(app.model.sampler.states[:1])[0]
        assert len(app.dag.edge_source.data["x0"]) == adjacency.sum()
        heat = app.dag.heat_source.data
        assert len(heat["parent"]) == 12
        truth = app.model.target.true_adjacency
        pairs = app.model.target.edge_pairs
        assert [b == "black" for b in heat["border"]] == list(truth[pairs[:, 0], pairs[:, 1]] == 1)
        np.testing.assert_allclose(heat["exact"], app.model.opad_snapshot().marginals["exact"])
        assert all(fig.visible for fig in app.dag.heat_figures)
    finally:
        app.close()
