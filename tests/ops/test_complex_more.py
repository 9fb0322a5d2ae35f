"""Complex tensors, second pass: lazy conjugation, factories, moments and norms, sampling, scalar writes and
conversions, and the ops PyTorch refuses for complex input, each against torch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck, gradgradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")

Z = [1 + 2j, -0.5 + 0.25j, 2 - 1j, -1.5 - 0.75j]
W = [0.5 - 1j, 1 + 1j, -2 + 0.5j, 0.25 + 0.5j]
CDTYPES = [(toolkit.complex64, torch.complex64), (toolkit.complex128, torch.complex128)]


def _pair(data, dt=CDTYPES[0]):
    return toolkit.tensor(data, dtype=dt[0]), torch.tensor(data, dtype=dt[1])


def _same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert_close(ours.resolve_conj(), theirs.resolve_conj().resolve_neg())


def _same_error(fn):
    """``fn(toolkit)`` raises what ``fn(torch)`` raises: the same type and message."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(toolkit)
    assert str(ours.value) == str(theirs.value)


def _leaf(data, shape=None):
    t = toolkit.tensor(data, dtype=toolkit.complex128)
    return (t if shape is None else t.reshape(shape)).requires_grad_()


# ----------------------------------------------------------------------------- lazy conjugation
def test_conj_is_a_view_that_writes_through_conjugated():
    (z, tz) = _pair(Z)
    c, tc = z.conj(), tz.conj()
    assert c.is_conj() and c._base is z and c.data_ptr() == z.data_ptr()
    c[0] = 3j
    tc[0] = 3j
    _same(z, tz)
    c.mul_(2)
    tc.mul_(2)
    _same(z, tz)
    c[1:].add_(1 - 1j)
    tc[1:].add_(1 - 1j)
    _same(z, tz)
    c.copy_(toolkit.tensor(W, dtype=toolkit.complex64))
    tc.copy_(torch.tensor(W, dtype=torch.complex64))
    _same(z, tz)
    _same(c, tc)


def test_views_of_a_conjugate_keep_the_bit_and_ops_see_conjugated_values():
    z, tz = _pair(Z)
    c, tc = z.conj(), tz.conj()
    for f in (lambda t: t.reshape(2, 2), lambda t: t[1:], lambda t: t.unsqueeze(0), lambda t: t.detach()):
        assert f(c).is_conj() == f(tc).is_conj() is True
        _same(f(c), f(tc))
    _same(c.real, tc.real)
    _same(c.imag, tc.imag)
    for f in (lambda t: t * 2, lambda t: t + t.conj(), lambda t: t.abs(), lambda t: t.sum(), lambda t: t.exp(),
              lambda t: t.clone(), lambda t: t.to(torch.complex128 if isinstance(t, torch.Tensor)
                                                    else toolkit.complex128)):
        out, tout = f(c), f(tc)
        assert out.is_conj() == tout.is_conj()
        _same(out, tout)
    assert c.conj().is_conj() is False and c.conj().data_ptr() == z.data_ptr()
    assert c.tolist() == tc.tolist() and c[0].item() == tc[0].item()
    assert repr(c).replace("toolkit", "torch") == repr(tc)
    np.testing.assert_array_equal(np.asarray(c), tc.resolve_conj().numpy())


def test_conj_refusals_and_materialization_match_torch():
    _same_error(lambda m: m.tensor(Z).conj().numpy())
    _same_error(lambda m: m.view_as_real(m.tensor(Z).conj()))
    z, tz = _pair(Z)
    r = z.conj().resolve_conj()
    assert not r.is_conj() and r.data_ptr() != z.data_ptr()
    _same(r, tz.conj().resolve_conj())
    p = toolkit.conj_physical(z)
    assert not p.is_conj() and p.data_ptr() != z.data_ptr()
    x = toolkit.ones(2)
    assert x.conj() is x


def test_gradients_through_lazy_conjugates():
    z, w = _leaf(Z), _leaf(W)
    assert gradcheck(lambda a, b: (a.conj() * b).exp(), (z, w))
    assert gradcheck(lambda a: a.conj()[1:].reshape(3, 1) * a[:3].conj(), (z,))
    assert gradgradcheck(lambda a, b: a.conj() * b, (z, w))
    tz = torch.tensor(Z, dtype=torch.complex128, requires_grad=True)
    (z.conj() * w).abs().sum().backward()
    (tz.conj() * torch.tensor(W, dtype=torch.complex128)).abs().sum().backward()
    _same(z.grad, tz.grad)


