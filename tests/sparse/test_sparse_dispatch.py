"""Sparse tensors through the dispatcher: the function and method forms of registry ops run their
``"sparse_cpu"`` kernels, ops without one refuse as PyTorch does, and observers see sparse calls."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.profiler import profile

from ..conftest import assert_close
from .test_coo import IDX, VALS, pair, same_after_coalesce

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant checks|CSR tensor support):UserWarning")

D23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0
D32 = np.arange(6, dtype=np.float32).reshape(3, 2) * 0.5 - 1.0


def dense(a):
    return toolkit.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("form", ["mm", "matmul", "operator", "method", "sparse.mm"])
def test_sparse_times_dense_forms_match_torch(form):
    s, ts = pair()
    d, td = dense(D32)
    call = {"mm": lambda m, a, b: m.mm(a, b), "matmul": lambda m, a, b: m.matmul(a, b),
            "operator": lambda m, a, b: a @ b, "method": lambda m, a, b: a.mm(b),
            "sparse.mm": lambda m, a, b: m.sparse.mm(a, b)}[form]
    out, expected = call(toolkit, s, d), call(torch, ts, td)
    assert out.layout is toolkit.strided and expected.layout == torch.strided
    assert_close(out, expected)


def test_dense_times_sparse_and_vectors_match_torch():
    s, ts = pair()
    d, td = dense(D32)
    assert_close(toolkit.mm(d, s), torch.mm(td, ts))
    assert_close(d @ s, td @ ts)
    v, tv = dense(np.array([1.0, -2.0, 0.5], dtype=np.float32))
    assert_close(toolkit.matmul(s, v), torch.matmul(ts, tv))
    assert_close(toolkit.mv(s, v), torch.mv(ts, tv))


def test_addmm_matches_torch():
    s, ts = pair()
    d, td = dense(D32)
    c, tc = dense(np.full((2, 2), 0.25, dtype=np.float32))
    assert_close(toolkit.addmm(c, s, d), torch.addmm(tc, ts, td))
    assert_close(toolkit.addmm(c, s, d, beta=0.5, alpha=2.0), torch.addmm(tc, ts, td, beta=0.5, alpha=2.0))
    assert_close(toolkit.sparse.addmm(c, s, d), torch.sparse.addmm(tc, ts, td))
    with pytest.raises(RuntimeError) as theirs:
        torch.addmm(ts, ts, torch.ones(3, 3))
    with pytest.raises(RuntimeError) as ours:
        toolkit.addmm(s, s, toolkit.ones(3, 3))
    assert str(ours.value) == str(theirs.value)


def test_add_function_and_method_forms_match_torch():
    s, ts = pair()
    d, td = dense(D23)
    for call in (lambda m, a, b: m.add(a, b), lambda m, a, b: a.add(b), lambda m, a, b: a + b,
                 lambda m, a, b: m.add(a, b, alpha=2.5), lambda m, a, b: m.sub(a, b), lambda m, a, b: a - b):
        out, expected = call(toolkit, d, s), call(torch, td, ts)
        assert out.layout is toolkit.strided
        assert_close(out, expected)
    same_after_coalesce(toolkit.add(s, s, alpha=2), torch.add(ts, ts, alpha=2))
    same_after_coalesce(s.sub(s), ts.sub(ts))
    for call in (lambda m, a, b: m.add(a, b), lambda m, a, b: a.add(b), lambda m, a, b: a + b):
        with pytest.raises(RuntimeError) as theirs:
            call(torch, ts, td)
        with pytest.raises(RuntimeError) as ours:
            call(toolkit, s, d)
        assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_mul_and_unary_forms_match_torch():
    s, ts = pair()
    d, td = dense(D23)
    for call in (lambda m, a: m.mul(a, d if m is toolkit else td), lambda m, a: m.mul(d if m is toolkit else td, a),
                 lambda m, a: a * 2.0, lambda m, a: m.neg(a), lambda m, a: m.sin(a), lambda m, a: a.abs(),
                 lambda m, a: m.sqrt(a.abs()), lambda m, a: a / 4.0, lambda m, a: m.t(a),
                 lambda m, a: m.transpose(a, 0, 1), lambda m, a: m.clone(a), lambda m, a: m.relu(a)):
        out, expected = call(toolkit, s), call(torch, ts)
        assert out.layout is toolkit.sparse_coo and expected.layout == torch.sparse_coo
        assert_close(out.to_dense(), expected.to_dense())
    assert_close(toolkit.sum(s), torch.sum(ts))
    same_after_coalesce(toolkit.sum(s, 1), torch.sum(ts, 1))
    same_after_coalesce(toolkit.hspmm(s, dense(D32)[0]), torch.hspmm(ts, dense(D32)[1]))


def test_inplace_forms_match_torch():
    s, ts = pair()
    d, td = dense(D23)
    assert d.add_(s) is d
    td.add_(ts)
    assert_close(d, td)
    s2, ts2 = pair()
    assert s2.add_(s) is s2
    ts2.add_(ts)
    same_after_coalesce(s2, ts2)
    s2.mul_(3.0)
    ts2.mul_(3.0)
    same_after_coalesce(s2, ts2)
    assert s2.zero_() is s2 and s2._nnz() == 0 and tuple(s2.shape) == (2, 3)


@pytest.mark.parametrize("name", ["exp", "cumsum", "mean", "sigmoid", "log"])
def test_ops_without_a_sparse_kernel_raise_torchs_error(name):
    s, ts = pair()
    call = {"exp": lambda m, a: m.exp(a), "cumsum": lambda m, a: a.cumsum(0), "mean": lambda m, a: m.mean(a),
            "sigmoid": lambda m, a: a.sigmoid(), "log": lambda m, a: m.log(a)}[name]
    with pytest.raises(NotImplementedError) as theirs:
        call(torch, ts)
    with pytest.raises(NotImplementedError) as ours:
        call(toolkit, s)
    mine, their = str(ours.value), str(theirs.value)
    # PyTorch's op names carry overload suffixes of its own (aten::mean.dim); the text that follows is the same.
    assert mine.startswith(f"Could not run 'aten::{name}") and their.startswith(f"Could not run 'aten::{name}")
    tail = mine.split("' with arguments", 1)[1]
    assert their.split("' with arguments", 1)[1].startswith(tail)


def test_csr_through_the_dispatcher_matches_torch():
    d, td = dense(np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], dtype=np.float32))
    c, tc = d.to_sparse_csr(), td.to_sparse_csr()
    m, tm = dense(D32)
    assert_close(toolkit.mm(c, m), torch.mm(tc, tm))
    assert_close(c @ m, tc @ tm)
    assert_close(c.to_dense(), tc.to_dense())
    with pytest.raises(NotImplementedError, match="'SparseCsrCPU' backend"):
        toolkit.cumsum(c, 0)
    with pytest.raises(NotImplementedError, match="'SparseCsrCPU' backend"):
        torch.cumsum(tc, 0)


def test_gradients_through_function_forms_match_torch():
    v = toolkit.tensor(VALS, dtype=toolkit.float64, requires_grad=True)
    tv = torch.tensor(VALS, dtype=torch.float64, requires_grad=True)
    w, tw = dense(D32.astype(np.float64))
    w.requires_grad_(True)
    tw.requires_grad_(True)
    s = toolkit.sparse_coo_tensor(IDX, v, (2, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), tv, (2, 3))
    (toolkit.mm(s, w) * 2.0).sum().backward()
    (torch.mm(ts, tw) * 2.0).sum().backward()
    assert_close(v.grad, tv.grad)
    assert_close(w.grad, tw.grad)
    s = toolkit.sparse_coo_tensor(IDX, v, (2, 3))
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), tv, (2, 3))
    d = toolkit.zeros(2, 3, dtype=toolkit.float64, requires_grad=True)
    td = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    (toolkit.add(d, s) ** 2).sum().backward()
    (torch.add(td, ts) ** 2).sum().backward()
    assert_close(d.grad, td.grad)
    assert_close(v.grad, tv.grad)


def test_profiler_records_sparse_ops_by_aten_name():
    s, ts = pair()
    d, td = dense(D32)
    calls = (lambda m, a, b: m.mm(a, b), lambda m, a, b: m.sparse.mm(a, b), lambda m, a, b: a + a,
             lambda m, a, b: a.coalesce(), lambda m, a, b: a.to_dense())
    with profile() as p:
        for call in calls:
            call(toolkit, s, d)
    with torch.profiler.profile() as tp:
        for call in calls:
            call(torch, ts, td)
    ours = {e.name for e in p.events()}
    theirs = {e.name for e in tp.events()}
    for name in ("aten::mm", "aten::_sparse_mm", "aten::add", "aten::coalesce", "aten::to_dense"):
        assert name in theirs
        assert name in ours, f"{name} not among {sorted(ours)}"


@pytest.mark.parametrize("name", ["hspmm", "sparse.sum", "smm"])
def test_sparse_only_ops_refuse_strided_tensors_as_torch(name):
    call = {"hspmm": lambda m, a: m.hspmm(a, a), "sparse.sum": lambda m, a: m.sparse.sum(a), "smm": lambda m, a: m.smm(a, a)}[name]
    with pytest.raises(RuntimeError) as theirs:
        call(torch, torch.ones(2, 2))
    with pytest.raises(RuntimeError) as ours:
        call(toolkit, toolkit.ones(2, 2))
    assert type(ours.value) is type(theirs.value)
    assert str(theirs.value).startswith(str(ours.value))
