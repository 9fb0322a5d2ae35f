"""Linear algebra products: mm, bmm, matmul (and ``@``), dot, mv, outer, addmm, baddbmm, addmv, einsum.

Kernels call numpy's BLAS-backed ``matmul``/``einsum`` directly on the input
arrays (no copies). Shape checks live in small functions shared by kernels and
meta rules, so eager errors and the JIT's type propagation agree; they phrase
errors as PyTorch does.
"""

from __future__ import annotations

import numpy as np

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none
from . import (
    _einsum,  # noqa: F401  (registers einsum)
    _flops,
)
from .registry import LINALG, op

_C_NAMES = {"Bool": "bool", "Byte": "unsigned char", "Char": "signed char", "Half": "c10::Half"}


def _dtype(x) -> _dt.dtype:
    """Our dtype of an array or of tensor metadata."""
    d = x.dtype
    return d if isinstance(d, _dt.dtype) else _dt._FROM_NP[d]


def scalar_name(x) -> str:
    """PyTorch's ScalarType name (``Float``, ``Long``) of an array's or tensor's dtype."""
    return _dtype(x).title


def _c_name(x) -> str:
    n = scalar_name(x)
    return _C_NAMES.get(n, n.lower())


def _no_bool(name, *xs):
    for x in xs:
        if _dtype(x) is _dt.bool:
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _mm_dims(a, b):
    return f"{a[0]}x{a[1]} and {b[0]}x{b[1]}"


# ---------------------------------------------------------------------------------------------
# Shape/dtype checks shared by kernels and meta rules (arguments need .shape and .dtype only)
# ---------------------------------------------------------------------------------------------
def _check_mm(a, b) -> tuple:
    if len(a.shape) != 2:
        raise RuntimeError("self must be a matrix")
    if len(b.shape) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mm_dims(a.shape, b.shape)})")
    if _dtype(a) is not _dtype(b):
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}")
    _no_bool("addmm_impl_cpu_", a)
    return (a.shape[0], b.shape[1])


def _check_bmm(a, b) -> tuple:
    if len(a.shape) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(b.shape) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
            f"but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    if _dtype(a) is not _dtype(b):
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    _no_bool("bmm", a)
    return (a.shape[0], a.shape[1], b.shape[2])


def _check_dot(a, b, name="dot") -> tuple:
    if len(a.shape) != 1 or len(b.shape) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(a.shape)}D and {len(b.shape)}D tensors")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same "
            f"number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
        )
    if _dtype(a) is not _dtype(b):
        raise RuntimeError(
            f"{name} : expected both vectors to have same dtype, but found {scalar_name(a)} and {scalar_name(b)}"
        )
    _no_bool(name, a)
    return ()


def _check_mv(a, v, rows=None) -> tuple:
    if len(a.shape) != 2 or len(v.shape) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(a.shape)}, {len(v.shape)}")
    if a.shape[1] != v.shape[0]:
        n = a.shape[0] if rows is None else rows
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
    if _dtype(a) is not _dtype(v):
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(v)}")
    _no_bool("addmv_impl_cpu", a)
    return (a.shape[0],)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _check_matmul(a, b) -> tuple:
    """torch.matmul's cases (dot, mv, mm, batched with broadcasting) and its errors; returns the result shape."""
    sa, sb = tuple(a.shape), tuple(b.shape)
    da, db = len(sa), len(sb)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return _check_dot(a, b)
    if db == 1:  # (..., n, k) @ (k,)
        rows = _prod(sa[:-1])
        if sa[-1] != sb[0]:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})")
        _same_dtype_matmul(a, b, da == 2)
        return sa[:-1]
    if da == 1 and db == 2:
        if sa[0] != sb[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mm_dims((1, sa[0]), sb)})")
        _same_dtype_matmul(a, b, True)
        return sb[1:]
    if db == 2:  # (..., m, k) @ (k, p): folded into one mm
        if sa[-1] != sb[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({_mm_dims((_prod(sa[:-1]), sa[-1]), sb)})"
            )
        _same_dtype_matmul(a, b, True)
        return sa[:-1] + sb[1:]
    batch_a, batch_b = sa[:-2], sb[:-2]
    batch = broadcast_shapes_or_none(batch_a, batch_b)
    if batch is None:
        n = max(len(batch_a), len(batch_b))
        pa, pb = (1,) * (n - len(batch_a)) + batch_a, (1,) * (n - len(batch_b)) + batch_b
        i = next(i for i in range(n) if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1)
        raise RuntimeError(
            f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at non-singleton dimension {i}"
        )
    k = sa[-1]
    if sb[-2] != k:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{_prod(batch)}, {k}] "
            f"but got: [{_prod(batch)}, {sb[-2]}]."
        )
    _same_dtype_matmul(a, b, False)
    return batch + ((sa[-2],) if da > 1 else ()) + (sb[-1],)