def test_adjoints_conjugate():
    m, tm = _pair([[1 + 2j, 3j], [1, 2 - 1j]])
    for f in (lambda t: t.H, lambda t: t.mH, lambda t: t.adjoint()):
        assert f(m).is_conj() == f(tm).is_conj() is True
        _same(f(m), f(tm))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(toolkit.tensor(1 + 2j).H, torch.tensor(1 + 2j).H)
    x = toolkit.ones(2, 3)
    assert x.mH.shape == (3, 2) and not x.mH.is_conj()


# ----------------------------------------------------------------------------- factories
@pytest.mark.parametrize("args,kw", [
    ((0, 1 + 1j, 5), {}), ((1 + 1j, 3 - 2j, 7), {}), ((1 + 1j, 2, 1), {}), ((0, 1, 3), {"dtype": "complex64"}),
    ((-1j, 2 + 3j, 20), {"dtype": "complex128"}), ((2j, 1, 0), {}),
])
def test_linspace_and_logspace_with_complex(args, kw):
    for name in ("linspace", "logspace"):
        ours = getattr(toolkit, name)(*args, **{k: getattr(toolkit, v) for k, v in kw.items()})
        theirs = getattr(torch, name)(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        _same(ours, theirs)
    _same(toolkit.logspace(0, 1 + 1j, 4, base=2), torch.logspace(0, 1 + 1j, 4, base=2))


def test_factory_errors_with_complex():
    _same_error(lambda m: m.linspace(0, 1 + 1j, 3, dtype=m.float32))
    _same_error(lambda m: m.logspace(0, 1j, 3, dtype=m.float64))
    _same_error(lambda m: m.arange(0, 3, dtype=m.complex64))
    _same_error(lambda m: m.arange(0, 3, dtype=m.complex128))
    _same_error(lambda m: m.arange(0, 1j))


# ----------------------------------------------------------------------------- comparisons
def test_isclose_allclose_equal_eq_ne_on_complex():
    z, tz = _pair(Z)
    for d in (1e-3j, 1e-9j, 1e-3, 0):
        _same(toolkit.isclose(z, z + d), torch.isclose(tz, tz + d))
        assert toolkit.allclose(z, z + d) == torch.allclose(tz, tz + d)
        assert toolkit.equal(z, z + d) == torch.equal(tz, tz + d)
    nan, tnan = _pair([complex(math.nan, 1), 1j])
    _same(toolkit.isclose(nan, nan, equal_nan=True), torch.isclose(tnan, tnan, equal_nan=True))
    _same(z == z.conj(), tz == tz.conj())
    _same(z != 1 + 2j, tz != 1 + 2j)
    toolkit.testing.assert_close(z, z + 1e-7j)
    with pytest.raises(AssertionError) as ours:
        toolkit.testing.assert_close(z, z + 1e-3j)
    with pytest.raises(AssertionError) as theirs:
        torch.testing.assert_close(tz, tz + 1e-3j)
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------------------- moments and norms
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_var_std_and_means_of_complex_are_real(dt):
    data = [[1 + 2j, -0.5 + 1j, 3 - 1j], [0.2j, 1, 2 + 2j]]
    z, tz = _pair(data, dt)
    _same(z.var(), tz.var())
    _same(z.std(1), tz.std(1))
    _same(toolkit.var(z, 0, correction=0), torch.var(tz, 0, correction=0))
    for a, b in zip(toolkit.var_mean(z, 1, keepdim=True), torch.var_mean(tz, 1, keepdim=True)):
        _same(a, b)
    for a, b in zip(toolkit.std_mean(z), torch.std_mean(tz)):
        _same(a, b)
    leaf = _leaf(data)
    assert gradcheck(lambda t: t.std(1), (leaf,))
    assert gradcheck(lambda t: toolkit.var_mean(t, 0)[0] + toolkit.var_mean(t, 0)[1].abs(), (leaf,))
    assert gradgradcheck(lambda t: t.var(), (leaf,))


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, 0])
def test_vector_norm_of_complex_is_real(ord):
    data = [[1 + 2j, -0.5 + 1j, 3 - 1j], [0.2j, 1, 2 + 2j]]
    z, tz = _pair(data, CDTYPES[1])
    _same(toolkit.linalg.vector_norm(z, ord), torch.linalg.vector_norm(tz, ord))
    _same(toolkit.linalg.vector_norm(z, ord, dim=1, keepdim=True), torch.linalg.vector_norm(tz, ord, dim=1,
                                                                                            keepdim=True))
    if ord not in (0, math.inf, -math.inf):
        assert gradcheck(lambda t: toolkit.linalg.vector_norm(t, ord, dim=1), (_leaf(data),))


