# Discrete-sampler explorer: set-up, dashboard, tests and benchmarks.
#
#   make serve       start the dashboard at http://localhost:$(PORT)/app
#   make test        run the test suite
#   make benchmark   run the benchmarks (python -m benchmarks; ARGS="lsb_cost --steps 500" picks some)
#
# Each target bootstraps the virtual environment in .venv from nothing (only
# Python 3.11 with pip and venv is needed) and installs what it needs. One stamp
# file per requirements file records a finished install, so an edited
# requirements file (or pyproject.toml) triggers a reinstall, `make serve` installs only the runtime
# dependencies, and `make test` installs the test dependencies as well.

PYTHON ?= python3
PORT   ?= 5006
VENV   := .venv
BIN    := $(VENV)/bin

VENV_STAMP := $(VENV)/.stamp-venv
RUN_STAMP  := $(VENV)/.stamp-requirements
DEV_STAMP  := $(VENV)/.stamp-requirements-dev
# Compile the samplers' numba kernels into their disk cache once, at install (~20 s), not in the first run.
COMPILE_KERNELS := $(BIN)/python -m samplers.common.warmup

.PHONY: serve test benchmark venv clean-venv

serve: $(RUN_STAMP)
	$(BIN)/panel serve app.py --port $(PORT) --websocket-max-message-size 104857600 --setup serve_setup.py

test: $(DEV_STAMP)
	$(BIN)/python -m pytest

benchmark: $(DEV_STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

venv: $(DEV_STAMP)

clean-venv:
	rm -rf $(VENV)

# The interpreter and an up-to-date pip. The stamp is written last, so a venv
# whose creation or pip upgrade failed is redone on the next run.
$(VENV_STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	touch $@

# Runtime dependencies, and this project itself (editable, so that notebooks and
# scripts anywhere import targets, samplers and dashboard). torch is pinned (==2.13.0) in requirements.txt so that
# pip takes the CPU wheel that lies on this machine's disk.
$(RUN_STAMP): requirements.txt pyproject.toml $(VENV_STAMP)
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip install --no-deps --editable .
	$(COMPILE_KERNELS)
	touch $@

# Runtime and test dependencies (requirements-dev.txt includes requirements.txt, so the runtime stamp is
# written too: `make serve` after `make test` starts at once).
$(DEV_STAMP): requirements-dev.txt requirements.txt pyproject.toml $(VENV_STAMP)
	$(BIN)/python -m pip install -r requirements-dev.txt
	$(BIN)/python -m pip install --no-deps --editable .
	$(COMPILE_KERNELS)
	touch $(RUN_STAMP) $@
