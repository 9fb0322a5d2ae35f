# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean venv notebooks

# visdom ships only as an sdist whose build imports pkg_resources, gone from setuptools 81 on, so its build
# environment needs setuptools<81. pip up to 25.x passes PIP_CONSTRAINT on to build environments; pip 26 and
# later read build constraints only from PIP_BUILD_CONSTRAINT. Both are set, so any pip from 23 to the newest
# builds it (an older pip ignores the variable it does not know).
BUILD_CONSTRAINTS := $(CURDIR)/.ci/build-constraints.txt

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	PIP_CONSTRAINT=$(BUILD_CONSTRAINTS) PIP_BUILD_CONSTRAINT=$(BUILD_CONSTRAINTS) $(PY) -m pip install --quiet -e '.[dev]'
	$(VISDOM_ASSETS)
	$(MAKE) --no-print-directory chromium
	$(MAKE) --no-print-directory graphviz
	$(MAKE) --no-print-directory mpi
	$(MAKE) --no-print-directory opencv
	touch $(STAMP)

venv: $(STAMP)

# The visdom web page's JavaScript/CSS/fonts/MathJax from the npm registry into visdom's static/ directory,
# so a local visdom server works offline; a check only when they are present, a message if npm is missing.
VISDOM_ASSETS = $(PY) -m toolkit.utils.visdom.assets
.PHONY: visdom-assets
visdom-assets: $(STAMP)
	$(VISDOM_ASSETS)

demo: $(STAMP)
	$(PY) -m toolkit.demo

test: $(STAMP)
	$(PY) -m pytest -q -n 2 -p no:cacheprovider tests

# Run every notebook in notebooks/ and store its outputs in it, so that readers see results and drawings first.
notebooks: $(STAMP)
	$(PY) notebooks/store_outputs.py

