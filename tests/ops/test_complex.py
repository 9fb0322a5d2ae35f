"""Complex tensors: parts, conjugation, polar form, printing, and elementwise math and reductions, against torch."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit

from ..conftest import assert_close

torch = pytest.importorskip("torch")

Z = [1 + 2j, -0.5 + 0.25j, 2 - 1j, -1.5 - 0.75j]
W = [0.5 - 1j, 1 + 1j, -2 + 0.5j, 0.25 + 0.5j]
CDTYPES = [(toolkit.complex64, torch.complex64), (toolkit.complex128, torch.complex128)]


def _pair(data, dt):
    return toolkit.tensor(data, dtype=dt[0]), torch.tensor(data, dtype=dt[1])


def _same(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert_close(ours.resolve_conj(), theirs.resolve_conj())  # a lazy conjugate refuses numpy(), as in torch


# ----------------------------------------------------------------------------- printing
@pytest.mark.parametrize("data", [[1 + 2j, 3 - 1j], [1.5 + 2j, 3 - 1.25j], [1e10 + 1j], 1j, [[1 + 2j, -0.5j],
                                                                                          [float("nan"), 2]],
                                  [complex(0, -0.0), complex(-0.0, 0)], [float("inf") + 1j, 2]])
def test_repr_matches_torch(data):
    assert repr(toolkit.tensor(data)) == repr(torch.tensor(data)).replace("torch.", "toolkit.")
    assert repr(toolkit.tensor(data, dtype=toolkit.complex128)) == repr(
        torch.tensor(data, dtype=torch.complex128)).replace("torch.", "toolkit.")


def test_repr_of_long_and_empty_complex_tensors_matches_torch():
    data = np.arange(30) * (1 + 0.5j)
    big = np.arange(2000) * (1 - 1j)
    for ours, theirs in [(toolkit.tensor(data.reshape(5, 6)), torch.tensor(data.reshape(5, 6))),
                         (toolkit.zeros(0, dtype=toolkit.complex64), torch.zeros(0, dtype=torch.complex64)),
                         (toolkit.tensor(big), torch.tensor(big)),
                         (toolkit.tensor(big.astype(np.complex64)), torch.tensor(big.astype(np.complex64)))]:
        assert repr(ours) == repr(theirs).replace("torch.", "toolkit.")


def test_repr_follows_the_default_dtype():
    toolkit.set_default_dtype(toolkit.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(toolkit.tensor([1 + 2j])) == repr(torch.tensor([1 + 2j])) == "tensor([1.+2.j])"
        assert repr(toolkit.tensor([1 + 2j], dtype=toolkit.complex64)).endswith("dtype=toolkit.complex64)")
    finally:
        toolkit.set_default_dtype(toolkit.float32)
        torch.set_default_dtype(torch.float32)


# ----------------------------------------------------------------------------- parts and views
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_real_imag_are_views(dt):
    z, tz = _pair(Z, dt)
    _same(z.real, tz.real)
    _same(z.imag, tz.imag)
    _same(toolkit.real(z), torch.real(tz))
    _same(toolkit.imag(z), torch.imag(tz))
    z.real[0] = 10.0
    z.imag[1] = -7.0
    assert z[0].item() == 10 + 2j and z[1].item() == -0.5 - 7j
    z.imag = toolkit.zeros(4)
    assert toolkit.isreal(z).all().item()


def test_real_of_real_tensor_and_imag_errors():
    x = toolkit.tensor([1.0, 2.0])
    assert toolkit.real(x).data_ptr() == x.data_ptr() and x.real.dtype is toolkit.float32
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        _ = x.imag
    with pytest.raises(RuntimeError):
        _ = torch.tensor([1.0]).imag
    assert toolkit.isreal(x).all().item()
    _same(toolkit.isreal(toolkit.tensor([1 + 0j, 1j])), torch.isreal(torch.tensor([1 + 0j, 1j])))


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_view_as_real_and_back(dt):
    z, tz = _pair([Z, W], dt)
    r = toolkit.view_as_real(z)
    _same(r, torch.view_as_real(tz))
    assert r.stride() == torch.view_as_real(tz).stride()
    r[0, 0, 1] = 9.0
    assert z[0, 0].item().imag == 9.0
    back = toolkit.view_as_complex(r)
    assert back.dtype is dt[0] and back.data_ptr() == z.data_ptr()
    _same(toolkit.view_as_real(z[:, 1]), torch.view_as_real(tz[:, 1]))
    _same(toolkit.view_as_real(toolkit.tensor(1 + 1j)), torch.view_as_real(torch.tensor(1 + 1j)))


def test_view_as_complex_errors_match_torch():
    cases = [
        lambda m: m.zeros(3, 3),                                      # last dim is not 2
        lambda m: m.zeros(2, 4)[:, ::2],                               # last dim stride is not 1
        lambda m: m.zeros(3, 2, dtype=m.int64),                        # not float or double
        lambda m: m.zeros(3, 3, 2)[:, 1],                              # fine
        lambda m: m.zeros(7, dtype=m.float64)[1:].view(3, 2),          # odd storage offset
        lambda m: m.zeros(3, 3, 2).transpose(0, 1),                    # fine
        lambda m: m.zeros(3, 5)[:, :2],                                # odd stride
    ]
    for make in cases:
        try:
            expected = torch.view_as_complex(make(torch))
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e).split("\n")[0]):
                toolkit.view_as_complex(make(toolkit))
        else:
            _same(toolkit.view_as_complex(make(toolkit)), expected)
    with pytest.raises(RuntimeError, match="view_as_real is only supported for complex tensors"):
        toolkit.view_as_real(toolkit.ones(2))


# ----------------------------------------------------------------------------- conjugation
def test_conj_bit_as_torch_shows_it():
    z, tz = _pair(Z, CDTYPES[0])
    c, tc = z.conj(), tz.conj()
    assert c.is_conj() == tc.is_conj() is True
    _same(c, tc)
    r, tr = c.resolve_conj(), tc.resolve_conj()
    assert r.is_conj() == tr.is_conj() is False
    _same(r, tr)
    assert c.conj().is_conj() == tc.conj().is_conj() is False
    _same(c.conj(), tc.conj())
    assert z.resolve_conj() is z
    x = toolkit.ones(3)
    assert x.conj() is x and not x.conj().is_conj()
    p = toolkit.conj_physical(z)
    assert not p.is_conj()
    _same(p, torch.conj_physical(tz))
    _same(toolkit.conj_physical(toolkit.tensor([1.0, -2.0])), torch.conj_physical(torch.tensor([1.0, -2.0])))
    _same(c * 2, tc * 2)
    assert not (c * 2).is_conj()


# ----------------------------------------------------------------------------- polar form and construction
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_angle_abs_polar_complex(dt):
    z, tz = _pair(Z + [0j], dt)
    _same(toolkit.angle(z), torch.angle(tz))
    _same(toolkit.abs(z), torch.abs(tz))
    _same(z.abs(), tz.abs())
    real_dt = toolkit.float32 if dt[0] is toolkit.complex64 else toolkit.float64
    r, t = toolkit.rand(3, 4, dtype=real_dt), toolkit.rand(3, 4, dtype=real_dt) * 6 - 3
    tr, tt = torch.from_numpy(r.numpy()), torch.from_numpy(t.numpy())
    _same(toolkit.polar(r, t), torch.polar(tr, tt))
    _same(toolkit.complex(r, t), torch.complex(tr, tt))
    _same(toolkit.complex(r, t[0]), torch.complex(tr, tt[0]))


def test_angle_of_real_tensors_matches_torch():
    data = [-1.5, 0.0, -0.0, 2.0, float("nan"), float("-inf")]
    _same(toolkit.angle(toolkit.tensor(data)), torch.angle(torch.tensor(data)))
    _same(toolkit.angle(toolkit.tensor([-2, 0, 3])), torch.angle(torch.tensor([-2, 0, 3])))


def test_complex_and_polar_errors_match_torch():
    f, d = toolkit.ones(2), toolkit.ones(2, dtype=toolkit.float64)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double"):
        toolkit.complex(f, d)
    with pytest.raises(RuntimeError):
        torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double tensors"):
        toolkit.polar(toolkit.ones(2, dtype=toolkit.int64), toolkit.ones(2, dtype=toolkit.int64))


# ----------------------------------------------------------------------------- math
UNARY = ["neg", "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "reciprocal", "sigmoid", "rsqrt",
         "square", "asin", "acos", "atan", "log2", "log10", "log1p", "expm1", "exp2", "sgn", "isnan", "isfinite",
         "isinf", "conj_physical", "positive"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_unary_math_matches_torch(name, dt):
    z, tz = _pair(Z, dt)
    _same(getattr(toolkit, name)(z), getattr(torch, name)(tz))




@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "eq", "ne", "true_divide"])
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_binary_math_matches_torch(name, dt):
    z, tz = _pair(Z, dt)
    w, tw = _pair(W, dt)
    _same(getattr(toolkit, name)(z, w), getattr(torch, name)(tz, tw))
    _same(getattr(toolkit, name)(z, 1.5 - 0.5j), getattr(torch, name)(tz, 1.5 - 0.5j))
    _same(getattr(toolkit, name)(z, 2), getattr(torch, name)(tz, 2))


def test_operators_and_mixed_dtypes_match_torch():
    z, tz = _pair(Z, CDTYPES[0])
    x, tx = toolkit.tensor([1.0, 2.0, 3.0, 4.0], dtype=toolkit.float64), torch.tensor([1.0, 2.0, 3.0, 4.0],
                                                                                      dtype=torch.float64)
    i, ti = toolkit.arange(4), torch.arange(4)
    for ours, theirs in [(z + x, tz + tx), (x * 1j, tx * 1j), (i + 2j, ti + 2j), (1j - z, 1j - tz),
                         (2 / z, 2 / tz), (z ** 2, tz ** 2), (-z, -tz), (z @ z, tz @ tz),
                         (i * z, ti * tz), (x / (1 + 1j), tx / (1 + 1j))]:
        _same(ours, theirs)
    y = z.clone()
    y += 1j
    y *= x.float()
    ty = tz.clone()
    ty += 1j
    ty *= tx.float()
    _same(y, ty)


@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_reductions_and_products_match_torch(dt):
    z, tz = _pair([Z, W, Z[::-1]], dt)
    _same(z.sum(), tz.sum())
    _same(z.sum(0), tz.sum(0))
    _same(z.mean(), tz.mean())
    _same(z.mean(1, keepdim=True), tz.mean(1, keepdim=True))
    _same(z.prod(1), tz.prod(1))
    _same(z.cumsum(1), tz.cumsum(1))
    _same(toolkit.logsumexp(z, 1), torch.logsumexp(tz, 1))
    _same(z @ z.T, tz @ tz.T)
    _same(toolkit.mm(z, z.T), torch.mm(tz, tz.T))
    _same(toolkit.matmul(z[0], z.T), torch.matmul(tz[0], tz.T))
    _same(toolkit.dot(z[0], z[1]), torch.dot(tz[0], tz[1]))
    _same(toolkit.vdot(z[0], z[1]), torch.vdot(tz[0], tz[1]))
    _same(toolkit.outer(z[0], z[1]), torch.outer(tz[0], tz[1]))


def test_conversions_match_torch():
    z, tz = _pair(Z, CDTYPES[0])
    assert z.type().split(".")[-1] == tz.type().split(".")[-1] == "ComplexFloatTensor"
    _same(toolkit.ones(2).cfloat(), torch.ones(2).cfloat())
    _same(toolkit.ones(2).cdouble(), torch.ones(2).cdouble())
    _same(z.to(toolkit.complex128), tz.to(torch.complex128))
    _same(z.clone(), tz.clone())
    _same(toolkit.ones(2).to(toolkit.cfloat), torch.ones(2).to(torch.cfloat))
    _same(toolkit.arange(3).to(toolkit.complex128), torch.arange(3).to(torch.complex128))
    y = toolkit.zeros(4, dtype=toolkit.complex64)
    y.copy_(z)
    _same(y, tz)
    y.copy_(toolkit.ones(4))
    _same(y, torch.ones(4, dtype=torch.complex64))
    _same(toolkit.zeros(2, dtype=toolkit.cdouble), torch.zeros(2, dtype=torch.cdouble))
    _same(toolkit.full((2,), 1 + 1j), torch.full((2,), 1 + 1j))


# ----------------------------------------------------------------------------- what PyTorch refuses
REFUSED = {
    "lt": lambda m, z, w: m.lt(z, w), "ge": lambda m, z, w: z >= w, "max": lambda m, z, w: m.max(z),
    "max.dim": lambda m, z, w: m.max(z, 0), "min": lambda m, z, w: m.min(z), "amax": lambda m, z, w: m.amax(z),
    "argmax": lambda m, z, w: m.argmax(z), "clamp": lambda m, z, w: m.clamp(z, 0, 1),
    "floor": lambda m, z, w: m.floor(z), "ceil": lambda m, z, w: m.ceil(z), "round": lambda m, z, w: m.round(z),
    "trunc": lambda m, z, w: m.trunc(z), "sign": lambda m, z, w: m.sign(z), "relu": lambda m, z, w: m.relu(z),
    "maximum": lambda m, z, w: m.maximum(z, w), "sort": lambda m, z, w: m.sort(z),
    "topk": lambda m, z, w: m.topk(z, 1), "atan2": lambda m, z, w: m.atan2(z, w),
    "remainder": lambda m, z, w: m.remainder(z, w), "fmod": lambda m, z, w: m.fmod(z, w),
    "erf": lambda m, z, w: m.erf(z), "signbit": lambda m, z, w: m.signbit(z),
    "heaviside": lambda m, z, w: m.heaviside(z, w), "floor_divide": lambda m, z, w: z // w,
    "clamp_": lambda m, z, w: z.clone().clamp_(0, 1), "deg2rad": lambda m, z, w: m.deg2rad(z),
    "abs_": lambda m, z, w: z.clone().abs_(), "absolute_": lambda m, z, w: z.clone().absolute_(),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_ops_torch_refuses_raise_its_error(name):
    fn = REFUSED[name]
    z, tz = _pair(Z, CDTYPES[0])
    w, tw = _pair(W, CDTYPES[0])
    with pytest.raises(Exception) as expected:
        fn(torch, tz, tw)
    with pytest.raises(type(expected.value)) as got:
        fn(toolkit, z, w)
    assert str(expected.value).split("\n")[0].strip() in str(got.value)
