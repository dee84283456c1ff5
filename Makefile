# Two commands on a machine with only Python 3.11 or 3.12, pip and make:
#   make demo   run au-bas-reconciliation-v1 through vf-eval against every scripted baseline and print the table
#   make test   run the whole test suite (unit, property, fuzz and end-to-end)
# uv is used when it is on PATH; otherwise it is installed into .tools/ with pip. uv never downloads
# Python: the interpreters are found by scripts/find_python.sh (PATH, then pyenv's versions).
# CI (.ci/run) runs `make ci`: each combination of Python and dependency versions once. The whole
# suite (end-to-end tests included) on Python 3.11 with the versions uv.lock holds; the text
# environments' tests against verifiers 0.3.1 on 3.12; and every package from its wheel with its
# dependencies at each end of the published ranges, the lowest on 3.11 and the highest on 3.12
# (`make test-ranges`). Those three run the unit tests and one real eval per environment.
# `make test-python-3.12` runs the whole suite on 3.12 with the locked versions.
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
	environments/geo_reprojection_v1 tests/test_splits.py tests/test_prime_rl.py tests/test_noisy_ledgers.py \
	tests/test_wheels.py
VF031 := $(CURDIR)/.venv-verifiers-0.3.1
# verifiers 0.3.1 runs its harness programs as PEP 723 scripts whose dependencies (an unpinned openai)
# uv resolves when a run starts, ignoring uv config and constraint files. openai 3 builds its clients
# on httpx2 and refuses the httpx timeout those programs pass, so their environments resolve from the
# registry as it stood while openai's newest release was 2.x (uv's exclude-newer, which they honour;
# the wheels and their dependencies install as usual).
VF031_SCRIPTS_BEFORE := 2026-08-10T00:00:00Z
# Both ends of the published ranges: every package's dependencies at the highest versions their
# ranges admit, and at the lowest the packages declare directly (test tools as uv.lock holds them).
RANGE_ENDS := highest lowest-direct
RANGE_PACKAGES := $(TEXT_PACKAGES) beancount-ledger
RANGE_PROJECTS := packages/piv_core/pyproject.toml $(wildcard environments/*/pyproject.toml)
RANGE_DIR := $(CURDIR)/build/ranges
RANGE_KEY := verifiers openai pydantic pydantic-core httpx tenacity aiohttp certifi beancount google-re2 \
	pyproj datasets matplotlib mcp
RANGE_TESTS := packages/piv_core environments tests/test_wheels.py
# Tests of what only a source checkout offers (dev worlds, the unmanifested override): not run from wheels.
RANGE_DESELECT := environments/beancount_ledger/tests/test_ladder.py::test_unset_level_serves_the_selectors_own_worlds \
	environments/beancount_ledger/tests/test_release.py::test_the_override_admits_unmanifested_worlds_in_the_source_tree
RANGE_PYTHON = $(FIND_PYTHON) 3.12 2>/dev/null || $(FIND_PYTHON) 3.11
# The lowest end on the oldest Python (3.12 when 3.11 is missing); the highest on RANGE_PYTHON.
RANGE_PYTHON_lowest-direct = $(FIND_PYTHON) 3.11 2>/dev/null || $(FIND_PYTHON) 3.12
# One real eval per environment against the baseline endpoint: environment id and policy.
RANGE_SMOKES := au-bas-reconciliation-v1:oracle us-sut-reconciliation-v1:oracle \
	geo-reprojection-v1:oracle beancount-ledger:reference
TEXT_SMOKES := $(filter-out beancount-ledger:%,$(RANGE_SMOKES))
# $(call smoke_evals,VENV,SMOKES,OUT,LABEL): one eval of 2 tasks per environment with VENV's piv-eval
# against the baseline endpoint; each must end with every episode completed.
smoke_evals = for smoke in $(2); do \
		env=$${smoke%%:*}; policy=$${smoke\#\#*:}; \
		PATH="$(1)/bin:$$PATH" $(1)/bin/piv-eval $$env --model baseline/$$policy -n 2 --no-rich \
			-o $(3)/evals --run.name $$env > $(3)/$$env.log 2>&1; \
		last="$$(tail -n 1 $(3)/$$env.log)"; echo "$(4): $$last"; \
		echo "$$last" | grep -Eq ' ([1-9][0-9]*) episodes?, \1 completed, 0 errors, 0 timeouts' \
			|| { tail -n 40 $(3)/$$env.log; exit 1; }; \
	done

.PHONY: demo test sync lint bench ci wheels test-python-% test-verifiers-0.3.1 test-ranges test-range-% range-wheels

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
	@command -v uv >/dev/null 2>&1 || printf '\n%s\n' 'uv is in .tools/bin; before the README'"'"'s uv commands: export PATH="$$PWD/.tools/bin:$$PATH"'

test: sync
	$(UV) run --no-sync pytest -n $(JOBS) -q $(PYTEST_ARGS)

# The suite on Python X.Y in its own environment (.venv-X.Y), e.g. `make test-python-3.12`.
test-python-%: $(UV)
	@py="$$($(FIND_PYTHON) $*)" || exit 1; echo "== the suite on $$py"; \
	export UV_PROJECT_ENVIRONMENT=$(CURDIR)/.venv-$*; \
	$(UV) sync --all-packages --frozen --compile-bytecode --python "$$py" && \
	$(UV) run --no-sync pytest -n $(JOBS) -q $(PYTEST_ARGS)

# piv-core and the text environments from their wheels, beside verifiers 0.3.1 (dependencies from
# the registry, the test tools at the versions uv.lock holds), and their tests against that copy:
# the unit tests with tests/test_wheels.py, and one eval per text environment against the baseline endpoint.
test-verifiers-0.3.1: $(UV)
	@py="$$($(RANGE_PYTHON))" || exit 1; \
	echo "== the text environments against verifiers 0.3.1 on $$py"; \
	rm -rf build/verifiers-0.3.1 && $(MAKE) --no-print-directory wheels WHEELS=build/verifiers-0.3.1 \
		WHEEL_PACKAGES="$(TEXT_PACKAGES)" && \
	$(UV) venv --quiet --clear --python "$$py" $(VF031) && \
	$(UV) pip install --quiet --python $(VF031)/bin/python build/verifiers-0.3.1/*.whl "verifiers==0.3.1" \
		-r build/verifiers-0.3.1/dev-requirements.txt && \
	$(VF031)/bin/python -c "import importlib.metadata as m; print('verifiers', m.version('verifiers'))" && \
	export UV_EXCLUDE_NEWER=$(VF031_SCRIPTS_BEFORE) && \
	PATH="$(VF031)/bin:$(dir $(UV)):$$PATH" $(VF031)/bin/python -m pytest -p no:cacheprovider -n $(JOBS) -q \
		-m "not e2e" $(TEXT_TESTS) && \
	mkdir -p build/verifiers-0.3.1/smoke && $(call smoke_evals,$(VF031),$(TEXT_SMOKES),build/verifiers-0.3.1/smoke,0.3.1)

# WHEEL_PACKAGES built into WHEELS, with the test tools uv.lock holds (WHEELS/dev-requirements.txt).
WHEELS ?= build/wheels
WHEEL_PACKAGES ?= $(RANGE_PACKAGES)
wheels: $(UV)
	@mkdir -p $(WHEELS) && for package in $(WHEEL_PACKAGES); do \
		$(UV) build --quiet --wheel --package $$package --out-dir $(WHEELS) || exit 1; \
	done && \
	$(UV) export --frozen --quiet --only-group dev --no-hashes --no-emit-workspace --no-header \
		-o $(WHEELS)/dev-requirements.txt

# Every package from its wheel, its dependencies resolved at END (`highest` or `lowest-direct`) of the
# ranges the packages publish, in .venv-range-END: the versions resolved, the unit tests (not e2e)
# with tests/test_wheels.py (the installed copy, and verifiers' own eval command against its
# piv-baseline), and one eval per environment against the baseline endpoint. `make test-ranges` runs both ends.
range-wheels: $(UV)
	@rm -rf $(RANGE_DIR)/wheels && $(MAKE) --no-print-directory wheels WHEELS=$(RANGE_DIR)/wheels

test-range-%: $(UV)
	@py="$$($(or $(RANGE_PYTHON_$*),$(RANGE_PYTHON)))" || exit 1; end=$*; venv=$(CURDIR)/.venv-range-$$end; out=$(RANGE_DIR)/$$end; \
	echo "== the packages with their dependencies at the $$end end of their ranges, on $$py"; \
	[ -f $(RANGE_DIR)/wheels/dev-requirements.txt ] || $(MAKE) --no-print-directory range-wheels || exit 1; \
	rm -rf $$out && mkdir -p $$out && \
	$(UV) pip compile --quiet --python "$$py" --resolution $$end --all-extras --no-sources \
		--find-links $(RANGE_DIR)/wheels $(RANGE_PROJECTS) $(RANGE_DIR)/wheels/dev-requirements.txt \
		-o $$out/resolved.txt && \
	grep -v -i -E '^($(subst $() ,|,$(RANGE_PACKAGES)))==' $$out/resolved.txt > $$out/dependencies.txt && \
	$(UV) venv --quiet --clear --python "$$py" $$venv && \
	$(UV) pip install --quiet --python $$venv/bin/python --no-deps -r $$out/dependencies.txt \
		$(RANGE_DIR)/wheels/*.whl && \
	$(UV) pip check --quiet --python $$venv/bin/python && \
	$$venv/bin/python -c "import importlib.metadata as m, sys; \
		print('$$end:', ', '.join(f'{p} {m.version(p)}' for p in sys.argv[1:]))" $(RANGE_KEY) && \
	PATH="$$venv/bin:$(dir $(UV)):$$PATH" $$venv/bin/python -m pytest -p no:cacheprovider -n $(JOBS) -q \
		-m "not e2e" $(addprefix --deselect ,$(RANGE_DESELECT)) $(RANGE_TESTS) && \
	$(call smoke_evals,$$venv,$(RANGE_SMOKES),$$out,$$end)

test-ranges: range-wheels
	@for end in $(RANGE_ENDS); do $(MAKE) --no-print-directory test-range-$$end || exit 1; done

ci:
	$(MAKE) test PYTHON_VERSION=3.11
	$(MAKE) test-verifiers-0.3.1
	$(MAKE) test-ranges

lint: sync
	$(UV) run --no-sync ruff check .

bench: sync
	$(UV) run --no-sync python bench/au_bas.py
