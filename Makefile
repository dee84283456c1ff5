# Two commands on a machine with only Python 3.11 or 3.12, pip and make:
#   make demo   run au-bas-reconciliation-v1 through vf-eval against every scripted baseline and print the table
#   make test   run the whole test suite (unit, property, fuzz and end-to-end)
# uv is used when it is on PATH; otherwise it is installed into .tools/ with pip. uv never downloads
# Python: the interpreters are found by scripts/find_python.sh (PATH, then pyenv's versions).
# CI (.ci/run) runs `make ci`: the suite on Python 3.11 and on 3.12, and the text environments'
# tests against verifiers 0.3.1 (installed from their wheels).

PYTHON ?= python3
UV_VERSION := 0.13.9
UV := $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/bin/uv)
export UV_PYTHON_DOWNLOADS := never
FIND_PYTHON := $(CURDIR)/scripts/find_python.sh
# The interpreter of .venv (sync, demo, test): 3.11 when there is one, else 3.12.
PYTHON_VERSION ?= $(shell $(FIND_PYTHON) 3.11 >/dev/null 2>&1 && echo 3.11 || echo 3.12)
JOBS ?= 2
PYTEST_ARGS ?=

DEMO_POLICIES := oracle column-sums silent blanket garbage
DEMO_TASKS := 10
DEMO_OUT := outputs/demo

TEXT_PACKAGES := piv-core au-bas-reconciliation-v1 us-sut-reconciliation-v1 geo-reprojection-v1
TEXT_TESTS := packages/piv_core environments/au_bas_reconciliation_v1 environments/us_sut_reconciliation_v1 \
	environments/geo_reprojection_v1 tests/test_splits.py tests/test_prime_rl.py tests/test_noisy_ledgers.py
VF031 := $(CURDIR)/.venv-verifiers-0.3.1

.PHONY: demo test sync lint bench ci test-python-% test-verifiers-0.3.1

$(CURDIR)/.tools/bin/uv:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(CURDIR)/.tools "uv==$(UV_VERSION)"

sync: $(UV)
	@py="$$($(FIND_PYTHON) $(PYTHON_VERSION))" || exit 1; \
	$(UV) sync --all-packages --frozen --compile-bytecode --python "$$py"

demo: sync
	@mkdir -p $(DEMO_OUT); for policy in $(DEMO_POLICIES); do \
		echo "== baseline/$$policy"; \
		$(UV) run --no-sync eval @ configs/au-bas-reconciliation.toml --model baseline/$$policy -n $(DEMO_TASKS) \
			--no-rich -o $(DEMO_OUT) --run.name $$policy --clean > $(DEMO_OUT)/$$policy.log 2>&1 \
			|| { tail -n 40 $(DEMO_OUT)/$$policy.log; exit 1; }; \
		tail -n 1 $(DEMO_OUT)/$$policy.log; \
	done
	$(UV) run --no-sync summarize $(addprefix $(DEMO_OUT)/,$(DEMO_POLICIES)) --png $(DEMO_OUT)/summary.png

test: sync
	$(UV) run --no-sync pytest -n $(JOBS) -q $(PYTEST_ARGS)

# The suite on Python X.Y in its own environment (.venv-X.Y), e.g. `make test-python-3.12`.
test-python-%: $(UV)
	@py="$$($(FIND_PYTHON) $*)" || exit 1; echo "== the suite on $$py"; \
	export UV_PROJECT_ENVIRONMENT=$(CURDIR)/.venv-$*; \
	$(UV) sync --all-packages --frozen --compile-bytecode --python "$$py" && \
	$(UV) run --no-sync pytest -n $(JOBS) -q $(PYTEST_ARGS)

# piv-core and the text environments from their wheels, beside verifiers 0.3.1 (dependencies from
# the registry, the test tools at the versions uv.lock holds), and their tests against that copy.
test-verifiers-0.3.1: $(UV)
	@py="$$($(FIND_PYTHON) 3.12 2>/dev/null || $(FIND_PYTHON) 3.11)" || exit 1; \
	echo "== the text environments against verifiers 0.3.1 on $$py"; \
	rm -rf build/verifiers-0.3.1 && mkdir -p build/verifiers-0.3.1 && \
	for package in $(TEXT_PACKAGES); do \
		$(UV) build --quiet --wheel --package $$package --out-dir build/verifiers-0.3.1 || exit 1; \
	done && \
	$(UV) export --frozen --quiet --only-group dev --no-hashes --no-emit-workspace --no-header \
		-o build/verifiers-0.3.1/dev-requirements.txt && \
	$(UV) venv --quiet --clear --python "$$py" $(VF031) && \
	$(UV) pip install --quiet --python $(VF031)/bin/python build/verifiers-0.3.1/*.whl "verifiers==0.3.1" \
		-r build/verifiers-0.3.1/dev-requirements.txt && \
	$(VF031)/bin/python -c "import importlib.metadata as m; print('verifiers', m.version('verifiers'))" && \
	PATH="$(VF031)/bin:$(dir $(UV)):$$PATH" $(VF031)/bin/python -m pytest -p no:cacheprovider -n $(JOBS) -q \
		$(TEXT_TESTS)

ci:
	$(MAKE) test PYTHON_VERSION=3.11
	$(MAKE) test-python-3.12
	$(MAKE) test-verifiers-0.3.1

lint: sync
	$(UV) run --no-sync ruff check .

bench: sync
	$(UV) run --no-sync python bench/au_bas.py
