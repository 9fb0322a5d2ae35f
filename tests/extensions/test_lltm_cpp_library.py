"""The C++ LLTM (extensions/lltm_cpp) registered through toolkit.library: ``extension_cpp::lltm_forward`` (the
compiled forward wrapped by ``custom_op``) and ``extension_cpp::lltm_backward`` (the compiled backward given to
``Library.impl``) work as built-in ops do: values and gradients against the Python LLTM, gradcheck in double, one
node when traced or scripted, profiler events for both ops, and archives that load in a fresh process with the
extension imported (and fail naming the op without it).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import toolkit
from tests.conftest import assert_close
from tests.extensions.library_checks import (
    assert_unregistered_load_fails,
    load_example,
    load_in_fresh_process,
    save_model,
)

pytestmark = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                reason="no C++ compiler on this machine")
FORWARD, BACKWARD = "extension_cpp::lltm_forward", "extension_cpp::lltm_backward"
B, I, S = 3, 4, 5


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("extensions"))


@pytest.fixture(scope="module")
def lltm(build_dir):
    """The example module, its extension built in a fresh folder; its ops removed from the registry afterwards."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLKIT_EXTENSIONS_DIR", build_dir)
    module = load_example("extensions/lltm_cpp/lltm.py", "lltm_cpp_library")
    module.build()
    yield module
    module.lltm_forward._destroy()
    module._lib._destroy()
    mp.undo()


def _args(dtype=np.float64, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    shapes = [(B, I), (3 * S, I + S), (3 * S,), (B, S), (B, S)]
    return [toolkit.tensor(rng.uniform(-1, 1, s).astype(dtype), requires_grad=requires_grad) for s in shapes]


def _cell(lltm):
    toolkit.manual_seed(0)
    cell = lltm.LLTM(I, S)
    return cell, (toolkit.randn(B, I), (toolkit.randn(B, S), toolkit.randn(B, S)))


def test_compiled_functions_are_registry_ops(lltm):
    assert toolkit.ops.extension_cpp.lltm_forward is lltm.lltm_forward._opoverload
    assert toolkit.ops.extension_cpp.lltm_backward is lltm.lltm_backward
    assert str(lltm.lltm_forward._schema).endswith("-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_backward_match_the_python_lltm(lltm, dtype):
    ours, python = _args(dtype), _args(dtype)
    h, c = lltm.lltm(*ours)
    ph, pc = lltm.lltm_reference(*python)
    assert_close(h, ph, accum=I + S)
    assert_close(c, pc, accum=I + S)
    rng = np.random.default_rng(1)
    gh, gc = (toolkit.tensor(rng.standard_normal((B, S)).astype(dtype)) for _ in range(2))
    (h * gh + c * gc).sum().backward()
    (ph * gh + pc * gc).sum().backward()
    for a, p in zip(ours, python):
        assert_close(a.grad, p.grad, accum=3 * S * B)


def test_gradcheck_in_double(lltm):
    assert toolkit.autograd.gradcheck(lltm.lltm, _args(seed=2))


def test_a_wrong_shape_is_the_extensions_error(lltm):
    x, w, b, h, c = _args(requires_grad=False)
    with pytest.raises(ValueError, match=r"extension_cpp::lltm_forward: weights must be \[15, 9\]"):
        lltm.lltm(x, w[:, :8], b, h, c)


def test_trace_and_script_record_the_extension_op(lltm):
    cell, inputs = _cell(lltm)
    traced = toolkit.jit.trace(cell, inputs)
    assert [n.kind for n in traced.graph.nodes()].count(FORWARD) == 1
    scripted = toolkit.jit.script(cell)
    assert [n.kind for n in scripted.graph.nodes()].count(FORWARD) == 1
    want = cell(*inputs)
    for model in (traced, scripted, scripted):
        for got, w in zip(model(*inputs), want):
            assert_close(got, w)
    assert FORWARD in str(scripted.graph_for(*inputs))


def test_profiler_lists_forward_and_backward(lltm):
    cell, inputs = _cell(lltm)
    with toolkit.profiler.profile() as prof:
        h, c = cell(*inputs)
        (h.sum() + c.sum()).backward()
    names = {e.key for e in prof.key_averages()}
    assert {FORWARD, BACKWARD} <= names, names


def test_archive_loads_in_a_fresh_process_with_the_extension(lltm, build_dir, tmp_path):
    cell, inputs = _cell(lltm)
    path, data = save_model(toolkit.jit.script(cell), inputs, tmp_path)
    proc = load_in_fresh_process(path, data, "sys.path.insert(0, 'extensions/lltm_cpp'); import lltm",
                                 env={"TOOLKIT_EXTENSIONS_DIR": build_dir})
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr[-3000:]


def test_archive_without_the_extension_fails_naming_the_op(lltm, tmp_path):
    cell, inputs = _cell(lltm)
    path, data = save_model(toolkit.jit.trace(cell, inputs), inputs, tmp_path)
    assert_unregistered_load_fails(load_in_fresh_process(path, data, ""), FORWARD)
