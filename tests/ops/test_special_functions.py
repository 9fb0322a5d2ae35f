"""``toolkit.special`` against ``torch.special``: every name, values over ranges and at the edges (float32 and
float64), dtypes, Python-number arguments, ``out=``, gradients (gradcheck and torch's) and errors.

Where PyTorch 2.13's own float64 values are inaccurate (J and Y of orders 0 and 1 for ``2 < |x| < 15``, Ai for
``-5 < x < -2``: off by up to about 3e-6), scipy is the oracle there and torch is checked to that accuracy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import toolkit
from toolkit.autograd import gradcheck, gradgradcheck

from ..conftest import assert_close

torch = pytest.importorskip("torch")

EDGES = [0.0, -0.0, 1e-300, 1e-30, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, 30.0, -40.0, 800.0, math.inf, -math.inf,
         math.nan]
FLOATS = [toolkit.float32, toolkit.float64]
TORCH_DTYPE = {toolkit.float32: torch.float32, toolkit.float64: torch.float64}


def _both(values, dtype):
    a = np.asarray(values, dtype=dtype.np)
    return toolkit.tensor(a), torch.from_numpy(a.copy())


def _compare(name, values, dtype, *args, rtol=None, atol=None):
    x, tx = _both(values, dtype)
    got = getattr(toolkit.special, name)(x, *args)
    expected = getattr(torch.special, name)(tx, *args)
    assert_close(got, expected, rtol=rtol, atol=atol)


def test_every_torch_special_name_is_here():
    names = {f.__name__.removeprefix("special_") for f in torch.overrides.get_overridable_functions()[torch.special]}
    assert len(names) == 56
    assert sorted(n for n in names if not hasattr(toolkit.special, n)) == []
    assert set(toolkit.special.__all__) >= names


# ----------------------------------------------------------------------------- unary functions
UNARY = ["entr", "erfcx", "ndtr", "log_ndtr", "ndtri", "i0e", "i1", "i1e", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1", "spherical_bessel_j0"]
# Where PyTorch's float64 values are accurate for the J, Y and Ai functions.
ACCURATE_RANGES = {"bessel_j0": [(-2.0, 2.0), (15.0, 60.0), (-60.0, -15.0)],
                   "bessel_j1": [(-2.0, 2.0), (15.0, 60.0), (-60.0, -15.0)],
                   "bessel_y0": [(0.01, 2.0), (15.0, 60.0)], "bessel_y1": [(0.01, 2.0), (15.0, 60.0)],
                   "airy_ai": [(-2.0, 10.0), (-60.0, -5.0)]}


def _grid(name):
    if name == "ndtri":
        return [0.0, 1.0, 1e-300, 1e-20, 1e-5, 0.02, 0.3, 0.5, 0.7, 0.999, 1 - 1e-12, -0.1, 1.1, math.nan]
    return list(np.linspace(-12.0, 12.0, 97)) + EDGES


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary_matches_torch(name, dtype):
    _compare(name, _grid(name), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(ACCURATE_RANGES))
def test_bessel_and_airy_match_torch_where_it_is_accurate(name, dtype):
    values = [v for lo, hi in ACCURATE_RANGES[name] for v in np.linspace(lo, hi, 41)] + EDGES
    # float32: PyTorch computes in float32 and loses some digits at large |x| (range reduction of x - pi/4).
    atol = 2e-5 if dtype is toolkit.float32 else None
    _compare(name, values, dtype, atol=atol)


SCIPY = {"bessel_j0": "j0", "bessel_j1": "j1", "bessel_y0": "y0", "bessel_y1": "y1", "modified_bessel_k0": "k0",
         "modified_bessel_k1": "k1", "scaled_modified_bessel_k0": "k0e", "scaled_modified_bessel_k1": "k1e",
         "i0e": "i0e", "i1e": "i1e", "erfcx": "erfcx", "ndtr": "ndtr", "log_ndtr": "log_ndtr", "airy_ai": "airy"}


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_float64_values_are_accurate_everywhere(name):
    """Against scipy over the whole range, including where PyTorch's float64 values are not accurate."""
    sp = pytest.importorskip("scipy.special")
    low = 0.01 if name.startswith(("bessel_y", "modified", "scaled")) else -40.0
    x = np.concatenate([np.linspace(low, 40.0, 801), np.geomspace(1e-8, 700.0, 200)])
    expected = getattr(sp, SCIPY[name])(x)
    expected = expected[0] if name == "airy_ai" else expected
    got = getattr(toolkit.special, name)(toolkit.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"])
def test_torch_agrees_to_its_own_accuracy_everywhere(name):
    x = np.linspace(0.05, 30.0, 600) if name.startswith("bessel_y") else np.linspace(-30.0, 30.0, 1201)
    _compare(name, x, toolkit.float64, rtol=0.0, atol=5e-6)


@pytest.mark.parametrize("name", UNARY + sorted(ACCURATE_RANGES))
def test_integers_and_bool_compute_in_the_default_float_dtype(name):
    for values, np_dtype in (([0, 1, 2, 3], np.int64), ([True, False], np.bool_), ([0, 1, 2], np.uint8)):
        if name == "ndtri":
            values = [0, 1] if np_dtype is not np.bool_ else values
        a = np.asarray(values, dtype=np_dtype)
        got = getattr(toolkit.special, name)(toolkit.tensor(a))
        assert_close(got, getattr(torch.special, name)(torch.from_numpy(a.copy())))


# ----------------------------------------------------------------------------- polynomials
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_match_torch(name, dtype):
    xs = np.array(list(np.linspace(-1.5, 1.5, 25)) + [1.0, -1.0, 0.0, 0.5, 3.0], dtype=dtype.np)
    ns = np.arange(-2, 14, dtype=np.int64)
    x2, n2 = np.meshgrid(xs, ns)
    got = getattr(toolkit.special, name)(toolkit.tensor(x2), toolkit.tensor(n2))
    expected = getattr(torch.special, name)(torch.from_numpy(x2.copy()), torch.from_numpy(n2.copy()))
    # PyTorch takes trigonometric forms for high degrees inside (-1, 1): a few ulps apart, or ~1e-16 absolute
    # where the polynomial vanishes.
    assert_close(got, expected, atol=1e-5 if dtype is toolkit.float32 else 1e-12)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_take_numbers_and_promote_like_torch(name):
    x = np.array([0.3, -0.7, 1.2], dtype=np.float32)
    n = np.array([2, 5, 3])
    cases = [(x, 4), (0.25, n), (x, n.astype(np.float64)), (np.array([1, 2, 0]), 3), (x, 3.7),
             (np.array([1, -1, 0]), n)]
    for a, b in cases:
        def conv(v, mod):
            return (toolkit.tensor(v) if mod is toolkit else torch.from_numpy(v.copy())) if isinstance(
                v, np.ndarray) else v
        got = getattr(toolkit.special, name)(conv(a, toolkit), conv(b, toolkit))
        expected = getattr(torch.special, name)(conv(a, torch), conv(b, torch))
        assert_close(got, expected)
    got = getattr(toolkit.special, name)(x=toolkit.tensor(x), n=2)
    assert_close(got, getattr(torch.special, name)(x=torch.from_numpy(x.copy()), n=2))


# ----------------------------------------------------------------------------- binary functions
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_xlog1py_matches_torch(dtype):
    s = [0.0, 0.0, 0.0, 1.0, 2.0, -1.5, math.nan, 3.0, 0.5]
    o = [-1.0, math.nan, 2.0, -1.0, -2.0, 0.5, 1.0, math.inf, 1e-20]
    a, ta = _both(s, dtype)
    b, tb = _both(o, dtype)
    assert_close(toolkit.special.xlog1py(a, b), torch.special.xlog1py(ta, tb))
    assert_close(toolkit.special.xlog1py(2.0, b), torch.special.xlog1py(2.0, tb))
    assert_close(toolkit.special.xlog1py(a, 3), torch.special.xlog1py(ta, 3))


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_zeta_matches_torch(dtype):
    s = [1.0, 2.0, -1.0, 0.5, 2.0, math.nan, 3.5, 10.0, 2.0, 4.0]
    q = [1.0, -1.0, 2.0, 2.0, 0.0, 1.0, 0.3, 5.0, -2.5, math.inf]
    a, ta = _both(s, dtype)
    b, tb = _both(q, dtype)
    assert_close(toolkit.special.zeta(a, b), torch.special.zeta(ta, tb))
    assert_close(toolkit.special.zeta(3.0, b), torch.special.zeta(3.0, tb))
    assert_close(toolkit.special.zeta(a, 2), torch.special.zeta(ta, 2))
    ints = np.array([2, 3, 4])
    assert_close(toolkit.special.zeta(toolkit.tensor(ints), toolkit.tensor(ints)),
                 torch.special.zeta(torch.from_numpy(ints), torch.from_numpy(ints)))


# ----------------------------------------------------------------------------- the other names
ALIASES = {
    "erf": [], "erfc": [], "erfinv": [], "expm1": [], "exp2": [], "log1p": [], "digamma": [], "psi": [],
    "gammaln": [], "i0": [], "logit": [], "sinc": [], "expit": [], "round": [], "softmax": [0], "log_softmax": [1],
    "logsumexp": [1],
}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_other_names_match_torch(name):
    rng = np.random.default_rng(0)
    values = rng.uniform(-0.99, 0.99, (3, 4)) if name in ("erfinv", "logit") else rng.uniform(-3, 3, (3, 4))
    for dtype in FLOATS:
        _compare(name, values, dtype, *ALIASES[name])


def test_other_names_keep_their_options():
    x, tx = _both([[0.2, 0.7, 1.5], [2.25, -1.26, 0.9]], toolkit.float64)
    assert_close(toolkit.special.round(x, decimals=1), torch.special.round(tx, decimals=1))
    assert_close(toolkit.special.logit(x, eps=0.1), torch.special.logit(tx, eps=0.1))
    assert_close(toolkit.special.polygamma(2, x.abs() + 0.1), torch.special.polygamma(2, tx.abs() + 0.1))
    assert_close(toolkit.special.multigammaln(x.abs() + 2, 2), torch.special.multigammaln(tx.abs() + 2, 2))
    assert_close(toolkit.special.xlogy(x, x.abs()), torch.special.xlogy(tx, tx.abs()))
    assert_close(toolkit.special.xlogy(2.0, x.abs()), torch.special.xlogy(2.0, tx.abs()))
    assert_close(toolkit.special.gammainc(x.abs(), x.abs()), torch.special.gammainc(tx.abs(), tx.abs()))
    assert_close(toolkit.special.gammaincc(x.abs(), x.abs()), torch.special.gammaincc(tx.abs(), tx.abs()))
    assert_close(toolkit.special.softmax(x, 1, dtype=toolkit.float32),
                 torch.special.softmax(tx, 1, dtype=torch.float32))
    assert_close(toolkit.special.log_softmax(x, 0, dtype=toolkit.float32),
                 torch.special.log_softmax(tx, 0, dtype=torch.float32))
    assert_close(toolkit.special.logsumexp(x, (0, 1), keepdim=True), torch.special.logsumexp(tx, (0, 1), keepdim=True))


def test_other_names_are_functions_only():
    assert not hasattr(toolkit.Tensor, "special_erf") and not hasattr(toolkit.Tensor, "psi")
    assert not hasattr(toolkit, "special_erf_")


# ----------------------------------------------------------------------------- out=
def test_out_argument():
    x, tx = _both([1.0, 2.0, -0.5], toolkit.float32)
    out, tout = toolkit.empty(3, dtype=toolkit.float64), torch.empty(3, dtype=torch.float64)
    assert toolkit.special.erfcx(x, out=out) is out
    torch.special.erfcx(tx, out=tout)
    assert_close(out, tout)
    out = toolkit.empty(3, dtype=toolkit.float32)
    toolkit.special.chebyshev_polynomial_t(x, 3, out=out)
    assert_close(out, torch.special.chebyshev_polynomial_t(tx, 3))
    with pytest.raises(RuntimeError):
        toolkit.special.ndtr(x, out=toolkit.empty(3, dtype=toolkit.int64))


# ----------------------------------------------------------------------------- gradients
DIFFERENTIABLE = {"entr": (0.2, 3.0), "erfcx": (-2.0, 4.0), "ndtr": (-3.0, 3.0), "log_ndtr": (-6.0, 3.0),
                  "ndtri": (0.05, 0.95), "i0e": (-4.0, 4.0), "i1": (-3.0, 3.0), "i1e": (-4.0, 4.0),
                  "psi": (0.3, 3.0), "gammaln": (0.3, 3.0), "expit": (-3.0, 3.0), "erfinv": (-0.9, 0.9),
                  "sinc": (-2.0, 2.0)}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_torch_and_gradcheck(name):
    rng = np.random.default_rng(1)
    a = rng.uniform(*DIFFERENTIABLE[name], (7,))
    if name in ("i0e", "i1e", "i1"):
        a[0] = 0.0  # the kink of |x| / the removable 0/0
    x = toolkit.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    getattr(toolkit.special, name)(x).sum().backward()
    getattr(torch.special, name)(tx).sum().backward()
    assert_close(x.grad, tx.grad)
    y = toolkit.tensor(a[1:], requires_grad=True)
    fn = getattr(toolkit.special, name)
    assert gradcheck(fn, (y,))
    assert gradgradcheck(fn, (y,))


def test_binary_gradients_match_torch():
    rng = np.random.default_rng(2)
    s, q = rng.uniform(-2.0, 2.0, (5,)), rng.uniform(-0.5, 2.0, (5,))
    s[0] = 0.0
    x, y = toolkit.tensor(s, requires_grad=True), toolkit.tensor(q, requires_grad=True)
    tx, ty = torch.tensor(s, requires_grad=True), torch.tensor(q, requires_grad=True)
    toolkit.special.xlog1py(x, y).sum().backward()
    torch.special.xlog1py(tx, ty).sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(y.grad, ty.grad)
    assert gradcheck(toolkit.special.xlog1py, (x, y))
    zs, zq = rng.uniform(1.5, 4.0, (5,)), rng.uniform(0.5, 3.0, (5,))
    y = toolkit.tensor(zq, requires_grad=True)
    ty = torch.tensor(zq, requires_grad=True)
    toolkit.special.zeta(toolkit.tensor(zs), y).sum().backward()
    torch.special.zeta(torch.tensor(zs), ty).sum().backward()
    assert_close(y.grad, ty.grad)
    assert gradcheck(lambda q: toolkit.special.zeta(toolkit.tensor(zs), q), (y,))


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_y1", "modified_bessel_i0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "spherical_bessel_j0", "airy_ai"])
def test_not_differentiable_as_in_torch(name):
    x = toolkit.tensor([0.5, 1.5], requires_grad=True)
    tx = torch.tensor([0.5, 1.5], requires_grad=True)
    out, tout = getattr(toolkit.special, name)(x), getattr(torch.special, name)(tx)
    assert out.requires_grad == tout.requires_grad is False
    assert out.grad_fn is None
    out = toolkit.special.legendre_polynomial_p(x, 3)
    assert not out.requires_grad and torch.special.legendre_polynomial_p(tx, 3).requires_grad is False


# ----------------------------------------------------------------------------- errors
def test_errors_match_torch():
    x = toolkit.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        toolkit.special.log_softmax(x, 0, toolkit.float64)  # dtype is keyword-only here, as in PyTorch
    with pytest.raises(TypeError):
        toolkit.special.bessel_j0(1.0)
    with pytest.raises(RuntimeError, match="polygamma"):
        toolkit.special.polygamma(-1, x)
    with pytest.raises(TypeError):
        toolkit.special.chebyshev_polynomial_t(x)
    with pytest.raises(RuntimeError):
        toolkit.special.zeta(x, toolkit.tensor([1.0, 2.0, 3.0]))  # shapes (2,) and (3,) do not broadcast
