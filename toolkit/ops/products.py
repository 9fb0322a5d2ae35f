"""Tensor products beyond mm/matmul: addbmm, addr, kron, tensordot, inner, trace, cross, chain_matmul.

Kernels are numpy's (``tensordot``, ``kron``, ``cross``, ``multiply.outer``);
shape checks are shared by kernels and meta rules so eager errors and the
JIT's type propagation agree. Derivatives are written with registered ops
(``tensordot``, ``mm``, ``cross``...), so they differentiate again.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none, wrap_dim
from . import api
from ._linalg_checks import _dtype, _meta, _no_bool, scalar_name
from .linalg_addmm import _check_add_term, _scaled_sum, maybe_multiply
from .registry import LINALG, op


def _promoted(*xs) -> _dt.dtype:
    d = _dtype(xs[0])
    for x in xs[1:]:
        d = _dt.promote_types(d, _dtype(x))
    return d


def _broadcast_or_raise(a, b) -> tuple:
    shape = broadcast_shapes_or_none(tuple(a), tuple(b))
    if shape is None:
        n = max(len(a), len(b))
        pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        i = next(i for i in range(n) if pa[i] != pb[i] and 1 not in (pa[i], pb[i]))
        raise RuntimeError(
            f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at non-singleton dimension {i}"
        )
    return shape


# ---------------------------------------------------------------------------------------------
# addbmm, addr
# ---------------------------------------------------------------------------------------------
def _addbmm_check(self, batch1, batch2) -> tuple:
    if len(batch1.shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(batch2.shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    b1, b2 = tuple(batch1.shape), tuple(batch2.shape)
    if b1[0] != b2[0] or b1[2] != b2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1[1]}x{b1[2]} and {b2[1]}x{b2[2]})")
    shape = (b1[1], b2[2])
    _check_add_term("addbmm", tuple(self.shape), shape, (self, batch1, batch2))
    _no_bool("addbmm", batch1)
    return shape


@op("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG, autocast="lower",
    inplace=True)
def addbmm(self, batch1, batch2, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``: batched products reduced over the batch."""
    shape = _addbmm_check(self, batch1, batch2)
    prod = np.matmul(batch1, batch2).sum(0) if batch1.shape[0] else np.zeros(shape, batch1.dtype)
    return _scaled_sum(self, prod.astype(batch1.dtype, copy=False), beta, alpha)


@addbmm.meta_rule
def _(self, batch1, batch2, beta=1, alpha=1):
    return _meta(_addbmm_check(self, batch1, batch2), batch1)


@addbmm.grad
def _(grad, batch1, batch2, beta, alpha, needs_input_grad):
    g_self = maybe_multiply(grad, beta) if needs_input_grad[0] else None
    g1 = grad.unsqueeze(0).matmul(batch2.mT) * alpha if needs_input_grad[1] else None
    g2 = batch1.mT.matmul(grad.unsqueeze(0)) * alpha if needs_input_grad[2] else None
    return g_self, g1, g2


@addbmm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r((2, 2, 4)), r((2, 4, 3))), {}
    yield (r(3), r((3, 2, 4)), r((3, 3, 4)).transpose(0, 2, 1)), {"beta": 0.5, "alpha": -2.0}
    yield (r((2, 1)), r((1, 2, 2)), r((1, 2, 3))), {"beta": 0}


def _addr_check(self, vec1, vec2) -> tuple:
    for arg, t in (("vec1", vec1), ("vec2", vec2)):
        if len(t.shape) != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {arg}, but got {len(t.shape)}-D")
    shape = (vec1.shape[0], vec2.shape[0])
    _broadcast_to(self.shape, shape)
    return shape, _promoted(self, vec1, vec2)


def _broadcast_to(shape, target) -> None:
    if broadcast_shapes_or_none(tuple(shape), tuple(target)) != tuple(target):
        raise RuntimeError(
            f"The expanded size of the tensor ({target[-1]}) must match the existing size "
            f"({shape[-1] if shape else 1}) at non-singleton dimension {len(target) - 1}.  "
            f"Target sizes: {list(target)}.  Tensor sizes: {list(shape)}"
        )


@op("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG, out="cast",
    inplace=True)
