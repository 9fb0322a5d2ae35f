"""Solves beyond square systems: linalg.tensorinv, linalg.tensorsolve, linalg.lstsq.

``tensorinv`` and ``tensorsolve`` fold a tensor into a square matrix, as PyTorch does; ``lstsq`` gives the
minimum-norm least-squares solution (numpy's SVD-based gelsd) with each driver's outputs shaped as
PyTorch's CPU drivers shape them. Derivatives are PyTorch's, written with registered ops.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from ..return_types import structseq
from . import api
from ._linalg_checks import _dtype, scalar_name
from .decomposition import adjoint, check_float
from .factorization import svd_backward
from .matrix_functions import pinv_backward
from .registry import LINALG, op


def _meta(shape, like, dtype=None):
    return TensorMeta(tuple(shape), dtype or _dtype(like), like.device)


# ---------------------------------------------------------------------------------------------
# tensorinv
# ---------------------------------------------------------------------------------------------
def _tensorinv_check(self, ind):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(self.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
            f"{cols} != {rows}")
    check_float("linalg.inv", self)
    return _meta(shape[ind:] + shape[:ind], self), rows


@op("linalg_tensorinv(Tensor self, int ind=2) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="tensorinv",
    method=False, composite=True)
def linalg_tensorinv(self, ind=2):
    """The inverse of ``self`` under ``tensordot(.., ind)``: shape ``self.shape[ind:] + self.shape[:ind]``
    (``linalg.inv`` of ``self`` folded into a square matrix, as PyTorch composes it)."""
    meta, n = _tensorinv_check(self, ind)
    return api.linalg_inv(self.reshape(n, n)).reshape(tuple(meta.shape))


linalg_tensorinv.meta_rule(lambda self, ind=2: _tensorinv_check(self, ind)[0])


@linalg_tensorinv.grad
def _(grad, self_shape, ind, result):
    n = math.prod(tuple(self_shape)[:ind])
    inv_t = result.reshape(n, n).mT
    return (-inv_t.matmul(grad.reshape(n, n)).matmul(inv_t)).reshape(tuple(self_shape))


@linalg_tensorinv.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield ((r((6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6),), {"ind": 2}
    yield ((r((6, 6)) + 3 * np.eye(6)).reshape(6, 2, 3),), {"ind": 1}
    yield ((r((4, 4)) + 3 * np.eye(4)).reshape(2, 2, 2, 2),), {}


# ---------------------------------------------------------------------------------------------
# tensorsolve
# ---------------------------------------------------------------------------------------------
def _tensorsolve_check(self, other, dims):
    nd = len(self.shape)
    order = list(range(nd))
    if dims is not None:
        moved = [wrap_dim(d, nd) for d in dims]
        order = [i for i in order if i not in moved] + moved
    shape = tuple(self.shape[i] for i in order)
    k = len(other.shape)
    rows, cols = math.prod(shape[:k]), math.prod(shape[k:])
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]),"
            f" but got {cols} != {rows}")
    if _dtype(self) is not _dtype(other):
        raise RuntimeError(
            f"linalg.solve: Expected A and B to have the same dtype, but found A of type {scalar_name(self)} and B "
            f"of type {scalar_name(other)} instead")
    check_float("linalg.solve", self)
    return _meta(shape[k:], self), order, rows


@op("linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor", kind=LINALG, out="cast", autocast="fp32", namespace="linalg",
    function="tensorsolve", method=False, composite=True)
def linalg_tensorsolve(self, other, dims=None):
    """``X`` with ``tensordot(self, X, X.ndim) == other`` (``dims`` of self moved to the end first): ``linalg.solve``
    of ``self`` folded into a square matrix, as PyTorch composes it."""
    meta, order, n = _tensorsolve_check(self, other, dims)
    a = self.permute(order).reshape(n, n)
    return api.linalg_solve(a, other.reshape(n)).reshape(tuple(meta.shape))


linalg_tensorsolve.meta_rule(lambda self, other, dims=None: _tensorsolve_check(self, other, dims)[0])


@linalg_tensorsolve.grad
def _(grad, self, other_shape, dims, result, needs_input_grad):
    _, order, n = _tensorsolve_check(self, api.empty(tuple(other_shape), dtype=self.dtype), dims)
    a = self.permute(order).reshape(n, n)
    g_other = api.linalg_solve(a.mT, grad.reshape(n))
    g_self = None
    if needs_input_grad[0]:
        ga = -(g_other.unsqueeze(-1) * result.reshape(n).unsqueeze(-2))
        moved = ga.reshape([self.shape[i] for i in order])
        g_self = moved.permute([order.index(i) for i in range(len(order))])
    return g_self, g_other.reshape(tuple(other_shape))


@linalg_tensorsolve.sample_inputs
def _(rng):
    r = rng.standard_normal
    a = (r((6, 6)) + 3 * np.eye(6)).reshape(2, 3, 6)
    yield (a, r((2, 3))), {}
    yield ((r((6, 6)) + 3 * np.eye(6)).reshape(6, 2, 3), r((2, 3))), {"dims": [0]}


# ---------------------------------------------------------------------------------------------
# lstsq
# ---------------------------------------------------------------------------------------------
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_check(A, B, driver):
    name = "torch.linalg.lstsq"
    if len(A.shape) < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if len(B.shape) < 1:
        raise RuntimeError(f"{name}: other must have at least 1 dimension.")
    check_float(name, A)
    if _dtype(A) is not _dtype(B):
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got input's dtype "
                           f"{scalar_name(A)} and other's dtype {scalar_name(B)}")
    vector = len(B.shape) == len(A.shape) - 1
    m, n = A.shape[-2:]
    if (B.shape[-1] if vector else B.shape[-2]) != m:
        dim = "-1" if vector else "-2"
        raise RuntimeError(f"{name}: input.size(-2) should match other.size({dim})")
    driver = driver or "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-1] if vector else B.shape[:-2])))
    k = None if vector else B.shape[-1]
    return vector, batch, m, n, k, driver


def _lstsq_metas(A, B, driver, full_rank=True):
    vector, batch, m, n, k, driver = _lstsq_check(A, B, driver)
    sol = batch + ((n,) if vector else (n, k))
    residual = (0,)
    if m > n and driver != "gelsy" and full_rank:
        residual = batch + (() if vector else (k,))
    rank = (0,) if driver == "gels" else batch
    sv = batch + (min(m, n),) if driver in ("gelsd", "gelss") else (0,)
    real = _dtype(A).to_real()  # residuals and singular values are real for complex input too
    return (_meta(sol, A), _meta(residual, A, real), _meta(rank, A, _dt.int64), _meta(sv, A, real))


@op("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, "
    "Tensor residuals, Tensor rank, Tensor singular_values)", kind=LINALG, out="cast", autocast="fp32", namespace="linalg", function="lstsq",
    method=False)
def linalg_lstsq(self, b, rcond=None, driver=None):
    """Least-squares solution of ``A X = B`` (minimum norm where A is rank deficient); ``driver`` picks which
    of residuals, rank and singular values are returned (CPU default 'gelsy')."""
    vector, batch, m, n, k, drv = _lstsq_check(self, b, driver)
    bm = b[..., None] if vector else b
    a = np.broadcast_to(self, batch + (m, n))
    bm = np.broadcast_to(bm, batch + bm.shape[-2:])
    cut = np.finfo(self.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    flat_a, flat_b = a.reshape((-1, m, n)), bm.reshape((-1, m, bm.shape[-1]))
    sol = np.zeros((flat_a.shape[0], n, bm.shape[-1]), self.dtype)
    ranks = np.zeros(flat_a.shape[0], np.int64)
    svs = np.zeros((flat_a.shape[0], min(m, n)), self.real.dtype)
    for i in range(flat_a.shape[0]):
        if flat_a[i].size == 0:
            continue
        x, _, rank, s = np.linalg.lstsq(flat_a[i], flat_b[i], rcond=cut)
        sol[i], ranks[i], svs[i] = x, rank, s
    solution = sol.reshape(batch + (n, bm.shape[-1]))
    full = bool(np.all(ranks == min(m, n)))
    metas = _lstsq_metas(self, b, driver, full)
    if metas[1].shape != (0,):
        res = np.sum(np.abs(np.matmul(a, solution) - bm) ** 2, axis=-2)
        residuals = (res[..., 0] if vector else res).astype(self.real.dtype)
    else:
        residuals = np.zeros((0,), self.real.dtype)
    rank = ranks.reshape(batch) if drv != "gels" else np.zeros((0,), np.int64)
    sv = svs.reshape(batch + (min(m, n),)) if drv in ("gelsd", "gelss") else np.zeros((0,), self.real.dtype)
    return (solution[..., 0] if vector else solution), residuals, rank, sv


linalg_lstsq.return_type = structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


@linalg_lstsq.meta_rule
def _(self, b, rcond=None, driver=None):
    return _lstsq_metas(self, b, driver)


@linalg_lstsq.wirtinger_grad  # X = pinv(A) B is not complex-analytic in A: the rule is the Wirtinger gradient
def _(grad, self, b, result, needs_input_grad):
    gX, gR = grad[0], grad[1]
    vector = b.ndim == self.ndim - 1
    X = result[0].unsqueeze(-1) if vector else result[0]
    B = b.unsqueeze(-1) if vector else b
    gA = gB = None
    if gX is not None:
        g = gX.unsqueeze(-1) if vector else gX
        pinv = api.linalg_pinv(self)
        if needs_input_grad[0]:
            gA = pinv_backward(g.matmul(adjoint(B)), pinv, self)
        if needs_input_grad[1]:
            gB = adjoint(pinv).matmul(g)
    if gR is not None and gR.numel() > 0:
        r = self.matmul(X) - B
        w = (gR.unsqueeze(-1) if vector else gR).unsqueeze(-2) * r * 2
        if needs_input_grad[0]:
            t = w.matmul(adjoint(X))
            gA = t if gA is None else gA + t
        if needs_input_grad[1]:
            gB = -w if gB is None else gB - w
    gS = grad[3] if len(grad) > 3 else None
    if gS is not None and gS.numel() > 0 and needs_input_grad[0]:
        U, S, Vh = api.linalg_svd(self, full_matrices=False)
        t = svd_backward(None, gS, None, U, S, Vh)
        gA = t if gA is None else gA + t
    if gB is not None:
        gB = gB.squeeze(-1) if vector else gB
        gB = gB.sum_to_size(tuple(b.shape))
    if gA is not None:
        gA = gA.sum_to_size(tuple(self.shape))
    return gA, gB


@linalg_lstsq.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((4, 3)), r((4, 2))), {}
    yield (r((3, 3)) + 2 * np.eye(3), r(3)), {}
    yield (r((4, 2)), r((4, 2))), {"driver": "gelsd"}
    yield (r((2, 4, 3)), r((2, 4, 1))), {"driver": "gels"}
    yield (r((4, 3)), r((4, 2))), {"driver": "gelss"}
