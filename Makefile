# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	PIP_CONSTRAINT=$(CURDIR)/.ci/build-constraints.txt $(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m toolkit.demo

test: $(STAMP)
	$(PY) -m pytest -q -n 2 -p no:cacheprovider tests

bench: $(STAMP)
	$(PY) benchmarks/run.py --write

lint: $(STAMP)
	$(VENV)/bin/ruff check toolkit tests benchmarks tutorials

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
