"""Functions of square matrices and pseudo-inverses: matrix_power, matrix_exp, pinv, matrix_rank, cond.

All take batches ``(..., n, n)`` (``(..., m, n)`` for pinv and matrix_rank).
``matrix_exp`` is scaling and squaring with a degree-18 Taylor polynomial in
float64 (accurate to rounding for the scaled norm <= 1/2). Derivatives are
PyTorch's formulas written with registered ops, so they differentiate again.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from . import api
from ._linalg_checks import _dtype, scalar_name
from .decomposition import adjoint, check_float, check_matrix
from .factorization import svd_backward
from .norms import matrix_norm_grad
from .registry import LINALG, op


def _meta(shape, like, dtype=None):
    return TensorMeta(tuple(shape), dtype or _dtype(like), like.device)


def _square_samples(rng):
    r = rng.standard_normal
    yield (r((3, 3)) * 0.5 + np.eye(3),), {}
    yield (r((2, 2, 2)) * 0.5 + np.eye(2),), {}


# ---------------------------------------------------------------------------------------------
# matrix_power
# ---------------------------------------------------------------------------------------------
def _power_check(a, n):
    if len(a.shape) < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are {a.shape[-2]} by "
            f"{a.shape[-1]} matrices"
        )
    if n < 0:
        check_float("linalg.inv", a)
    return _meta(a.shape, a)


def _power_grad(grad, a, n):
    if n == 0:
        return grad * 0
    if n < 0:
        b = api.linalg_inv(a)
        gb = _power_grad(grad, b, -n)
        bt = b.mT
        return -bt.matmul(gb).matmul(bt)
    at = a.mT
    powers = [None] * n  # powers[k] = (A^T)^k
    for k in range(n):
        powers[k] = None if k == 0 else (at if k == 1 else powers[k - 1].matmul(at))
    total = None
    for k in range(n):
        left, right = powers[k], powers[n - 1 - k]
        term = grad if left is None else left.matmul(grad)
        term = term if right is None else term.matmul(right)
        total = term if total is None else total + term
    return total


def _power_samples(rng):
    a = rng.standard_normal((3, 3)) * 0.5 + np.eye(3)
    yield (a, 3), {}
    yield (a, 0), {}
    yield (a, 1), {}
    yield (rng.standard_normal((2, 2, 2)) * 0.5 + 2 * np.eye(2), -2), {}


def _power_by_squaring(a, n):
    """``a ** n`` by repeated squaring (``matmul``), as PyTorch composes ``linalg.matrix_power``."""
    _power_check(a, n)
    if n < 0:
        a, n = api.linalg_inv(a), -n
    if n == 0:  # the identity, written into a clone so that it stays connected to ``a`` (a zero gradient)
        k = a.shape[-1]
        return a.clone().copy_(api.eye(k, dtype=a.dtype, device=a.device).expand(tuple(a.shape)))
    if n == 1:
        return a.clone()
    result = None
    square = a
    while n:
        if n & 1:
            result = square if result is None else result.matmul(square)
        n >>= 1
        if n:
            square = square.matmul(square)
    return result


@op("matrix_power(Tensor self, int n) -> Tensor", kind=LINALG, composite=True)
def matrix_power(self, n):
    """The ``n``-th power of each square matrix (``n < 0``: of its inverse; ``n == 0``: the identity)."""
    return _power_by_squaring(self, n)


@op("linalg_matrix_power(Tensor self, int n) -> Tensor", kind=LINALG, namespace="linalg",
    function="matrix_power", method=False, composite=True)
def linalg_matrix_power(self, n):
    """The ``n``-th power of each square matrix (``n < 0``: of its inverse; ``n == 0``: the identity)."""
    return _power_by_squaring(self, n)


for _o in (matrix_power, linalg_matrix_power):
    _o.meta_rule(_power_check)
    _o.grad(lambda grad, self, n: _power_grad(grad, self, n))
    _o.sample_inputs(_power_samples)


# ---------------------------------------------------------------------------------------------
# matrix_exp
# ---------------------------------------------------------------------------------------------
def _exp_check(a):
    if len(a.shape) < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_exp: A must be batches of square matrices, but they are {a.shape[-2]} by "
            f"{a.shape[-1]} matrices"
        )
    check_float("linalg.matrix_exp", a)
    return _meta(a.shape, a)


def _expm(a):
    _exp_check(a)
    x = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    n = x.shape[-1]
    if x.size == 0:
        return np.array(a)
    norm = float(np.abs(x).sum(-2).max())
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = x / 2.0 ** s
    eye = np.broadcast_to(np.eye(n), x.shape)
    out, term = eye.copy(), eye
    for k in range(1, 19):
        term = np.matmul(term, x) / k
        out = out + term
    for _ in range(s):
        out = np.matmul(out, out)
    return out.astype(a.dtype)


def _exp_grad(grad, a):
    """The upper-right block of ``exp([[A^T, G], [0, A^T]])`` (the Fréchet derivative at A^T applied to G)."""
    at = a.mT
    n = a.shape[-1]
    top = api.cat([at, grad], -1)
    bottom = api.cat([grad * 0, at], -1)
    big = api.matrix_exp(api.cat([top, bottom], -2))
    return big.narrow(-2, 0, n).narrow(-1, n, n)


@op("matrix_exp(Tensor self) -> Tensor", kind=LINALG, grad_fn="LinalgMatrixExpBackward0", out=False)
def matrix_exp(self):
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    return _expm(self)


@op("linalg_matrix_exp(Tensor self) -> Tensor", kind=LINALG, out=False, namespace="linalg", function="matrix_exp",
    method=False)
def linalg_matrix_exp(self):
    """The matrix exponential ``sum_k A^k / k!`` of each square matrix."""
    return _expm(self)


for _o in (matrix_exp, linalg_matrix_exp):
    _o.meta_rule(_exp_check)
    _o.grad(lambda grad, self: _exp_grad(grad, self))
    _o.sample_inputs(_square_samples)


# ---------------------------------------------------------------------------------------------
# pinv, pinverse
# ---------------------------------------------------------------------------------------------
def _pinv_check(a):
    if len(a.shape) < 2 or not (_dtype(a).is_floating_point or _dtype(a).is_complex):
        raise RuntimeError(
            f"linalg.pinv({scalar_name(a)}{{{list(a.shape)}}}): expected a tensor with 2 or more dimensions of "
            "float, double, cfloat or cdouble types"
        )
    return _meta(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a)


def _tolerance(a, s_max, atol, rtol):
    """``max(atol, rtol * s_max)`` per matrix (``s_max`` with a trailing size-1 dim); rtol defaults to
    ``eps * max(m, n)`` when atol is not given or not positive, as ``torch.linalg.pinv`` and ``matrix_rank``."""
    m, n = a.shape[-2:]
    if rtol is None:
        positive = atol is not None and (bool((atol > 0).any()) if hasattr(atol, "shape") else atol > 0)
        rtol = 0.0 if positive else float(np.finfo(a.dtype.np).eps * max(m, n))
    rel = s_max * (rtol.unsqueeze(-1) if hasattr(rtol, "shape") else rtol)
    if atol is None:
        return rel
    if hasattr(atol, "shape"):
        return api.maximum(atol.unsqueeze(-1).to(rel.dtype), rel)
    return rel.clamp_min(atol)


def _pinv(a, atol, rtol, hermitian):
    """The pseudo-inverse from ``svd`` (``eigh`` when hermitian), singular values at or below the tolerance
    dropped: a composition, as PyTorch's ``linalg.pinv``."""
    _pinv_check(a)
    m, n = a.shape[-2:]
    if a.numel() == 0:
        return api.zeros(tuple(a.shape[:-2]) + (n, m), dtype=a.dtype, device=a.device)
    if hermitian:
        w, v = api.linalg_eigh(a)
        s = w.abs()
        keep = s > _tolerance(a, s.amax(-1, keepdim=True), atol, rtol)
        inv = api.where(keep, w.reciprocal(), api.zeros((), dtype=w.dtype, device=a.device))
        return (v * inv.unsqueeze(-2)).matmul(adjoint(v))
    u, s, vh = api.linalg_svd(a, full_matrices=False)
    keep = s > _tolerance(a, s.narrow(-1, 0, 1), atol, rtol)
    inv = api.where(keep, s.reciprocal(), api.zeros((), dtype=s.dtype, device=a.device))
    return (adjoint(vh) * inv.unsqueeze(-2)).matmul(adjoint(u))


