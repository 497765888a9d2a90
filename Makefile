# The two commands on a fresh machine (README, "The two commands"):
#
#   make demo    create .venv, install torch and dynadbg (with its test extra), open the debugger on the bundled demo
#   make test    the same set-up, then run the tests
#
# Variables (make test PYTHON=python3.12 ...):
#   PYTHON       the interpreter the environment is made from (3.11, 3.12 or 3.13)
#   VENV         where the environment goes (.ci/run gives each lane its own)
#   TORCH        the torch requirement (torch==2.13.0: the CPU wheel where pip finds one, else the index's build)
#   TORCH_INDEX  an index for torch alone, e.g. https://download.pytorch.org/whl/cpu for the small CPU-only wheel
#   PYTEST_ARGS  what pytest runs (default: everything under tests/)
#   EXTRAS       the project's extras to install (default: test; test,models adds transformers for tests/models)
#   DEMO_ARGS    arguments for `dynadbg demo` (e.g. DEMO_ARGS='--plain -c "s 3; stack; c"')

PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
PYTEST_ARGS ?=
EXTRAS ?= test
DEMO_ARGS ?=

STAMP := $(VENV)/.dynadbg-installed
TORCH_FROM := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX),)

.PHONY: demo test setup clean

demo: $(STAMP)
	$(VENV)/bin/dynadbg demo $(DEMO_ARGS)

# pytest's exit 5 (no tests collected, e.g. a PYTEST_ARGS selection with none) is not a failure
test: $(STAMP)
	$(VENV)/bin/python -m pytest -q $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi; exit $$status

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "dynadbg needs Python 3.11 or newer; run make with PYTHON=python3.11 (or 3.12, 3.13)")'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q $(TORCH_FROM) "$(TORCH)"
	$(VENV)/bin/python -m pip install -q -e ".[$(EXTRAS)]"
	@touch $(STAMP)

clean:
	rm -rf $(VENV)
