# Two commands for users and CI (see README):
#   make run   - set up .venv + offline language data, start a worker and the Streamlit app
#   make test  - the same + dev requirements + Debian packages, then run pytest
# Every setup step is idempotent and stamp-guarded: a second run does no pip/apt work.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?=
VENV_PY := .venv/bin/python
PORT ?= 8501
# where `make run` listens: this machine only unless set (another address needs sign-in,
# EVALCORE_AUTH=oidc or header; scripts/run_app.sh refuses it otherwise)
EVALCORE_ADDRESS ?= 127.0.0.1
PYTEST_ARGS ?=
# pytest-xdist workers for `make test`: two more than the cores, so the cores of workers
# whose tests wait (leases running out, servers starting, browsers drawing: the serial
# group mostly waits) do other workers' tests meanwhile (measured in
# docs/test-timing-log.md). `auto` is one per core; 0 runs everything in one process.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 2 )))

.PHONY: help run test team-demo venv venv-dev system data setup setup-dev clean clean-data

help:
	@echo "make run   - install (once) and start the app on http://localhost:$(PORT)"
	@echo "make test  - install (once, incl. apt packages as root) and run the tests"
	@echo "             (PYTEST_ARGS='-m \"not browser\"' to pass pytest options)"
	@echo "make team-demo - PostgreSQL + OIDC provider + two app replicas on loopback"
	@echo "make clean - remove .venv, caches and the offline language data"

venv:
	@PYTHON=$(PYTHON) bash scripts/setup_venv.sh run

venv-dev:
	@PYTHON=$(PYTHON) bash scripts/setup_venv.sh dev

system:
	@bash scripts/setup_system.sh

data:
	@$(VENV_PY) scripts/setup_data.py

setup:
	@EVALCORE_APT_PACKAGES="python3.11-venv wordnet-base wordnet-sense-index" bash scripts/setup_system.sh
	@$(MAKE) --no-print-directory venv data

setup-dev: system venv-dev
	@$(MAKE) --no-print-directory data

run: setup
	EVALCORE_ADDRESS=$(EVALCORE_ADDRESS) bash scripts/run_app.sh $(PORT)

# Bytecode is cached during the tests even where PYTHONDONTWRITEBYTECODE is set: the CLI
# and worker tests start hundreds of Python processes, each would recompile evalcore.
test: setup-dev
# --no-loadscope-reorder: xdist hands out the units in tests/conftest.py's order (serial
# group, module groups, tests that start something, the rest), not sorted by test count.
	env -u PYTHONDONTWRITEBYTECODE $(VENV_PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup \
		--no-loadscope-reorder $(PYTEST_ARGS)

team-demo: setup-dev
	bash scripts/team_demo.sh

clean:
	rm -rf .venv .pytest_cache .evalcore-data
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

clean-data:
	rm -rf .evalcore-data
