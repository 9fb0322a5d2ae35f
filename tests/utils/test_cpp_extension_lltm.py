"""The C++ LLTM of extensions/lltm_cpp (PyTorch's C++-extension tutorial), built with cpp_extension.load.

Its forward and backward are compared with the same cell in toolkit ops and in PyTorch, and gradchecked
through the example's autograd Function in double precision.
"""

from __future__ import annotations

import importlib.util
import os
import shutil

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close

pytestmark = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                reason="no C++ compiler on this machine")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B, I, S = 3, 4, 5


@pytest.fixture(scope="module")
def lltm(tmp_path_factory):
    """The example module, its extension built in a fresh folder."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLKIT_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
    spec = importlib.util.spec_from_file_location("lltm_cpp_example", os.path.join(ROOT, "extensions", "lltm_cpp",
                                                                                   "lltm.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build()
    yield module
    mp.undo()


def _arrays(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(B, I), (3 * S, I + S), (3 * S,), (B, S), (B, S)]
    return [rng.uniform(-1, 1, shape).astype(dtype) for shape in shapes]


def _torch_lltm(input, weights, bias, old_h, old_cell):
    """The tutorial's Python LLTM, in PyTorch."""
    X = torch.cat([old_h, input], dim=1)
    gates = torch.addmm(bias, X, weights.t()).chunk(3, dim=1)
    input_gate, output_gate = gates[0].sigmoid(), gates[1].sigmoid()
    candidate_cell = torch.nn.functional.elu(gates[2])
    new_cell = old_cell + candidate_cell * input_gate
    return torch.tanh(new_cell) * output_gate, new_cell


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_backward_match_the_python_lltm(lltm, dtype):
    arrays = _arrays(dtype)
    ours = [toolkit.tensor(a, requires_grad=True) for a in arrays]
    python = [toolkit.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    h, c = lltm.LLTMFunction.apply(*ours)
    ref_h, ref_c = lltm.lltm_reference(*python)
    th_h, th_c = _torch_lltm(*theirs)
    k = I + S  # terms in each gate's sum
    assert_close(h, th_h, accum=k)
    assert_close(c, th_c, accum=k)
    assert_close(h, ref_h, accum=k)
    rng = np.random.default_rng(1)
    gh, gc = rng.standard_normal((B, S)).astype(dtype), rng.standard_normal((B, S)).astype(dtype)
    (h * toolkit.tensor(gh) + c * toolkit.tensor(gc)).sum().backward()
    (ref_h * toolkit.tensor(gh) + ref_c * toolkit.tensor(gc)).sum().backward()
    (th_h * torch.tensor(gh) + th_c * torch.tensor(gc)).sum().backward()
    for a, p, t in zip(ours, python, theirs):
        assert_close(a.grad, t.grad, accum=3 * S * B)
        assert_close(a.grad, p.grad, accum=3 * S * B)


def test_raw_forward_returns_the_tutorials_seven_tensors(lltm):
    arrays = _arrays(np.float64)
    out = lltm.build().forward(*[toolkit.tensor(a) for a in arrays])
    assert [tuple(t.shape) for t in out] == [(B, S)] * 5 + [(B, I + S), (B, 3 * S)]
    assert all(isinstance(t, toolkit.Tensor) and t.dtype == toolkit.float64 for t in out)
    assert_close(out[5], np.concatenate([arrays[3], arrays[0]], 1))  # X = cat([old_h, input], 1)


def test_gradcheck_through_the_autograd_function(lltm):
    args = [toolkit.tensor(a, requires_grad=True) for a in _arrays(np.float64, seed=2)]
    assert toolkit.autograd.gradcheck(lltm.LLTMFunction.apply, args)


def test_module_trains_and_checks_shapes(lltm):
    toolkit.manual_seed(0)
    cell = lltm.LLTM(I, S)
    losses = lltm.train(cell, batch=B, steps=3, lr=0.05)
    assert losses[2] < losses[0]
    x, h, c = toolkit.randn(B, I), toolkit.randn(B, S), toolkit.randn(B, S)
    with pytest.raises(ValueError, match=r"weights must be \[15, 9\]"):
        lltm.build().forward(x, toolkit.zeros(15, 8), toolkit.zeros(15), h, c)
    with pytest.raises(RuntimeError, match="all tensors must have the dtype of input"):
        lltm.build().forward(x, cell.weights.double(), cell.bias, h, c)


def test_states_of_another_shape_are_refused_not_read_past_their_end(lltm):
    ext = lltm.build()
    x, w, b = toolkit.randn(B, I), toolkit.randn(3 * S, I + S), toolkit.randn(3 * S)
    h, c = toolkit.randn(B, S), toolkit.randn(B, S)
    for bad_h, bad_c in ((h[:1], c), (h, c[:1]), (h, toolkit.randn(B, S + 1))):
        with pytest.raises(ValueError, match=r"old_h and old_cell must be \[3, 5\]"):
            ext.forward(x, w, b, bad_h, bad_c)
    states = [toolkit.randn(B, S) for _ in range(6)]
    X, gates = toolkit.randn(B, I + S), toolkit.randn(B, 3 * S)
    with pytest.raises(ValueError, match=r"the state tensors must be \[3, 5\] as grad_h"):
        ext.backward(states[0], states[1][:1], *states[2:], X, gates, w)
    with pytest.raises(ValueError, match="X, gate_weights and weights must be"):
        ext.backward(*states, X[:1], gates, w)