def _same_dtype_matmul(a, b, two_d):
    if _dtype(a) is not _dtype(b):
        if two_d:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}")
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    _no_bool("addmm_impl_cpu_", a)


def _check_add_term(name, self_shape, out_shape, dtypes):
    """``self`` of addmm/baddbmm/addmv must broadcast to the product's shape and share its dtype."""
    if broadcast_shapes_or_none(tuple(self_shape), out_shape) != out_shape:
        raise RuntimeError(
            f"The expanded size of the tensor ({out_shape[-1]}) must match the existing size "
            f"({self_shape[-1] if self_shape else 1}) at non-singleton dimension {len(out_shape) - 1}.  "
            f"Target sizes: {list(out_shape)}.  Tensor sizes: {list(self_shape)}"
        )
    if len({_dtype(x) for x in dtypes}) != 1:
        if name == "addmv":
            names = ", ".join(scalar_name(x) for x in dtypes[:-1]) + f", and {scalar_name(dtypes[-1])}"
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {names}")
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {scalar_name(dtypes[0])} and {scalar_name(dtypes[2])}"
        )


def _meta(shape, like):
    return TensorMeta(shape, _dtype(like), like.device)


# ---------------------------------------------------------------------------------------------
# Matrix products
# ---------------------------------------------------------------------------------------------
@op("mm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG, flops=_flops.mm)
def mm(self, mat2):
    """Matrix product of two 2-D tensors (no broadcasting; see ``matmul``)."""
    _check_mm(self, mat2)
    return np.matmul(self, mat2)


@mm.meta_rule
def _(self, mat2):
    return _meta(_check_mm(self, mat2), self)


@mm.grad
def _(grad, self, mat2, needs_input_grad):
    return (grad.mm(mat2.t()) if needs_input_grad[0] else None), (self.t().mm(grad) if needs_input_grad[1] else None)


@mm.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), rng.standard_normal((3, 4))), {}
    yield (rng.standard_normal((3, 2)).T, rng.standard_normal((4, 3)).T), {}
    yield (rng.standard_normal((1, 5)), rng.standard_normal((5, 1))), {}
    yield (rng.standard_normal((0, 3)), rng.standard_normal((3, 2))), {}
    yield (rng.standard_normal((2, 0)), rng.standard_normal((0, 3))), {}


@op("bmm(Tensor self, Tensor mat2) -> Tensor", kind=LINALG, flops=_flops.bmm)
def bmm(self, mat2):
    """Batched matrix product of two 3-D tensors with equal batch sizes (no broadcasting)."""
    _check_bmm(self, mat2)
    return np.matmul(self, mat2)


@bmm.meta_rule
def _(self, mat2):
    return _meta(_check_bmm(self, mat2), self)


@bmm.grad
def _(grad, self, mat2, needs_input_grad):
    return (grad.bmm(mat2.mT) if needs_input_grad[0] else None), (self.mT.bmm(grad) if needs_input_grad[1] else None)