def addr(self, vec1, vec2, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``, with ``self`` broadcast to the outer product's shape."""
    _, dtype = _addr_check(self, vec1, vec2)
    if not dtype.is_floating_point and (isinstance(beta, float) or isinstance(alpha, float)):
        name = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    prod = np.multiply.outer(vec1.astype(dtype.np, copy=False), vec2.astype(dtype.np, copy=False))
    return _scaled_sum(self.astype(dtype.np, copy=False), prod, beta, alpha)


@addr.meta_rule
def _(self, vec1, vec2, beta=1, alpha=1):
    shape, dtype = _addr_check(self, vec1, vec2)
    return TensorMeta(shape, dtype, vec1.device)


@addr.grad
def _(grad, vec1, vec2, beta, alpha, needs_input_grad):
    g_self = maybe_multiply(grad, beta) if needs_input_grad[0] else None
    g1 = grad.mv(vec2.to(grad.dtype)) * alpha if needs_input_grad[1] else None
    g2 = grad.t().mv(vec1.to(grad.dtype)) * alpha if needs_input_grad[2] else None
    return g_self, g1, g2


@addr.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r(2), r(3)), {}
    yield (r(3), r(2), r((3, 2))[:, 0]), {"beta": 0.5, "alpha": 2.0}
    yield (r(()), r(2), r(2)), {"beta": 0}


# ---------------------------------------------------------------------------------------------
# kron
# ---------------------------------------------------------------------------------------------
def _kron_shapes(a, b):
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return pa, pb


@op("kron(Tensor self, Tensor other) -> Tensor", kind=LINALG, grad_fn="UnsafeViewBackward0", out="cast")
def kron(self, other):
    """Kronecker product: blocks ``self[i...] * other``; the operand with fewer dims gets leading 1s."""
    dtype = _promoted(self, other).np
    return np.kron(self.astype(dtype, copy=False), other.astype(dtype, copy=False))


@kron.meta_rule
def _(self, other):
    pa, pb = _kron_shapes(self.shape, other.shape)
    return TensorMeta(tuple(x * y for x, y in zip(pa, pb)), _promoted(self, other), self.device)


@kron.grad
def _(grad, self, other, needs_input_grad):
    pa, pb = _kron_shapes(self.shape, other.shape)
    n = len(pa)
    g = grad.reshape([s for pair in zip(pa, pb) for s in pair])  # (a0, b0, a1, b1, ...)
    ga = gb = None
    if needs_input_grad[0]:
        b = other.to(grad.dtype).reshape([s for d in pb for s in (1, d)])
        ga = (g * b).sum([2 * i + 1 for i in range(n)]).reshape(tuple(self.shape))
    if needs_input_grad[1]:
        a = self.to(grad.dtype).reshape([s for d in pa for s in (d, 1)])
        gb = (g * a).sum([2 * i for i in range(n)]).reshape(tuple(other.shape))
    return ga, gb


@kron.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r((2, 2))), {}
    yield (r(3), r((2, 2))), {}
    yield (r((2, 1, 2)), r(2)), {}


# ---------------------------------------------------------------------------------------------
# tensordot, inner
# ---------------------------------------------------------------------------------------------
def _tensordot_check(a, b, dims_a, dims_b):
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if _dtype(a) is not _dtype(b):
        raise RuntimeError("both inputs should have same dtype")
    da = [wrap_dim(d, len(a.shape)) for d in dims_a]
    db = [wrap_dim(d, len(b.shape)) for d in dims_b]
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y] and a.shape[x] != 1 and b.shape[y] != 1:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} and second "
                f"has size {b.shape[y]} in dim {y}"
            )
    free_a = [i for i in range(len(a.shape)) if i not in da]
    free_b = [i for i in range(len(b.shape)) if i not in db]
    shape = tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b)
    return da, db, free_a, free_b, shape


def _as_list(d):
    return [d] if isinstance(d, int) else list(d)


def _tensordot(a, b, dims_a, dims_b):
    da, db, _, _, _ = _tensordot_check(a, b, _as_list(dims_a), _as_list(dims_b))
    return np.asarray(np.tensordot(a, b, axes=(da, db)))


def _tensordot_grad(grad, a, b, dims_a, dims_b, needs_input_grad):
    da, db, free_a, free_b, _ = _tensordot_check(a, b, _as_list(dims_a), _as_list(dims_b))
    na = len(free_a)
    ga = gb = None
    if needs_input_grad[0]:
        # g (free_a, free_b) . b over free_b -> (free_a, b's contracted dims in b's order)
        t = api.tensordot(grad, b, list(range(na, grad.ndim)), free_b)
        order = free_a + [da[db.index(d)] for d in sorted(db)]
        ga = t.permute([order.index(i) for i in range(len(order))])
    if needs_input_grad[1]:
        t = api.tensordot(a, grad, free_a, list(range(na)))
        order = [db[da.index(d)] for d in sorted(da)] + free_b
        gb = t.permute([order.index(i) for i in range(len(order))])
    return ga, gb


