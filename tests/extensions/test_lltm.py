"""The numba LLTM (extensions/lltm.py) on toolkit.library: one custom op, ``extension::lltm_forward``, with its
backward registered, works as a built-in op does: values and gradients against the Python LLTM and PyTorch,
gradcheck and gradgradcheck in double, one node when traced or scripted, profiler events, and archives that load in a
fresh process with the extension imported (and fail naming the op without it).

The example module is loaded under a name of its own and its op removed again afterwards, so the registry's
generated tests never meet it.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from tests.extensions.library_checks import (
    ROOT,
    assert_unregistered_load_fails,
    load_example,
    load_in_fresh_process,
    save_model,
)

OP = "extension::lltm_forward"


@pytest.fixture(scope="module")
def lltm():
    module = load_example("extensions/lltm.py", "lltm_example")
    yield module
    module.lltm_forward._destroy()


def _core_arrays(seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (3, 4)).astype(dtype) for _ in range(4)]


def _cell(lltm, dtype=toolkit.float32):
    toolkit.manual_seed(0)
    cell = lltm.LLTM(4, 5).to(dtype)
    inputs = (toolkit.randn(3, 4, dtype=dtype), toolkit.randn(3, 5, dtype=dtype), toolkit.randn(3, 5, dtype=dtype))
    return cell, inputs


def test_op_is_registered_under_its_namespace(lltm):
    assert toolkit.ops.extension.lltm_forward is lltm.lltm_forward._opoverload
    assert str(lltm.lltm_forward._schema) == (
        "extension::lltm_forward(Tensor old_cell, Tensor candidate, Tensor input_gate, Tensor output_gate) "
        "-> (Tensor, Tensor)")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_backward_match_the_python_lltm_and_torch(lltm, dtype):
    arrays = _core_arrays(dtype=dtype)
    ours = [toolkit.tensor(a, requires_grad=True) for a in arrays]
    python = [toolkit.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    h, c = lltm.lltm_forward(*ours)
    ph, pc = lltm.lltm_reference(*python)
    tc = theirs[0] + theirs[1] * theirs[2]
    th = torch.tanh(tc) * theirs[3]
    for got, want in ((h, ph), (c, pc), (h, th), (c, tc)):
        assert_close(got, want)
    gh, gc = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(dtype)
    (h * toolkit.tensor(gh) + c * toolkit.tensor(gc)).sum().backward()
    (ph * toolkit.tensor(gh) + pc * toolkit.tensor(gc)).sum().backward()
    (th * torch.tensor(gh) + tc * torch.tensor(gc)).sum().backward()
    for a, p, t in zip(ours, python, theirs):
        assert_close(a.grad, p.grad)
        assert_close(a.grad, t.grad)
    assert type(h.grad_fn).__name__ == "GeneratedBackwardFor_extension_lltm_forward_defaultBackward"


def test_gradcheck_and_gradgradcheck_in_double(lltm):
    args = [toolkit.tensor(a, requires_grad=True) for a in _core_arrays(seed=2)]
    assert toolkit.autograd.gradcheck(lltm.lltm_forward, args)
    assert toolkit.autograd.gradgradcheck(lltm.lltm_forward, args)


def test_bad_shapes_are_an_error_naming_the_op(lltm):
    with pytest.raises(RuntimeError, match=r"extension::lltm_forward: shapes \(2, 3\), \(4,\)"):
        lltm.lltm_forward(toolkit.ones(2, 3), toolkit.ones(4), toolkit.ones(1), toolkit.ones(1))


def test_trace_records_one_extension_node_and_replays_eagerly(lltm):
    cell, inputs = _cell(lltm)
    traced = toolkit.jit.trace(cell, inputs)
    kinds = [n.kind for n in traced.graph.nodes()]
    assert kinds.count(OP) == 1
    for got, want in zip(traced(*inputs), cell(*inputs)):
        assert_close(got, want)
    other = (toolkit.randn(3, 4), toolkit.randn(3, 5), toolkit.randn(3, 5))
    for got, want in zip(traced(*other), cell(*other)):
        assert_close(got, want)


def test_script_resolves_the_op_and_graph_for_shows_it(lltm):
    cell, inputs = _cell(lltm)
    scripted = toolkit.jit.script(cell)
    assert f"= {OP}(%old_cell, %candidate, %input_gate, %output_gate)" in str(scripted.graph)
    for _ in range(2):  # the profiling run, then the optimized one
        for got, want in zip(scripted(*inputs), cell(*inputs)):
            assert_close(got, want)
    assert OP in str(scripted.graph_for(*inputs))
    h, c = scripted(*inputs)
    (h.sum() + c.sum()).backward()
    grads = [p.grad.clone() for p in cell.parameters()]
    cell.zero_grad()
    h, c = cell(*inputs)
    (h.sum() + c.sum()).backward()
    for g, p in zip(grads, cell.parameters()):
        assert_close(g, p.grad)


def test_profiler_lists_the_ops_events(lltm):
    cell, inputs = _cell(lltm)
    with toolkit.profiler.profile() as prof:
        h, c = cell(*inputs)
        (h.sum() + c.sum()).backward()
    names = [e.key for e in prof.key_averages()]
    assert OP in names, names
    assert next(e for e in prof.key_averages() if e.key == OP).count == 1


def test_archive_loads_in_a_fresh_process_with_the_extension(lltm, tmp_path):
    cell, inputs = _cell(lltm)
    scripted = toolkit.jit.script(cell)
    path, data = save_model(scripted, inputs, tmp_path)
    proc = load_in_fresh_process(path, data, "sys.path.insert(0, 'extensions'); import lltm")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr[-3000:]


@pytest.mark.parametrize("how", ["script", "trace"])
def test_archive_without_the_extension_fails_naming_the_op(lltm, tmp_path, how):
    cell, inputs = _cell(lltm)
    model = toolkit.jit.script(cell) if how == "script" else toolkit.jit.trace(cell, inputs)
    path, data = save_model(model, inputs, tmp_path)
    assert_unregistered_load_fails(load_in_fresh_process(path, data, ""), OP)


def test_example_script_trains():
    out = subprocess.run([sys.executable, "extensions/lltm.py"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "gradcheck: True" in out.stdout