@bmm.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 3, 4))), {}
    yield (rng.standard_normal((2, 3, 2)).transpose(0, 2, 1), rng.standard_normal((2, 4, 3)).transpose(0, 2, 1)), {}
    yield (rng.standard_normal((0, 2, 3)), rng.standard_normal((0, 3, 1))), {}


@op("matmul(Tensor self, Tensor other) -> Tensor", kind=LINALG, dunders=("matmul", "rmatmul"),
    flops=_flops.matmul)
def matmul(self, other):
    """Matrix product with torch.matmul's rules: 1-D operands act as vectors, batch dims broadcast."""
    if self.ndim == 2 and other.ndim == 2 and self.shape[1] == other.shape[0] and self.dtype == other.dtype \
            and self.dtype != np.bool_:
        return np.matmul(self, other)
    _check_matmul(self, other)
    return np.matmul(self, other)


@matmul.meta_rule
def _(self, other):
    return _meta(_check_matmul(self, other), self)


@matmul.specialize
def _(self, other):
    """Operands of one non-bool dtype: numpy's matmul has torch.matmul's rules (1-D operands, batch broadcast)."""
    if self.dtype == other.dtype and self.dtype.np != np.bool_:
        return np.matmul
    return None


@matmul.grad
def _(grad, self, other, needs_input_grad):
    da, db = self.ndim, other.ndim
    if da == 1 and db == 1:
        return (grad * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)
    g = grad.unsqueeze(-2) if da == 1 else grad
    g = g.unsqueeze(-1) if db == 1 else g
    ga = gb = None
    if needs_input_grad[0]:
        ga = g.matmul((other.unsqueeze(-1) if db == 1 else other).mT)
        ga = ga.squeeze(-2) if da == 1 else ga
    if needs_input_grad[1]:
        gb = (self.unsqueeze(0) if da == 1 else self).mT.matmul(g)
        gb = gb.squeeze(-1) if db == 1 else gb
    return ga, gb


@matmul.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(3), r(3)), {}
    yield (r((2, 3)), r(3)), {}
    yield (r(3), r((3, 2))), {}
    yield (r((2, 3)), r((3, 4))), {}
    yield (r((4, 2)).T, r((4, 3))), {}
    yield (r((2, 2, 3)), r(3)), {}
    yield (r(3), r((2, 3, 2))), {}
    yield (r((2, 2, 3)), r((3, 2))), {}
    yield (r((2, 3)), r((2, 3, 2))), {}
    yield (r((2, 1, 2, 3)), r((3, 3, 2))), {}
    yield (r((3, 2, 2)).transpose(0, 2, 1), r((1, 2, 3))), {}
    yield (r((0, 3)), r((3, 2))), {}


@op("dot(Tensor self, Tensor tensor) -> Tensor", kind=LINALG)
def dot(self, tensor):
    """Inner product of two 1-D tensors of the same size and dtype (a 0-d result)."""
    _check_dot(self, tensor)
    return np.asarray(np.dot(self, tensor))


@dot.meta_rule
def _(self, tensor):
    return _meta(_check_dot(self, tensor), self)


