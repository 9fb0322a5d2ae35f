"""Dtype names and shape checks of the linear algebra products, shared by kernels and meta rules.

Kernels and meta rules call the same ``_check_*`` function, so eager errors and the JIT's type propagation
agree; arguments need only ``.shape`` and ``.dtype`` (arrays or tensor metadata), and errors are phrased as
PyTorch's. ``scalar_name`` and ``_dtype`` also serve the other linalg families (norms, factorizations).
"""

from __future__ import annotations

from .._core import dtypes as _dt
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes_or_none

_C_NAMES = {"Bool": "bool", "Byte": "unsigned char", "Char": "signed char", "Half": "c10::Half"}


def _dtype(x) -> _dt.dtype:
    """Our dtype of an array or of tensor metadata."""
    d = x.dtype
    return d if isinstance(d, _dt.dtype) else _dt.FROM_NUMPY[d]


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


def _meta(shape, like):
    return TensorMeta(shape, _dtype(like), like.device)
