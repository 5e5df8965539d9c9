"""Shared fixtures."""

from __future__ import annotations

import numpy as np
import pytest

from tests.tiny import TINY_TARGETS


@pytest.fixture(params=sorted(TINY_TARGETS))
def tiny_target(request):
    return TINY_TARGETS[request.param]()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
