# The two commands a newcomer runs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test lint bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/registry-bot demo

lint: setup
	$(BIN)/ruff check bot tests benchmarks
	$(BIN)/mypy

test: lint
	PYSPARK_PYTHON=$(abspath $(BIN)/python) $(BIN)/python -m pytest

bench: setup
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