def pinv_backward(grad, pinvA, A):
    """PyTorch's pinv_backward, in the conjugate-Wirtinger convention (``pinv`` is not complex-analytic)."""
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = adjoint(pinvA), adjoint(grad)
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (-adjoint(pinvA.matmul(K)) + KpinvAh - A.matmul(pinvA).matmul(KpinvAh)
                + pinvAh.matmul(pinvA).matmul(gradh - K.matmul(A)))
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (-adjoint(K.matmul(pinvA)) + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh) + pinvAhK
            - pinvAhK.matmul(pinvA).matmul(A))


def _pinv_samples(rng):
    r = rng.standard_normal
    yield (r((3, 2)),), {}
    yield (r((2, 3)),), {}
    yield (r((2, 3, 3)),), {}


@op("pinverse(Tensor self, float rcond=1e-15) -> Tensor", kind=LINALG, out=False, autocast="fp32", composite=True)
def pinverse(self, rcond=1e-15):
    """Moore-Penrose pseudo-inverse; singular values below ``rcond * max(S)`` count as zero."""
    return _pinv(self, None, rcond, False)


@op("linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", kind=LINALG, out="cast", namespace="linalg",
    function="pinv", method=False, composite=True)
def linalg_pinv(self, rcond, hermitian=False):
    """Moore-Penrose pseudo-inverse; singular values below ``rcond * max(S)`` count as zero."""
    return _pinv(self, None, rcond, hermitian)


