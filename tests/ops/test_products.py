"""Products beyond mm/matmul against PyTorch: tensordot's dims forms, inner, kron, cross (and its deprecated
default dim), chain_matmul, addbmm/addr and their in-place methods, trace, matrix_power, matrix_exp."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close, to_torch


def _pair(shape, rng, dtype=np.float64, requires_grad=False):
    a = rng.standard_normal(shape).astype(dtype)
    t = toolkit.tensor(a, requires_grad=requires_grad)
    return t, to_torch(t, requires_grad)


@pytest.mark.parametrize("sa,sb,dims", [
    ((3, 4, 2), (4, 2, 3), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
    ((3, 5, 4), (4, 2, 5), ([2, 1], [0, 2])), ((3, 2), (2, 3), [[0], [1]]),
])
def test_tensordot_dims_forms_values_and_grads(sa, sb, dims, rng):
    a, ta = _pair(sa, rng, requires_grad=True)
    b, tb = _pair(sb, rng, requires_grad=True)
    out, expected = toolkit.tensordot(a, b, dims=dims), torch.tensordot(ta, tb, dims=dims)
    assert_close(out, expected)
    g = rng.standard_normal(tuple(expected.shape))
    out.backward(toolkit.tensor(g))
    expected.backward(torch.from_numpy(g))
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


def test_tensordot_dims_tensor_and_errors(rng):
    a, ta = _pair((2, 3), rng)
    b, tb = _pair((3, 2), rng)
    assert_close(toolkit.tensordot(a, b, dims=toolkit.tensor(1)), torch.tensordot(ta, tb, dims=torch.tensor(1)))
    for dims, msg in ((-1, "tensordot expects dims >= 0"), (3, "tensordot expects dims < ndim_a or ndim_b"),
                      (([1], [1]), "contracted dimensions need to match"),
                      (([1, 0], [0]), "both dimension lists should have same length")):
        with pytest.raises(RuntimeError, match=msg):
            toolkit.tensordot(a, b, dims=dims)
        with pytest.raises(RuntimeError, match=msg):
            torch.tensordot(ta, tb, dims=dims)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (2, 3))])
def test_inner_and_kron(sa, sb, rng):
    a, ta = _pair(sa, rng, requires_grad=True)
    b, tb = _pair(sb, rng, requires_grad=True)
    assert_close(toolkit.inner(a, b), torch.inner(ta, tb))
    assert_close(a.inner(b), ta.inner(tb))
    out, expected = toolkit.kron(a, b), torch.kron(ta, tb)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(a.grad, ta.grad)
    assert_close(b.grad, tb.grad)


def test_inner_error():
    with pytest.raises(RuntimeError, match=r"inner\(\) the last dimension must match"):
        toolkit.inner(toolkit.ones(2, 3), toolkit.ones(4))


def test_cross_default_dim_warns_and_matches(rng):
    a, ta = _pair((3, 2), rng, requires_grad=True)
    b, tb = _pair((3, 2), rng)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        out = toolkit.cross(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.cross(ta, tb)
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    assert_close(a.grad, ta.grad)
    assert_close(a.cross(b, dim=0), ta.cross(tb, dim=0))
    assert_close(toolkit.linalg.cross(a, b, dim=0), torch.linalg.cross(ta, tb, dim=0))


def test_cross_errors():
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length 3. Got 3 and 2"):
        toolkit.linalg.cross(toolkit.ones(2, 3), toolkit.ones(2, 2))
    with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
        toolkit.cross(toolkit.ones(2, 2), toolkit.ones(2, 2))


def test_chain_matmul_warns_and_matches(rng):
    mats = [_pair(s, rng, requires_grad=True) for s in ((2, 3), (3, 4), (4, 2))]
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        out = toolkit.chain_matmul(*[m for m, _ in mats])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.chain_matmul(*[t for _, t in mats])
    assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for m, t in mats:
        assert_close(m.grad, t.grad)
    with pytest.raises(RuntimeError, match=r"chain_matmul\(\): Expected one or more matrices"):
        toolkit.chain_matmul([])


def test_addbmm_addr_methods_and_inplace(rng):
    s, ts = _pair((2, 3), rng)
    b1, tb1 = _pair((4, 2, 5), rng)
    b2, tb2 = _pair((4, 5, 3), rng)
    assert_close(s.addbmm(b1, b2, beta=0.5, alpha=2), ts.addbmm(tb1, tb2, beta=0.5, alpha=2))
    s2, ts2 = s.clone(), ts.clone()
    s2.addbmm_(b1, b2)
    ts2.addbmm_(tb1, tb2)
    assert_close(s2, ts2)
    v1, tv1 = _pair(2, rng)
    v2, tv2 = _pair(3, rng)
    assert_close(s.addr(v1, v2, alpha=3), ts.addr(tv1, tv2, alpha=3))
    s.addr_(v1, v2)
    ts.addr_(tv1, tv2)
    assert_close(s, ts)
    with pytest.raises(RuntimeError, match="Incompatible matrix sizes for bmm"):
        toolkit.addbmm(s, b1, toolkit.ones(4, 4, 3, dtype=toolkit.float64))
    ints = toolkit.ones(2, 3, dtype=toolkit.int64)
    with pytest.raises(RuntimeError, match="argument beta must not be a floating point number"):
        toolkit.addr(ints, toolkit.ones(2, dtype=toolkit.int64), toolkit.ones(3, dtype=toolkit.int64), beta=0.5)


def test_trace_dtypes_and_errors(rng):
    assert toolkit.trace(toolkit.ones(2, 2, dtype=toolkit.int32)).dtype is toolkit.int64
    a, ta = _pair((3, 4), rng)
    assert_close(a.trace(), ta.trace())
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 3"):
        toolkit.trace(toolkit.ones(2, 2, 2))


@pytest.mark.parametrize("n", [0, 1, 3, -2])
def test_matrix_power(n, rng):
    a = rng.standard_normal((2, 3, 3)) * 0.5 + np.eye(3)
    t = toolkit.tensor(a, requires_grad=True)
    tt = torch.tensor(a, requires_grad=True)
    out, expected = t.matrix_power(n), tt.matrix_power(n)
    assert_close(out, expected)
    assert_close(toolkit.linalg.matrix_power(t, n), torch.linalg.matrix_power(tt, n))
    out.sum().backward()
    expected.sum().backward()
    assert_close(t.grad, tt.grad)


def test_matrix_exp_values_grads_and_errors(rng):
    a = rng.standard_normal((2, 3, 3)) * 2
    t, tt = toolkit.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    out, expected = t.matrix_exp(), tt.matrix_exp()
    assert_close(out, expected)
    assert_close(toolkit.linalg.matrix_exp(t.float()), torch.linalg.matrix_exp(tt.float()))
    out.sum().backward()
    expected.sum().backward()
    assert_close(t.grad, tt.grad)
    with pytest.raises(RuntimeError, match="linalg.matrix_exp: Expected a floating point or complex tensor"):
        toolkit.matrix_exp(toolkit.ones(2, 2, dtype=toolkit.int64))
    with pytest.raises(RuntimeError, match="A must be batches of square matrices"):
        toolkit.linalg.matrix_exp(toolkit.ones(2, 3))