@op("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor", kind=LINALG,
    function=False, method=False, out="exact",  # toolkit.tensordot (toolkit/functional.py) takes out=
    grad_fn="ViewBackward0")
def tensordot(self, other, dims_self, dims_other):
    """Sum of products over the paired dims ``dims_self`` of self and ``dims_other`` of other."""
    return _tensordot(self, other, dims_self, dims_other)


@tensordot.meta_rule
def _(self, other, dims_self, dims_other):
    return _meta(_tensordot_check(self, other, _as_list(dims_self), _as_list(dims_other))[4], self)


@tensordot.grad
def _(grad, self, other, dims_self, dims_other, needs_input_grad):
    return _tensordot_grad(grad, self, other, dims_self, dims_other, needs_input_grad)


@tensordot.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3, 4)), r((4, 3, 2)), [1, 2], [1, 0]), {}
    yield (r((2, 3)), r((3, 2)), [1], [0]), {}
    yield (r((2, 3)), r(4), [], []), {}


def _inner_check(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if not sa or not sb:
        return _broadcast_or_raise(sa, sb)
    if sa[-1] != sb[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but got shapes {list(sa)} and {list(sb)}"
        )
    return sa[:-1] + sb[:-1]


@op("inner(Tensor self, Tensor other) -> Tensor", kind=LINALG, grad_fn="ViewBackward0", out="cast")
def inner(self, other):
    """Sum of products over the last dim of both (a product with a 0-d operand is elementwise)."""
    shape = _inner_check(self, other)
    if self.ndim == 0 or other.ndim == 0:
        dtype = _promoted(self, other).np
        return np.multiply(self, other).astype(dtype, copy=False)
    if _dtype(self) is not _dtype(other):
        raise RuntimeError("both inputs should have same dtype")
    return np.asarray(np.inner(self, other)).reshape(shape)


@inner.meta_rule
def _(self, other):
    shape = _inner_check(self, other)
    if shape and len(self.shape) and len(other.shape) and _dtype(self) is not _dtype(other):
        raise RuntimeError("both inputs should have same dtype")
    return TensorMeta(shape, _promoted(self, other), self.device)


@inner.grad
def _(grad, self, other, needs_input_grad):
    if self.ndim == 0 or other.ndim == 0:
        ga = (grad * other).sum_to_size(tuple(self.shape)) if needs_input_grad[0] else None
        gb = (grad * self).sum_to_size(tuple(other.shape)) if needs_input_grad[1] else None
        return ga, gb
    return _tensordot_grad(grad, self, other, [-1], [-1], needs_input_grad)


@inner.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(3), r(3)), {}
    yield (r((2, 3)), r((4, 3))), {}
    yield (r((2, 2, 3)), r(3)), {}
    yield (r(()), r((2, 3))), {}


# ---------------------------------------------------------------------------------------------
# trace
# ---------------------------------------------------------------------------------------------
def _trace_meta(self):
    if len(self.shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(self.shape)}")
    _no_bool("trace", self)
    d = _dtype(self)
    return TensorMeta((), d if d.is_floating_point or d.is_complex else _dt.int64, self.device)


@op("trace(Tensor self) -> Tensor", kind=LINALG, out=False, autocast="fp32")
def trace(self):
    """Sum of the main diagonal of a matrix (integers sum as int64, as ``sum``)."""
    meta = _trace_meta(self)
    return np.asarray(np.trace(self, dtype=meta.dtype.np))


trace.meta_rule(_trace_meta)


@trace.grad
def _(grad, self_shape):
    return api.eye(self_shape[0], self_shape[1], dtype=grad.dtype) * grad


@trace.sample_inputs
def _(rng):
    yield (rng.standard_normal((3, 3)),), {}
    yield (rng.standard_normal((2, 4)),), {}
    yield (rng.standard_normal((4, 2)).T,), {}


# ---------------------------------------------------------------------------------------------
# cross
# ---------------------------------------------------------------------------------------------
def _cross_check(a, b, dim, name="linalg.cross"):
    if _dtype(a) is not _dtype(b):
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    da, db = wrap_dim(dim, len(a.shape)), wrap_dim(dim, len(b.shape))
    if a.shape[da] != 3 or b.shape[db] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got {a.shape[da]} and {b.shape[db]}")
    shape = _broadcast_or_raise(a.shape, b.shape)
    return shape, wrap_dim(dim, len(shape))


