"""``toolkit.linalg``: the registry's ``namespace="linalg"`` ops, as ``torch.linalg`` spells them.

``toolkit.linalg.norm``, ``inv``, ``det``, ``solve``, ``cholesky``, ``qr``,
``svd``, ``eigh``... are the registry's ops (``aten::linalg_norm`` and so on);
``matmul`` and ``vecdot`` here are the same products ``toolkit`` has.
"""

from __future__ import annotations

from .ops import api as _api
from .ops import decomposition as _decomposition
from .ops.decomposition import LinAlgError  # noqa: F401  (toolkit.linalg.LinAlgError)

globals().update(_api.exported("linalg"))

matmul = _api.matmul


def vecdot(x, y, *, dim: int = -1):
    """Dot product of vectors along ``dim``, broadcasting the other dims; complex ``x`` is conjugated."""
    _decomposition.check_float("linalg.vecdot", x)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{x.dtype.title} and y of type {y.dtype.title} instead")
    return (x.conj() * y).sum(dim)


def multi_dot(tensors):
    """Product of a chain of matrices (first and last may be vectors), left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = _api.matmul(out, t)
    return out


__all__ = sorted([*_api.exported("linalg"), "LinAlgError", "matmul", "vecdot", "multi_dot"])
