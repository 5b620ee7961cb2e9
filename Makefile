# The two commands a newcomer runs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test lint format bench clean system-deps lock images wheelhouse node-deps release docusaurus-check

# The venv installs exactly requirements/dev.txt (hashes checked), then the project itself, editable.
$(BIN)/.installed: pyproject.toml requirements/dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/dev.txt
	@# quiet: setuptools warns on every editable install of a flat layout (a notice, not a problem)
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

setup: $(BIN)/.installed

demo: setup
	$(BIN)/registry-bot demo
	@echo "Next, on your own clone of OpenLineage: $(BIN)/registry-bot check PATH --base origin/main (or --all for every entry)" >&2

# ruff format decides the layout, line length 100 included ([tool.ruff]); scripts/wrap_long_lines.py
# shortens what the formatter leaves long (comments, docstrings, string literals) and lists the rest.
PY_DIRS := bot tests benchmarks scripts
lint: setup
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)
	$(BIN)/mypy
	$(BIN)/lint-imports  # the layers contract ([tool.importlinter])

# Lay the code out: long trailing comments move above their line first (ruff format would otherwise
# split the code to fit them), then ruff format, then the long comments, docstrings and strings are
# shortened, then ruff format and the import order again. Deterministic: a second run changes nothing.
format: setup
	$(BIN)/python scripts/wrap_long_lines.py --comments-only $(PY_DIRS)
	$(BIN)/ruff format $(PY_DIRS)
	$(BIN)/python scripts/wrap_long_lines.py $(PY_DIRS)
	$(BIN)/ruff format $(PY_DIRS)
	$(BIN)/ruff check --fix --exit-zero --quiet $(PY_DIRS)
	$(BIN)/ruff format $(PY_DIRS)
	$(BIN)/python scripts/wrap_long_lines.py --check $(PY_DIRS)

# The queue's Redis backend is tested against a real server, the published site in Debian's headless
# Chromium, the images built with podman (runc, and debootstrap for their base), worker "hosts" in network
# namespaces joined by a bridge (iproute2's ip): install them when missing (Debian/Ubuntu).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq
system-deps:
	@command -v redis-server >/dev/null 2>&1 || { $(APT_INSTALL) redis-server >/dev/null; }
	@[ -x /usr/bin/chromium ] || { $(APT_INSTALL) chromium >/dev/null; }
	@command -v ip >/dev/null 2>&1 || { $(APT_INSTALL) iproute2 >/dev/null; }
	@command -v npm >/dev/null 2>&1 || { $(APT_INSTALL) nodejs npm >/dev/null; }
	@{ command -v podman && command -v runc && [ -x /usr/sbin/debootstrap ]; } >/dev/null 2>&1 || \
		{ $(APT_INSTALL) podman runc debootstrap >/dev/null; }

# The wheels of the hashed lock (requirements/web.txt: the bot without Spark, and the setuptools its build
# needs), for the tests that install the bot as users do (a wheel in a new virtual environment, pre-commit's
# `language: python`, the Action's `pip install`): they run pip offline from this folder.
WHEELHOUSE := .wheelhouse
$(WHEELHOUSE)/.filled: requirements/web.txt $(BIN)/.installed
	$(BIN)/python -m pip download --quiet --require-hashes --no-deps -r requirements/web.txt -d $(WHEELHOUSE)
	touch $@

wheelhouse: $(WHEELHOUSE)/.filled

# Node tools the tests drive (tests/node/package.json, locked; npm ci installs exactly the lock file):
# prettier, the layout format/json must reproduce byte for byte (tests/test_prettier.py), and the MDX
# compiler Docusaurus uses, for the published Markdown (tests/test_site_mdx.py). npm trusts the system's CA
# store too (a proxy's certificate installed there, as on this project's machines).
NODE_DEPS := tests/node/node_modules/.installed
$(NODE_DEPS): tests/node/package.json tests/node/package-lock.json
	NODE_EXTRA_CA_CERTS="$${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" \
		npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
	touch $@

node-deps: $(NODE_DEPS)