# JupyterLab on notebooks/ at http://127.0.0.1:$(LAB_PORT) (the URL with its token is printed; no browser is
# opened). Its config (settings, workspaces), data (the notebook signature database and its key) and the kernel's
# IPython and matplotlib files live in $(LAB_STATE), a git-ignored project folder kept between runs, never the home
# directory, so a notebook saved trusted stays trusted next time; runtime files (cookie secret, connection files)
# go to a temporary directory removed on exit. The repo's notebooks/ are signed trusted at each start
# (`jupyter trust`). --allow-root since containers often run as root. LAB_DIR, LAB_STATE, LAB_PORT, LAB_TOKEN
# (random when empty) and LAB_ARGS (more JupyterLab options) can be set.
LAB_DIR ?= notebooks
LAB_STATE ?= .lab
LAB_PORT ?= 8888
LAB_TOKEN ?=
LAB_ARGS ?=
.PHONY: lab
lab: $(STAMP)
	@s="$(abspath $(LAB_STATE))"; mkdir -p "$$s"; \
	d=$$(mktemp -d -t toolkit-lab-XXXXXX); trap 'rm -rf "$$d"' EXIT INT TERM; \
	token='$(LAB_TOKEN)'; [ -n "$$token" ] || token=$$($(PY) -c 'import secrets; print(secrets.token_hex(24))'); \
	export PATH="$(abspath $(dir $(PY))):$$PATH" JUPYTER_CONFIG_DIR="$$s/config" JUPYTER_DATA_DIR="$$s/data" \
		JUPYTER_RUNTIME_DIR="$$d/runtime" IPYTHONDIR="$$s/ipython" MPLCONFIGDIR="$$s/matplotlib"; \
	$(PY) -m jupyter trust "$(CURDIR)"/notebooks/*.ipynb >/dev/null; \
	echo "JupyterLab on $(LAB_DIR)/: http://127.0.0.1:$(LAB_PORT)/lab?token=$$token"; \
	$(PY) -m jupyterlab --allow-root --no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) \
		--IdentityProvider.token="$$token" --ServerApp.root_dir="$(LAB_DIR)" \
		--LabApp.news_url=None --LabApp.extension_manager=readonly \
		--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(LAB_ARGS)

bench: $(STAMP)
	$(PY) benchmarks/run.py --write

# A real NVIDIA GPU (README, "On a GPU"): the venv with the dev and cuda extras (numba-cuda and its CUDA wheels;
# only the NVIDIA driver comes from the machine), without the browser and system packages `make venv` adds.
# test-cuda runs tests/cuda on the GPU (those tests run wherever toolkit.cuda.is_available(); the simulator rerun
# of test_in_simulator.py is `make test`'s) and refuses to pass with every test skipped when numba finds no GPU.
# CUDA_PYTEST_ARGS picks the tests and workers. benchmarks/gpu_check.sh runs these once and keeps the results.
CUDA_STAMP := $(VENV)/.installed-cuda
CUDA_PYTEST_ARGS ?= -n 4 tests/cuda
.PHONY: cuda-venv test-cuda bench-cuda
$(CUDA_STAMP): pyproject.toml
	[ -x $(PY) ] || { $(PYTHON) -m venv $(VENV) && $(PY) -m pip install --quiet --upgrade pip; }
	PIP_CONSTRAINT=$(BUILD_CONSTRAINTS) PIP_BUILD_CONSTRAINT=$(BUILD_CONSTRAINTS) $(PY) -m pip install --quiet -e '.[dev,cuda]'
	touch $(CUDA_STAMP)

cuda-venv: $(CUDA_STAMP)

test-cuda: $(CUDA_STAMP)
	@$(PY) -c "import sys, toolkit; sys.exit(0 if toolkit.cuda.is_available() else \
		'test-cuda: numba.cuda finds no GPU (see nvidia-smi; TOOLKIT_CUDA_SIMULATOR=1 runs the simulator)')"
	$(PY) -m pytest -q -p no:cacheprovider --deselect tests/cuda/test_in_simulator.py::test_cuda_suite_in_simulator \
		$(CUDA_PYTEST_ARGS)

bench-cuda: $(CUDA_STAMP)
	$(PY) benchmarks/run.py --suite cuda

lint: $(STAMP)
	$(VENV)/bin/ruff check toolkit tests benchmarks tutorials
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

# Debian's Chromium for the notebook views' browser tests (driven headless by Playwright; no browser download).
# Idempotent; where apt cannot install it the browser tests skip and say why.
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null 2>&1 || { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 \
		|| echo "chromium: apt-get could not install it; the notebook browser tests will skip"; }

# Graphviz's dot (Debian's graphviz), which lays out the notebook graph views; the graphviz Python package is a
# dependency. Where apt cannot install it the views fall back to a one-column drawing and the tests needing dot skip.
.PHONY: graphviz
graphviz:
	@command -v dot >/dev/null 2>&1 || { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq graphviz) >/dev/null 2>&1 \
		|| echo "graphviz: apt-get could not install dot; graph views use their fallback drawing, dot tests skip"; }

# Open MPI (Debian's openmpi-bin, libopenmpi-dev) and mpi4py for toolkit.distributed and its tests. apt first
# (only when mpirun is missing), then mpi4py into the venv: it needs the system library to build or run, so it
# is installed here rather than in the dev extra. Where apt cannot install it the MPI tests skip and say why.
.PHONY: mpi
mpi:
	@command -v mpirun >/dev/null 2>&1 || { (export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq openmpi-bin libopenmpi-dev || { apt-get update -qq && \
		apt-get install -y -qq openmpi-bin libopenmpi-dev; }) >/dev/null 2>&1 \
		|| echo "mpi: apt-get could not install Open MPI (not root, or no apt); the MPI tests will skip"; }
	@$(PY) -c "import mpi4py" 2>/dev/null || { command -v mpirun >/dev/null 2>&1 \
		&& $(PY) -m pip install --quiet mpi4py \
		|| echo "mpi: mpi4py not installed (it needs Open MPI); the MPI tests will skip"; }

# OpenCV's C++ headers and libraries (Debian's libopencv-dev, found with pkg-config) for the C++-extension example
# extensions/warp_perspective and its tests. Idempotent; where apt cannot install them those tests skip and say why.
.PHONY: opencv
opencv:
	@pkg-config --exists opencv4 2>/dev/null || { (export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq libopencv-dev pkg-config || { apt-get update -qq && \
		apt-get install -y -qq libopencv-dev pkg-config; }) >/dev/null 2>&1 \
		|| echo "opencv: apt-get could not install libopencv-dev (not root, or no apt); the OpenCV extension tests will skip"; }