def test_norm_and_tensor_norm_of_complex():
    z, tz = _pair(Z)
    _same(toolkit.norm(z), torch.norm(tz))
    _same(z.norm(p=1), tz.norm(p=1))
    _same(toolkit.linalg.norm(z), torch.linalg.norm(tz))
    _same(toolkit.linalg.vector_norm(z, dtype=toolkit.complex128),
          torch.linalg.vector_norm(tz, dtype=torch.complex128))
    assert gradcheck(lambda t: t.norm(), (_leaf(Z),))


# ----------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_sinc_of_complex(dt):
    z, tz = _pair(Z + [0j, 2], dt)
    _same(toolkit.sinc(z), torch.sinc(tz))
    assert gradcheck(toolkit.sinc, (_leaf(Z),))


# ----------------------------------------------------------------------------- sampling
_SAMPLERS = [
    lambda m: m.randn(3, dtype=m.complex64),
    lambda m: m.randn(20, dtype=m.complex64),
    lambda m: m.randn(5, 4, dtype=m.complex128),
    lambda m: m.rand(2, 3, dtype=m.complex128),
    lambda m: m.rand(20, dtype=m.complex64),
    lambda m: m.randn_like(m.zeros(9, dtype=m.complex64)),
    lambda m: m.rand_like(m.zeros(2, dtype=m.complex64)),
    lambda m: m.zeros(3, dtype=m.complex64).normal_(),
    lambda m: m.zeros(17, dtype=m.complex128).normal_(1, 2),
    lambda m: m.zeros(2, dtype=m.complex64).uniform_(2, 3),
    lambda m: m.zeros(4, 3, dtype=m.complex64).t().normal_(),
    lambda m: m.normal(m.zeros(2, dtype=m.complex64), 1.0),
]


@pytest.mark.parametrize("sample", _SAMPLERS)
def test_complex_sampling_follows_torch_stream(sample):
    """Each part of a complex sample is drawn as the real view's values (N(mean, std^2/2) for normals)."""
    toolkit.manual_seed(0)
    torch.manual_seed(0)
    _same(sample(toolkit), sample(torch))


# ----------------------------------------------------------------------------- scalar writes and conversions
def _set(t, idx, value):
    t[idx] = value
    return t


_WRITES = [
    lambda m: _set(m.zeros(3, dtype=m.complex64), 0, 5j),
    lambda m: _set(m.zeros(3, dtype=m.complex128), slice(1, None), 2 - 1j),
    lambda m: _set(m.zeros(3), 0, 1 + 0j),
    lambda m: _set(m.zeros(2, dtype=m.bool), 0, 1j),
    lambda m: m.zeros(3, dtype=m.complex64).fill_(2 + 1j),
    lambda m: m.zeros(3).fill_(2 + 0j),
    lambda m: m.full((2,), 1j),
    lambda m: m.zeros(2, dtype=m.complex64).masked_fill_(m.tensor([True, False]), 1j),
    lambda m: m.zeros(2, dtype=m.complex128).index_fill_(0, m.tensor([1]), 3j),
]


@pytest.mark.parametrize("write", _WRITES)
def test_writing_complex_scalars(write):
    _same(write(toolkit), write(torch))


@pytest.mark.parametrize("fn", [
    lambda m: m.zeros(3, dtype=m.int32).__setitem__(0, 1j),
    lambda m: m.zeros(3, dtype=m.float64).__setitem__(0, 1j),
    lambda m: m.zeros(3).__setitem__(0, 1j),
    lambda m: m.zeros(3).fill_(1j),
    lambda m: m.zeros(2).masked_fill_(m.tensor([True, False]), 1j),
    lambda m: float(m.tensor([1 + 2j])),
    lambda m: int(m.tensor(2.7 + 1j)),
])
def test_complex_scalars_into_real_dtypes_raise_as_torch(fn):
    _same_error(fn)