# The published Markdown inside a minimal Docusaurus 3.10.2 site with broken links and anchors set to throw
# (tests/docusaurus): about 3 min to install (343 MB, once) and 1.5 min to build on a loaded 2-core machine.
# `make test` runs it beside pytest (mostly network, then one build), so it adds little to the suite's time.
DOCUSAURUS_DEPS := tests/docusaurus/node_modules/.installed
$(DOCUSAURUS_DEPS): tests/docusaurus/package.json tests/docusaurus/package-lock.json
	NODE_EXTRA_CA_CERTS="$${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" \
		npm ci --prefix tests/docusaurus --no-audit --no-fund --loglevel=error
	touch $@

docusaurus-check: setup $(DOCUSAURUS_DEPS)
	tests/docusaurus/check.sh

DOCUSAURUS_LOG := build/docusaurus-check.log
# The suite as three pytest processes at once (tests/conftest.py `--shard`: spark, fleet, rest), each with
# its log in build/; the suite mostly waits on the processes it starts, so this halves its time on 2 cores.
SHARDS := spark fleet rest
test: lint system-deps wheelhouse node-deps
	@mkdir -p $(dir $(DOCUSAURUS_LOG))
	@rm -f .coverage .coverage.*
	@echo "setup and lint done, pytest's shards start: $$(date -u +%T)"
	@# the Docusaurus build overlaps pytest; its log is shown when it fails
	@# where CI's time goes: each shard lists its 15 slowest tests (--durations), writes every test's time
	@# to build/junit-SHARD.xml and ends its log with the CPU time it and the processes it waited for took
	$(MAKE) --no-print-directory docusaurus-check > $(DOCUSAURUS_LOG) 2>&1 & docs=$$!; \
	pids=; for shard in $(SHARDS); do \
		{ PYSPARK_PYTHON=$(abspath $(BIN)/python) $(BIN)/coverage run -p -m pytest --shard $$shard \
			--durations=15 --junitxml=build/junit-$$shard.xml; rc=$$?; \
		  echo "CPU of the shard (user system), its shell then what it waited for:"; times; exit $$rc; } \
			> build/pytest-$$shard.log 2>&1 & pids="$$pids $$!"; \
	done; \
	tests=0; for pid in $$pids; do wait $$pid || tests=1; done; \
	for shard in $(SHARDS); do echo "=== pytest --shard $$shard (build/pytest-$$shard.log)"; \
		cat build/pytest-$$shard.log; done; \
	if ! wait $$docs; then tail -n 60 $(DOCUSAURUS_LOG); echo "make docusaurus-check failed" >&2; exit 1; fi; \
	exit $$tests
	$(BIN)/coverage combine -q
	$(BIN)/coverage report  # branch coverage, failing under [tool.coverage.report] fail_under

# The lock files (requirements/*.txt) from pyproject.toml, for Python 3.11 on Linux x86_64 (the images' and
# CI's): dev (the venv), worker (+ spark), web (no Spark). Each is resolved within the one before it, so a
# package has one version everywhere; versions already locked are kept (`make lock LOCK_FLAGS=--upgrade`
# takes the newest). Run it after changing pyproject.toml; tests/test_locks.py says when it is due.
LOCK := $(BIN)/uv pip compile --quiet --native-tls --generate-hashes --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu --custom-compile-command 'make lock' $(LOCK_FLAGS) \
	pyproject.toml requirements/build.in
lock: setup
	$(LOCK) --extra dev -o requirements/dev.txt
	$(LOCK) --extra spark -c requirements/dev.txt -o requirements/worker.txt
	$(LOCK) -c requirements/worker.txt -o requirements/web.txt

# The web and worker images (Dockerfile targets), built with podman in .podman/ (deploy/build-images).
images: system-deps
	deploy/build-images

# Cutting a release: set `version` in pyproject.toml, commit, then `make release` tags that commit v<version>
# (annotated). Pushing the tag publishes it: the README's pre-commit `rev:` and Action `@ref` name this tag.
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
release:
	@git diff --quiet HEAD -- || { echo "release: commit or stash your changes first" >&2; exit 1; }
	@! git rev-parse -q --verify "refs/tags/v$(VERSION)" >/dev/null || { echo "release: v$(VERSION) exists; bump version in pyproject.toml" >&2; exit 1; }
	git tag -a "v$(VERSION)" -m "registry-bot $(VERSION)"
	@echo "tagged v$(VERSION) at $$(git rev-parse --short HEAD); publish it with: git push origin v$(VERSION)"

bench: setup
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(WHEELHOUSE) tests/node/node_modules .pytest_cache .mypy_cache .ruff_cache
