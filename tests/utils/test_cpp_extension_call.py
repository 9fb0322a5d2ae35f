"""toolkit/extension.h's ops by name: ``toolkit::call`` and the helpers and operators built on it.

A C++ function calls a toolkit op by name and gets toolkit's own result (compared with toolkit's Python call and with
PyTorch's); an unknown name, or an op whose result is not a tensor where one is wanted, is an error naming the op.
One extension, built with load_inline into a fresh folder, holds every function.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.utils import cpp_extension

pytestmark = pytest.mark.skipif(shutil.which("c++") is None and shutil.which("g++") is None,
                                reason="no C++ compiler on this machine")

SOURCE = r"""
#include <string>
#include <thread>

toolkit::Tensor by_name(std::string op, toolkit::Tensor a, toolkit::Tensor b, toolkit::Tensor c) {
    return toolkit::call(op, a, b, c);
}
toolkit::Tensor addmm_t(toolkit::Tensor bias, toolkit::Tensor x, toolkit::Tensor w) {
    return toolkit::call("addmm", bias, x, w.t());
}
toolkit::Tensor unary(std::string op, toolkit::Tensor x) { return toolkit::call(op, x); }
toolkit::Tensor sum_keepdim(toolkit::Tensor x, int64_t dim) {
    return toolkit::call("sum", x, py::arg("dim") = dim, py::arg("keepdim") = true);
}
std::vector<toolkit::Tensor> chunks(toolkit::Tensor x, int64_t n) { return toolkit::call_list("chunk", x, n, 1); }
int64_t numel_object(toolkit::Tensor x) { return toolkit::call_object("numel", x).cast<int64_t>(); }
toolkit::Tensor helpers(toolkit::Tensor x, toolkit::Tensor y) {
    // The tutorial's spelling: named helpers, methods and operators, numbers on either side.
    auto z = toolkit::cat({x, y}, 1);
    auto g = toolkit::mm(z, z.transpose(0, 1)) - 0.5;
    auto e = toolkit::elu(g, 0.5) * toolkit::sigmoid(g) + toolkit::tanh(g) / 3.0;
    return (1 - e) * (g > 0).type_as(g) + e.exp().pow(2).sum(0, true) - (-z.slice(1, 2).t().mm(z.slice(1, 0, 3)));
}
toolkit::Tensor double_in_a_thread(toolkit::Tensor x) {
    // A thread of its own takes the GIL around the op and the tensors it holds, as pybind11 requires.
    toolkit::Tensor out;
    py::gil_scoped_release release;
    std::thread worker([&] {
        py::gil_scoped_acquire gil;
        out = x * 2.0;
    });
    worker.join();
    return out;
}
"""
FUNCTIONS = ["by_name", "addmm_t", "unary", "sum_keepdim", "chunks", "numel_object", "helpers", "double_in_a_thread"]


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    return cpp_extension.load_inline("tk_call_ops", SOURCE, functions=FUNCTIONS,
                                     build_directory=str(tmp_path_factory.mktemp("call")))


def _arrays(*shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(dtype) for shape in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_op_called_by_name_gives_toolkits_result(ext, dtype):
    bias, x, w = _arrays((5,), (3, 4), (5, 4), dtype=dtype)
    out = ext.addmm_t(toolkit.tensor(bias), toolkit.tensor(x), toolkit.tensor(w))
    assert isinstance(out, toolkit.Tensor) and out.dtype == toolkit.tensor(x).dtype
    assert_close(out, toolkit.addmm(toolkit.tensor(bias), toolkit.tensor(x), toolkit.tensor(w).t()))
    assert_close(out, torch.addmm(torch.tensor(bias), torch.tensor(x), torch.tensor(w).t()), accum=4)
    m, a, b = _arrays((3, 3), (3, 2), (2, 3), seed=1, dtype=dtype)
    for name in ("addmm", "aten::addmm"):  # the plain name and the registry's aten spelling
        assert_close(ext.by_name(name, *map(toolkit.tensor, (m, a, b))),
                     torch.addmm(*map(torch.tensor, (m, a, b))), accum=2)


def test_names_reach_functional_dotted_and_registered_ops(ext):
    (x,) = _arrays((4, 6), seed=2)
    tx, th = toolkit.tensor(x), torch.tensor(x)
    assert_close(ext.unary("elu", tx), torch.nn.functional.elu(th))  # as torch::elu: toolkit.nn.functional.elu
    assert_close(ext.unary("nn.functional.softsign", tx), torch.nn.functional.softsign(th))
    assert_close(ext.unary("special.expit", tx), torch.special.expit(th))
    assert_close(ext.sum_keepdim(tx, 1), th.sum(1, keepdim=True))
    parts = ext.chunks(tx, 3)
    assert [tuple(p.shape) for p in parts] == [(4, 2)] * 3
    for ours, theirs in zip(parts, th.chunk(3, 1)):
        assert_close(ours, theirs)
    assert ext.numel_object(tx) == 24


def test_an_unknown_op_name_is_an_error_naming_it(ext):
    x = toolkit.zeros(2)
    with pytest.raises(AttributeError, match="no toolkit op named 'no_such_op'"):
        ext.unary("no_such_op", x)
    with pytest.raises(AttributeError, match="no toolkit op named 'nn.no_such_module.relu'"):
        ext.unary("nn.no_such_module.relu", x)
    with pytest.raises(AttributeError, match="no toolkit op named 'no_such_namespace::relu'"):
        ext.unary("no_such_namespace::relu", x)
    with pytest.raises(TypeError, match="op 'numel' returned int, not a tensor"):
        ext.unary("numel", x)


def test_an_ops_own_error_reaches_python_unchanged(ext):
    a, b, c = (toolkit.zeros(3, 3), toolkit.zeros(3, 2), toolkit.zeros(3, 3))
    with pytest.raises(RuntimeError) as ours:
        ext.by_name("addmm", a, b, c)
    with pytest.raises(RuntimeError) as python:
        toolkit.addmm(a, b, c)
    assert str(ours.value) == str(python.value)


def test_helpers_methods_and_operators_match_torch(ext):
    x, y = _arrays((3, 2), (3, 3), seed=3)
    z = np.concatenate([x, y], 1)
    tz = torch.tensor(z)
    g = tz @ tz.t() - 0.5
    e = torch.nn.functional.elu(g, 0.5) * torch.sigmoid(g) + torch.tanh(g) / 3.0
    expected = (1 - e) * (g > 0).type_as(g) + e.exp().pow(2).sum(0, True) - (-tz[:, 2:].t().mm(tz[:, 0:3]))
    assert_close(ext.helpers(toolkit.tensor(x), toolkit.tensor(y)), expected, accum=5)


def test_an_op_from_a_thread_of_its_own(ext):
    x = toolkit.arange(4, dtype=toolkit.float32)
    out = ext.double_in_a_thread(x)
    assert out.dtype == toolkit.float32
    assert_close(out, np.arange(4, dtype=np.float32) * 2)