def test_python_conversions_of_complex_tensors():
    for data in ([2 + 0j], 2.7 + 0j, 0j, [1 + 2j]):
        z, tz = toolkit.tensor(data), torch.tensor(data)
        assert bool(z) == bool(tz) and complex(z) == complex(tz)
        if complex(tz).imag == 0:
            assert float(z) == float(tz) and int(z) == int(tz)


def test_to_real_discards_the_imaginary_part_with_torch_warning():
    z, tz = _pair(Z)
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        r = z.to(toolkit.float32)
    _same(r, tz.real)
    _same(toolkit.ones(2).to(toolkit.complex64), torch.ones(2).to(torch.complex64))
    x = toolkit.tensor([1.0, -2.0], dtype=toolkit.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the cast back to real warns, as in torch
        assert gradcheck(lambda t: (t.to(toolkit.complex128) * (1 + 2j)).to(toolkit.float64), (x,))


# ----------------------------------------------------------------------------- reductions, joins, products
@pytest.mark.parametrize("f", [
    lambda m, z, w: z.reshape(2, 2).sum(1), lambda m, z, w: z.reshape(2, 2).prod(0),
    lambda m, z, w: z.cumsum(0), lambda m, z, w: z.reshape(2, 2).cumprod(1), lambda m, z, w: z.reshape(2, 2).mean(1),
    lambda m, z, w: m.where(z.real > 0, z, w), lambda m, z, w: m.where(z.real > 0, z, 0.5),
    lambda m, z, w: m.cat([z, w.real]), lambda m, z, w: m.stack([z.real, w]),
    lambda m, z, w: m.dot(z, w), lambda m, z, w: m.vdot(z, w), lambda m, z, w: m.mm(z.reshape(2, 2), w.reshape(2, 2)),
    lambda m, z, w: m.bmm(z.reshape(1, 2, 2), w.reshape(1, 2, 2)), lambda m, z, w: m.matmul(z.reshape(2, 2), w[:2]),
    lambda m, z, w: m.einsum("ij,jk->ik", z.reshape(2, 2), w.reshape(2, 2)),
], ids=["sum", "prod", "cumsum", "cumprod", "mean", "where", "where_scalar", "cat", "stack", "dot", "vdot", "mm",
        "bmm", "matmul", "einsum"])
def test_complex_reductions_joins_and_products_with_gradients(f):
    z, tz = _pair(Z, CDTYPES[1])
    w, tw = _pair(W, CDTYPES[1])
    _same(f(toolkit, z, w), f(torch, tz, tw))
    assert gradcheck(lambda a, b: f(toolkit, a, b), (_leaf(Z), _leaf(W)))


# ----------------------------------------------------------------------------- refusals, declared per op file
@pytest.mark.parametrize("f", [
    lambda m, z: z < z, lambda m, z: z.lt_(z), lambda m, z: z.max(), lambda m, z: z.max(0), lambda m, z: m.max(z, z),
    lambda m, z: z.clip(0, 1), lambda m, z: z.sort(), lambda m, z: z.abs_(), lambda m, z: m.erf(z),
    lambda m, z: z.fix(), lambda m, z: z // 2, lambda m, z: m.relu(z), lambda m, z: z.nanmean(),
    lambda m, z: z.digamma(), lambda m, z: m.heaviside(z, z), lambda m, z: z.amax(), lambda m, z: z.cummax(0),
    lambda m, z: z.isposinf(), lambda m, z: z.sign(), lambda m, z: z.unique(), lambda m, z: m.atan2(z, z),
    lambda m, z: z.floor(), lambda m, z: z.round(), lambda m, z: z.argmax(), lambda m, z: z.topk(1),
    lambda m, z: m.nn.functional.hardtanh(z), lambda m, z: m.nn.functional.softplus(z), lambda m, z: z.signbit(),
    lambda m, z: z.deg2rad(), lambda m, z: m.maximum(z, z), lambda m, z: z.absolute_(), lambda m, z: z.logit(),
])
def test_ops_refusing_complex_raise_torch_errors(f):
    _same_error(lambda m: f(m, m.tensor(Z)))


def test_sgn_still_takes_complex():
    z, tz = _pair(Z)
    _same(toolkit.sgn(z), torch.sgn(tz))
