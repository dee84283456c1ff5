# Two commands on a machine with only Python 3.11, pip and make:
#   make demo   run au-bas-reconciliation-v1 through vf-eval against every scripted baseline and print the table
#   make test   run the whole test suite (unit, property, fuzz and end-to-end)
# uv is used when it is on PATH; otherwise it is installed into .tools/ with pip.

PYTHON ?= python3
UV_VERSION := 0.13.9
UV := $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/bin/uv)
export UV_PYTHON_DOWNLOADS := never

DEMO_POLICIES := oracle column-sums silent blanket garbage
DEMO_TASKS := 10
DEMO_OUT := outputs/demo

.PHONY: demo test sync lint bench

$(CURDIR)/.tools/bin/uv:
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --target $(CURDIR)/.tools "uv==$(UV_VERSION)"

sync: $(UV)
	$(UV) sync --all-packages --frozen --compile-bytecode

demo: sync
	@mkdir -p $(DEMO_OUT); for policy in $(DEMO_POLICIES); do \
		echo "== baseline/$$policy"; \
		$(UV) run eval @ configs/au-bas-reconciliation.toml --model baseline/$$policy -n $(DEMO_TASKS) \
			--no-rich -o $(DEMO_OUT) --run.name $$policy --clean > $(DEMO_OUT)/$$policy.log 2>&1 \
			|| { tail -n 40 $(DEMO_OUT)/$$policy.log; exit 1; }; \
		tail -n 1 $(DEMO_OUT)/$$policy.log; \
	done
	$(UV) run summarize $(addprefix $(DEMO_OUT)/,$(DEMO_POLICIES)) --png $(DEMO_OUT)/summary.png

test: sync
	$(UV) run pytest

lint: sync
	$(UV) run ruff check .

bench: sync
	$(UV) run python bench/au_bas.py
