"""A link whose run cannot be had shows the default run, and why, whichever layer refuses it.

The parser refuses a link it cannot read, the budget one too large to run,
and the worker one it cannot build (a statistic the target has not, a
parameter its sampler does not take): each page ends with the default run
shown and its buttons working, and the message saying why.
"""

from __future__ import annotations

import pytest

from dashboard.explorer import open_link
from engine.config import RunConfig
from engine.links import link_query
from tests.explorer_driver import built, settle
from tests.test_hostile_pages import OVER_BUDGET, rendered

#: Links each refused by another layer, and what their refusal says.
REFUSED = [
    ("not a link at all", "could not be read: the link's run is not a packed configuration"),
    (link_query(RunConfig(**OVER_BUDGET)), "run would need about"),
    (link_query(RunConfig(target="ising1d", statistic="nope")), "could not be built: statistic 'nope'"),
    (link_query(RunConfig(target="ising1d", sampler="parallel_tempering",
                          sampler_params={"base": "dmala", "base_params": {"nope": 1}})),
     "could not be built: parallel_tempering on ising1d"),
]


@pytest.mark.parametrize("query, reason", REFUSED)
def test_a_refused_link_shows_the_default_run_and_why(query, reason):
    app = open_link(query)
    try:
        settle(app, lambda: built(app.client) and app.client.drawn)
        assert app.client.config.to_dict() == RunConfig().to_dict() and not app.waiting.visible
        message = rendered(app.controls.runs.alert).text
        assert message.startswith("This link's run could not be") and reason in message, message
        assert message.endswith(". Here is the default run instead."), message
        app.client.step(3)  # the buttons answer the default run, not "no run has been built yet"
        settle(app, lambda: app.client.status.n_steps >= 3)
        assert "no run has been built" not in app.client.error
    finally:
        app.close()
