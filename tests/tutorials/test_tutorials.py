"""The tutorials run: the seed's examples give PyTorch's numbers with ``toolkit`` in place of ``torch``, and each
notebook's percent-script twin runs and checks everything its notebook checks."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TUTORIALS = os.path.join(ROOT, "tutorials")
NOTEBOOKS = os.path.join(ROOT, "notebooks")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"tutorial_{name}", os.path.join(TUTORIALS, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The two-layer tutorials' tolerance (the rule in tests/conftest.py): each step's forward sums over D_in = 1000
# and H = 100, the loss over the N * D_out = 640 outputs, the weight gradients over the batch of N = 64; the
# weights after k steps have summed k updates.
TWO_LAYER_STEP = 1000 + 100 + 640 + 64


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((64, 1000), (64, 10), (1000, 100), (100, 10))]


@pytest.mark.parametrize("script", sorted(f for f in os.listdir(TUTORIALS) if f.endswith(".py")))
def test_tutorial_runs(script):
    out = subprocess.run([sys.executable, os.path.join(TUTORIALS, script)], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip()


def _run_both(name, steps, grad=False, dtype=np.float64):
    mod = _load(name)
    arrays = [a.astype(dtype) for a in _data()]
    results = {}
    for lib in (toolkit, torch):
        mod.torch = lib  # the tutorial's ``import toolkit as torch``, swapped for the oracle
        ts = [lib.from_numpy(a.copy()) for a in arrays]
        if grad:
            ts[2].requires_grad_(True)
            ts[3].requires_grad_(True)
        losses = []
        w1, w2, _ = mod.train(*ts, steps=steps, log=lambda t, v, losses=losses: losses.append(float(v)))
        results[lib.__name__] = (w1.detach().numpy(), w2.detach().numpy(), np.array(losses))
    return results


def test_two_layer_tensors_match_pytorch():
    r = _run_both("two_layer_tensors", steps=50)
    for a, b in zip(r["toolkit"], r["torch"]):
        assert_close(a, b, accum=50 * TWO_LAYER_STEP)


def test_two_layer_autograd_matches_pytorch():
    r = _run_both("two_layer_autograd", steps=50, grad=True)
    for a, b in zip(r["toolkit"], r["torch"]):
        assert_close(a, b, accum=50 * TWO_LAYER_STEP)


def test_two_layer_tensors_match_numpy_version():
    mod = _load("two_layer_numpy")
    x, y, w1, w2 = _data()
    losses = []
    nw1, nw2, _ = mod.train(x, y, w1.copy(), w2.copy(), steps=50, log=lambda t, v: losses.append(v))
    r = _run_both("two_layer_tensors", steps=50)
    assert_close(r["toolkit"][0], nw1, accum=50 * TWO_LAYER_STEP)
    assert_close(r["toolkit"][2], np.array(losses), accum=50 * TWO_LAYER_STEP)


def test_rnn_step_matches_pytorch_and_seed_shape_error_matches():
    rng = np.random.default_rng(0)
    w_h, w_x, x, prev_h = (rng.standard_normal(s) for s in ((20, 20), (20, 10), (1, 10), (1, 20)))
    grads = {}
    for lib in (toolkit, torch):
        wh = lib.tensor(w_h, requires_grad=True)
        wx = lib.tensor(w_x, requires_grad=True)
        next_h = (lib.mm(wx, lib.tensor(x).t()) + lib.mm(wh, lib.tensor(prev_h).t())).tanh()
        # The slide's gradient has the wrong shape; both libraries refuse it the same way.
        with pytest.raises(RuntimeError, match="Mismatch in shape"):
            next_h.backward(lib.ones(1, 20, dtype=next_h.dtype))
        next_h.backward(lib.ones(20, 1, dtype=next_h.dtype))
        grads[lib.__name__] = (wh.grad.numpy(), wx.grad.numpy())
        assert type(next_h.grad_fn).__name__ == "TanhBackward0"
    for a, b in zip(grads["toolkit"], grads["torch"]):
        assert_close(a, b, accum=10 + 20)  # tanh of products over 10 and 20


@pytest.mark.parametrize("name", ["two_layer_nn", "two_layer_optim"])
def test_nn_and_optim_forms_match_pytorch(name):
    """Same seed, same initial weights (toolkit's generator matches PyTorch's), same losses."""
    mod = _load(name)
    losses = {}
    for lib in (toolkit, torch):
        mod.torch = lib
        lib.manual_seed(0)
        x, y = lib.randn(64, 1000), lib.randn(64, 10)
        model = mod.build()
        seen = []
        mod.train(x, y, model, steps=30, log=lambda t, v, seen=seen: seen.append(v))
        losses[lib.__name__] = np.array(seen, np.float32)  # float32 losses, logged as Python floats
    assert_close(losses["toolkit"], losses["torch"], accum=30 * TWO_LAYER_STEP)


def _twins() -> dict[str, str]:
    """notebook name -> the tutorial script whose header says it holds that notebook's material."""
    twins: dict[str, str] = {}
    for script in sorted(os.listdir(TUTORIALS)):
        if script.endswith(".py"):
            with open(os.path.join(TUTORIALS, script)) as f:
                m = re.search(r"The material of notebooks/(\S+\.ipynb)", f.read(2000))
            if m:
                assert m.group(1) not in twins, f"{m.group(1)} has two tutorials: {twins[m.group(1)]}, {script}"
                twins[m.group(1)] = script
    return twins


def _asserts(source: str) -> set[str]:
    return {ast.unparse(n) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert)}


@pytest.mark.parametrize("notebook", sorted(f for f in os.listdir(NOTEBOOKS) if f.endswith(".ipynb")))
def test_each_notebook_has_a_percent_script_checking_the_same_things(notebook):
    twins = _twins()
    assert notebook in twins, f"no tutorial says 'The material of notebooks/{notebook}'"
    with open(os.path.join(TUTORIALS, twins[notebook])) as f:
        script = f.read()
    assert script.startswith("# %%") and script.count("\n# %%") >= 3, "a jupytext percent script (# %% cells)"
    with open(os.path.join(NOTEBOOKS, notebook)) as f:
        cells = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    wanted = set().union(*(_asserts("".join(c["source"])) for c in cells
                          if not "".join(c["source"]).lstrip().startswith("%")))
    assert wanted, f"{notebook} asserts nothing"
    missing = wanted - _asserts(script)
    assert not missing, f"{twins[notebook]} leaves out checks of {notebook}: {sorted(missing)}"
