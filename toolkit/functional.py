"""``toolkit.functional``: the functions ``torch.functional`` writes in Python over one op each.

``tensordot`` takes its ``dims`` as an int, two lists or a tensor, and ``cdist`` its ``compute_mode`` as a string;
each normalises them and calls the registry op PyTorch's function calls (``aten::tensordot`` with two dim lists,
``aten::cdist`` with an int mode), so traced graphs record the same op as PyTorch's and the op's schema stays the
one PyTorch has::

    toolkit.tensordot(a, b, dims=([1, 0], [0, 1]))
    toolkit.cdist(x1, x2, p=1.0, compute_mode="donot_use_mm_for_euclid_dist")
"""

from __future__ import annotations

from .ops import api
from .tensor import Tensor

__all__ = ["cdist", "tensordot"]


def tensordot(a: Tensor, b: Tensor, dims=2, out: Tensor | None = None) -> Tensor:
    """Sum of products over dims of ``a`` and ``b``: ``dims`` an int (the last ``dims`` dims of ``a`` with the first
    of ``b``), a pair of dim lists, or a tensor holding either, as ``torch.tensordot``."""
    if isinstance(dims, bool) or not isinstance(dims, (int, list, tuple, Tensor)):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
            f"lists, but got dims={dims}"
        )
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    dims_a: list[int] = []
    dims_b: list[int] = []
    if isinstance(dims, (list, tuple)):
        first, second = dims
        dims_a = [first] if isinstance(first, int) else [d for d in first]
        dims_b = [second] if isinstance(second, int) else [d for d in second]
    elif isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = [d for d in range(-dims, 0)]
        dims_b = [d for d in range(dims)]
    if out is None:
        return api.tensordot(a, b, dims_a, dims_b)
    return api.public_function_for("tensordot")(a, b, dims_a, dims_b, out=out)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M): (..., P, R);
    ``compute_mode`` named as ``torch.cdist`` names it."""
    if compute_mode == "use_mm_for_euclid_dist_if_necessary":
        return api.cdist(x1, x2, p, None)
    if compute_mode == "use_mm_for_euclid_dist":
        return api.cdist(x1, x2, p, 1)
    if compute_mode == "donot_use_mm_for_euclid_dist":
        return api.cdist(x1, x2, p, 2)
    raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