@op("linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
    "-> Tensor", kind=LINALG, out="cast", namespace="linalg", function="pinv", method=False, composite=True)
def linalg_pinv_atol_rtol(self, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse; singular values at or below ``max(atol, rtol * max(S))`` count as zero
    (rtol defaults to ``eps * max(m, n)`` when atol is not given or is 0)."""
    return _pinv(self, atol, rtol, hermitian)


@op("linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) "
    "-> Tensor", kind=LINALG, out="cast", namespace="linalg", function="pinv", method=False, nondiff_args=("atol", "rtol"),
    composite=True)
def linalg_pinv_atol_rtol_tensor(self, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse with per-matrix tolerances given as tensors."""
    return _pinv(self, atol, rtol, hermitian)


for _o in (pinverse, linalg_pinv, linalg_pinv_atol_rtol, linalg_pinv_atol_rtol_tensor):
    _o.meta_rule(lambda self, *args, **kwargs: _pinv_check(self))
    _o.wirtinger_grad(lambda grad, self, result: pinv_backward(grad, result, self))

pinverse.sample_inputs(_pinv_samples)
linalg_pinv.sample_inputs(lambda rng: (((a[0], 1e-10), k) for a, k in _pinv_samples(rng)))
linalg_pinv_atol_rtol.sample_inputs(lambda rng: iter([
    ((rng.standard_normal((3, 2)),), {}),
    ((rng.standard_normal((2, 3)),), {"atol": 1e-6}),
    ((rng.standard_normal((2, 3)),), {"rtol": 1e-6}),
]))
linalg_pinv_atol_rtol_tensor.sample_inputs(lambda rng: iter([
    ((rng.standard_normal((2, 3, 2)),), {"hermitian": False}),
]))


# ---------------------------------------------------------------------------------------------
# matrix_rank
# ---------------------------------------------------------------------------------------------
def _rank_check(a, hermitian=False):
    if len(a.shape) < 2:
        raise RuntimeError("linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    check_float("linalg.matrix_rank", a)
    return _meta(a.shape[:-2], a, _dt.int64)


def _rank(a, atol, rtol, hermitian):
    """The number of singular values (``|eigenvalues|`` when hermitian) above the tolerance: a composition of
    ``svdvals`` and a count, as PyTorch's ``linalg.matrix_rank``."""
    _rank_check(a)
    if a.numel() == 0:
        return api.zeros(tuple(a.shape[:-2]), dtype=_dt.int64, device=a.device)
    s = api.linalg_eigvalsh(a).abs() if hermitian else api.linalg_svdvals(a)
    return (s > _tolerance(a, s.amax(-1, keepdim=True), atol, rtol)).sum(-1)


@op("linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32",
    namespace="linalg", function="matrix_rank", method=False, differentiable=False, composite=True)
def linalg_matrix_rank(self, tol, hermitian=False):
    """Numerical rank: the number of singular values above ``tol``."""
    return _rank(self, tol, 0.0, hermitian)


@op("linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
    "bool hermitian=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="matrix_rank", method=False,
    differentiable=False, composite=True)
def linalg_matrix_rank_atol_rtol(self, atol=None, rtol=None, hermitian=False):
    """Numerical rank: the number of singular values above ``max(atol, rtol * max(S))``."""
    return _rank(self, atol, rtol, hermitian)


@op("linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, "
    "bool hermitian=False) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="matrix_rank", method=False,
    differentiable=False, composite=True)
def linalg_matrix_rank_atol_rtol_tensor(input, atol=None, rtol=None, hermitian=False):
    """Numerical rank with per-matrix tolerances given as tensors."""
    return _rank(input, atol, rtol, hermitian)


for _o in (linalg_matrix_rank, linalg_matrix_rank_atol_rtol, linalg_matrix_rank_atol_rtol_tensor):
    _o.meta_rule(lambda self, *args, **kwargs: _rank_check(self))


def _rank_samples(rng):
    r = rng.standard_normal
    low = r((4, 2)) @ r((2, 3))
    yield (low,), {}
    yield (r((2, 3, 3)),), {"hermitian": False}
    yield (low @ low.T,), {"hermitian": True}
    yield (low,), {"atol": 1e-3, "rtol": 0.5}


linalg_matrix_rank_atol_rtol.sample_inputs(_rank_samples)
linalg_matrix_rank.sample_inputs(lambda rng: iter([((rng.standard_normal((3, 4)), 0.5), {})]))
linalg_matrix_rank_atol_rtol_tensor.sample_inputs(lambda rng: iter([
    ((rng.standard_normal((2, 3, 4)),), {"hermitian": False})]))


# ---------------------------------------------------------------------------------------------
# cond
# ---------------------------------------------------------------------------------------------
_SVD_ORDS = (None, 2, -2)


def _cond_check(a, p):
    name = f"linalg.cond(ord={p})" if p is not None else "linalg.cond"
    if len(a.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    check_float(name, a)
    if p not in _SVD_ORDS:
        if p not in ("fro", "nuc", 1, -1, math.inf, -math.inf):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        check_matrix(name, a, square=True)
    return _meta(a.shape[:-2], a, _dtype(a).to_real())


def _cond(a, p):
    """The ratio of extreme singular values (``svdvals``), or ``norm(A, p) * norm(inv(A), p)`` with ``inf`` for
    a singular matrix (``inv_ex``'s info): a composition, as PyTorch's ``linalg.cond``."""
    _cond_check(a, p)
    if p in _SVD_ORDS:
        s = api.linalg_svdvals(a)
        k = s.shape[-1]
        first, last = s.select(-1, 0), s.select(-1, k - 1)
        return last / first if p == -2 else first / last
    inv, info = api.linalg_inv_ex(a)
    r = api.linalg_matrix_norm(a, p) * api.linalg_matrix_norm(inv, p)
    return api.where(info > 0, api.full((), math.inf, dtype=r.dtype, device=r.device), r)


def _cond_grad(grad, a, p, result):
    if p in _SVD_ORDS:
        U, S, Vh = api.linalg_svd(a, full_matrices=False)
        k = S.shape[-1]
        first, last = S.narrow(-1, 0, 1), S.narrow(-1, k - 1, 1)
        g = grad.unsqueeze(-1)
        pick_first = (api.arange(k) == 0).to(S.dtype)
        pick_last = (api.arange(k) == k - 1).to(S.dtype)
        if p == -2:
            gS = g * (pick_last / first - pick_first * last / (first * first))
        else:
            gS = g * (pick_first / last - pick_last * first / (last * last))
        return svd_backward(None, gS, None, U, S, Vh)
    dims = (a.ndim - 2, a.ndim - 1)
    inv = api.linalg_inv(a)
    na = api.linalg_matrix_norm(a, p) if not isinstance(p, str) else api.linalg_matrix_norm(a, ord=p)
    ni = api.linalg_matrix_norm(inv, p) if not isinstance(p, str) else api.linalg_matrix_norm(inv, ord=p)
    ga = matrix_norm_grad(grad * ni, a, p, dims, False, na)
    gi = matrix_norm_grad(grad * na, inv, p, dims, False, ni)
    it = adjoint(inv)
    return ga - it.matmul(gi).matmul(it)


@op("linalg_cond(Tensor self, Scalar? p=None) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="cond",
    method=False, composite=True)
def linalg_cond(self, p=None):
    """Condition number ``norm(A, p) * norm(inv(A), p)``; for p None/2/-2 the ratio of extreme singular values."""
    return _cond(self, p)


@op("linalg_cond.p_str(Tensor self, str p) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="cond",
    method=False, composite=True)
def linalg_cond_str(self, p):
    """Condition number ``norm(A, p) * norm(inv(A), p)`` for p 'fro' or 'nuc' (square matrices)."""
    return _cond(self, p)


for _o in (linalg_cond, linalg_cond_str):
    _o.meta_rule(lambda self, p=None: _cond_check(self, p))
    _o.wirtinger_grad(lambda grad, self, p, result: _cond_grad(grad, self, p, result))


@linalg_cond.sample_inputs
def _(rng):
    r = rng.standard_normal
    a = r((3, 3)) + 2 * np.eye(3)
    yield (a,), {}
    yield (r((3, 2)), -2), {}
    yield (r((2, 2, 3)), 2), {}
    yield (a, 1), {}
    yield (a, -math.inf), {}


@linalg_cond_str.sample_inputs
def _(rng):
    a = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    yield (a, "fro"), {}
    yield (rng.standard_normal((2, 2, 2)) + 2 * np.eye(2), "nuc"), {}