@dot.grad
def _(grad, self, tensor, needs_input_grad):
    return (grad * tensor if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@dot.sample_inputs
def _(rng):
    yield (rng.standard_normal(4), rng.standard_normal(4)), {}
    yield (rng.standard_normal((3, 2))[:, 0], rng.standard_normal(3)), {}
    yield (rng.standard_normal(0), rng.standard_normal(0)), {}


@op("vdot(Tensor self, Tensor other) -> Tensor", kind=LINALG)
def vdot(self, other):
    """Inner product of two 1-D tensors, conjugating the first (the same as ``dot`` for real tensors)."""
    _check_dot(self, other, "vdot")
    return np.asarray(np.dot(self, other))


@vdot.meta_rule
def _(self, other):
    return _meta(_check_dot(self, other, "vdot"), self)


@vdot.grad
def _(grad, self, other, needs_input_grad):
    return (grad * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@vdot.sample_inputs
def _(rng):
    yield (rng.standard_normal(3), rng.standard_normal(3)), {}


@op("mv(Tensor self, Tensor vec) -> Tensor", kind=LINALG)
def mv(self, vec):
    """Matrix-vector product of a 2-D and a 1-D tensor."""
    _check_mv(self, vec)
    return np.matmul(self, vec)


@mv.meta_rule
def _(self, vec):
    return _meta(_check_mv(self, vec), self)


@mv.grad
def _(grad, self, vec, needs_input_grad):
    ga = grad.unsqueeze(-1) * vec if needs_input_grad[0] else None
    return ga, (self.t().mv(grad) if needs_input_grad[1] else None)


@mv.sample_inputs
def _(rng):
    yield (rng.standard_normal((2, 3)), rng.standard_normal(3)), {}
    yield (rng.standard_normal((3, 2)).T, rng.standard_normal(3)), {}
    yield (rng.standard_normal((0, 3)), rng.standard_normal(3)), {}


def _check_outer(self, vec2, name="outer"):
    for arg, t in (("self", self), ("vec2", vec2)):
        if len(t.shape) != 1:
            raise RuntimeError(f"{name}: Expected 1-D argument {arg}, but got {len(t.shape)}-D")
    return (self.shape[0], vec2.shape[0]), _dt.promote_types(_dtype(self), _dtype(vec2))


def _outer_kernel(self, vec2, name):
    _, dtype = _check_outer(self, vec2, name)
    return np.multiply.outer(self.astype(dtype.np, copy=False), vec2.astype(dtype.np, copy=False))


def _outer_grad(grad, self, vec2, needs_input_grad):
    ga = grad.mv(vec2.to(grad.dtype)) if needs_input_grad[0] else None
    gb = grad.t().mv(self.to(grad.dtype)) if needs_input_grad[1] else None
    return ga, gb


def _outer_samples(rng):
    yield (rng.standard_normal(3), rng.standard_normal(2)), {}
    yield (rng.standard_normal((2, 4))[1], rng.standard_normal(1)), {}
    yield (rng.standard_normal(0), rng.standard_normal(2)), {}


@op("outer(Tensor self, Tensor vec2) -> Tensor", kind=LINALG)
def outer(self, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = self[i] * vec2[j]`` (dtypes promote)."""
    return _outer_kernel(self, vec2, "outer")


@op("ger(Tensor self, Tensor vec2) -> Tensor", kind=LINALG)
def ger(self, vec2):
    """Alias of ``outer``, kept for code written against older PyTorch."""
    return _outer_kernel(self, vec2, "outer")


for _o in (outer, ger):
    _o.meta_rule(lambda self, vec2: TensorMeta(*_check_outer(self, vec2), self.device))
    _o.grad(_outer_grad)
    _o.sample_inputs(_outer_samples)


# ---------------------------------------------------------------------------------------------
# beta * self + alpha * product
# ---------------------------------------------------------------------------------------------
def _scaled_sum(self, prod, beta, alpha):
    """``beta * self + alpha * prod`` in prod's dtype; ``self`` is ignored when beta is 0 (as PyTorch does)."""
    dtype = prod.dtype
    if alpha != 1:
        prod = np.multiply(prod, alpha).astype(dtype, copy=False)
    if beta == 0:
        return prod
    term = self if beta == 1 else np.multiply(self, beta)
    return np.add(prod, term).astype(dtype, copy=False)


def _addmm_check(self, mat1, mat2):
    if len(mat1.shape) != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {len(mat1.shape)}-D tensor")
    if len(mat2.shape) != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {len(mat2.shape)}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_mm_dims(mat1.shape, mat2.shape)})")
    shape = (mat1.shape[0], mat2.shape[1])
    _check_add_term("addmm", tuple(self.shape), shape, (self, mat1, mat2))
    _no_bool("addmm_impl_cpu_", mat1)
    return shape


@op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG,
    inplace=True, flops=_flops.addmm)