def _default_cross_dim(a, b) -> int:
    """The first dim of size 3 (of the broadcast shape), which ``cross`` uses when ``dim`` is None (deprecated)."""
    shape = _broadcast_or_raise(a.shape, b.shape)
    for i, s in enumerate(shape):
        if s == 3:
            return i
    raise RuntimeError("no dimension of size 3 in input")


def _cross_grad(grad, a, b, dim, needs_input_grad):
    ga = api.linalg_cross(b, grad, dim=dim).sum_to_size(tuple(a.shape)) if needs_input_grad[0] else None
    gb = api.linalg_cross(grad, a, dim=dim).sum_to_size(tuple(b.shape)) if needs_input_grad[1] else None
    return ga, gb


@op("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", kind=LINALG, namespace="linalg",
    function="cross", method=False)
def linalg_cross(self, other, dim=-1):
    """Cross product of 3-vectors along ``dim``, broadcasting the other dims."""
    _, d = _cross_check(self, other, dim)
    return np.cross(self, other, axis=d)


@linalg_cross.meta_rule
def _(self, other, dim=-1):
    return _meta(_cross_check(self, other, dim)[0], self)


@linalg_cross.grad
def _(grad, self, other, dim, needs_input_grad):
    return _cross_grad(grad, self, other, dim, needs_input_grad)


@linalg_cross.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(3), r(3)), {}
    yield (r((2, 3)), r((1, 3))), {}
    yield (r((3, 2)), r((3, 2))), {"dim": 0}


def _cross_dim(self, other, dim) -> int:
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
            "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
            "that of linalg.cross in a future release.", UserWarning, stacklevel=4)
        return _default_cross_dim(self, other)
    return dim


@op("cross(Tensor self, Tensor other, int? dim=None) -> Tensor", kind=LINALG, grad_fn="LinalgCrossBackward0")
def cross(self, other, dim=None):
    """Cross product along ``dim``; without ``dim`` (deprecated) along the first dim of size 3."""
    return linalg_cross.kernels["cpu"](self, other, _cross_dim(self, other, dim))


@cross.meta_rule
def _(self, other, dim=None):
    d = _default_cross_dim(self, other) if dim is None else dim
    return _meta(_cross_check(self, other, d)[0], self)


@cross.grad
def _(grad, self, other, dim, needs_input_grad):
    d = _default_cross_dim(self, other) if dim is None else dim
    return _cross_grad(grad, self, other, d, needs_input_grad)


@cross.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((3, 2)), r((3, 2))), {"dim": 0}
    yield (r((2, 3)), r((2, 3))), {"dim": -1}
    yield (r((2, 3)), r((1, 3))), {"dim": 1}


# ---------------------------------------------------------------------------------------------
# chain_matmul
# ---------------------------------------------------------------------------------------------
def _chain_check(matrices):
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if len(m.shape) != 2:
            raise RuntimeError(f"Tensor dimension is {len(m.shape)}, expected 2 instead.")
    for i in range(len(matrices) - 1):
        a, b = matrices[i].shape, matrices[i + 1].shape
        if a[1] != b[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a)} and {list(b)} cannot be multiplied"
            )
    return (matrices[0].shape[0], matrices[-1].shape[1])


@op("chain_matmul(Tensor[] matrices) -> Tensor", kind=LINALG, out="any", method=False, composite=True)
def chain_matmul(matrices):
    """Product of a chain of 2-D matrices (deprecated in PyTorch for ``linalg.multi_dot``): ``mm`` left to
    right, a composition that runs on every device."""
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
        "parameters.", UserWarning, stacklevel=4)
    _chain_check(matrices)
    out = matrices[0].clone() if len(matrices) == 1 else matrices[0]
    for m in matrices[1:]:
        out = out.mm(m)
    return out


@chain_matmul.meta_rule
def _(matrices):
    return _meta(_chain_check(matrices), matrices[0])


@chain_matmul.grad
def _(grad, matrices, needs_input_grad=None):
    n = len(matrices)
    out = []
    for i in range(n):
        g = grad
        if i > 0:
            left = matrices[0]
            for m in matrices[1:i]:
                left = left.mm(m)
            g = left.t().mm(g)
        if i < n - 1:
            right = matrices[i + 1]
            for m in matrices[i + 2:]:
                right = right.mm(m)
            g = g.mm(right.t())
        out.append(g)
    return out


@chain_matmul.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 3)), r((3, 4)), r((4, 2))), {}
    yield (r((2, 3)), r((3, 1))), {}
    yield (r((2, 3)),), {}