def addmm(self, mat1, mat2, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``, with ``self`` broadcast to the product's shape."""
    _addmm_check(self, mat1, mat2)
    return _scaled_sum(self, np.matmul(mat1, mat2), beta, alpha)


@addmm.meta_rule
def _(self, mat1, mat2, beta=1, alpha=1):
    return _meta(_addmm_check(self, mat1, mat2), mat1)


@addmm.grad
def _(grad, mat1, mat2, beta, alpha, needs_input_grad):
    g_self = grad * beta if needs_input_grad[0] else None
    g1 = grad.mm(mat2.t()) if needs_input_grad[1] else None
    g2 = mat1.t().mm(grad) if needs_input_grad[2] else None
    if alpha != 1:
        g1 = g1 * alpha if g1 is not None else None
        g2 = g2 * alpha if g2 is not None else None
    return g_self, g1, g2


@addmm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 4)), r((2, 3)), r((3, 4))), {}
    yield (r(4), r((2, 3)), r((4, 3)).T), {"beta": 0.5, "alpha": 2.0}
    yield (r((2, 1)), r((3, 2)).T, r((3, 4))), {"alpha": -1.5}
    yield (r(()), r((2, 3)), r((3, 2))), {"beta": 0}


def _baddbmm_check(self, batch1, batch2):
    shape = _check_bmm(batch1, batch2)
    _check_add_term("baddbmm", tuple(self.shape), shape, (self, batch1, batch2))
    return shape


@op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG,
    inplace=True)
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    """``beta * self + alpha * bmm(batch1, batch2)``, with ``self`` broadcast to the product's shape."""
    _baddbmm_check(self, batch1, batch2)
    return _scaled_sum(self, np.matmul(batch1, batch2), beta, alpha)


@baddbmm.meta_rule
def _(self, batch1, batch2, beta=1, alpha=1):
    return _meta(_baddbmm_check(self, batch1, batch2), batch1)


@baddbmm.grad
def _(grad, batch1, batch2, beta, alpha, needs_input_grad):
    g_self = grad * beta if needs_input_grad[0] else None
    g1 = grad.bmm(batch2.mT) * alpha if needs_input_grad[1] else None
    g2 = batch1.mT.bmm(grad) * alpha if needs_input_grad[2] else None
    return g_self, g1, g2


@baddbmm.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r((2, 2, 3)), r((2, 2, 4)), r((2, 4, 3))), {}
    yield (r(3), r((2, 2, 4)), r((2, 3, 4)).transpose(0, 2, 1)), {"beta": 0.5, "alpha": -2.0}


def _addmv_check(self, mat, vec):
    shape = _check_mv(mat, vec, rows=self.shape[0] if len(self.shape) == 1 else None)
    _check_add_term("addmv", tuple(self.shape), shape, (self, mat, vec))
    return shape


@op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", kind=LINALG,
    inplace=True)
def addmv(self, mat, vec, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``, with ``self`` broadcast to the product's shape."""
    _addmv_check(self, mat, vec)
    return _scaled_sum(self, np.matmul(mat, vec), beta, alpha)


@addmv.meta_rule
def _(self, mat, vec, beta=1, alpha=1):
    return _meta(_addmv_check(self, mat, vec), mat)


@addmv.grad
def _(grad, mat, vec, beta, alpha, needs_input_grad):
    g_self = grad * beta if needs_input_grad[0] else None
    g_mat = grad.unsqueeze(-1) * vec * alpha if needs_input_grad[1] else None
    g_vec = mat.t().mv(grad) * alpha if needs_input_grad[2] else None
    return g_self, g_mat, g_vec


@addmv.sample_inputs
def _(rng):
    r = rng.standard_normal
    yield (r(2), r((2, 3)), r(3)), {}
    yield (r(()), r((3, 2)).T, r(3)), {"beta": 2.0, "alpha": 0.5}
