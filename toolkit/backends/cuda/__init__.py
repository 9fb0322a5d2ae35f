"""CUDA kernels written with numba.cuda, registered on the registry's ops when CUDA is first used.

- :mod:`.array`: ``CudaArray``, the strided device array a CUDA tensor holds, with its copies, casts and
  fills (map kernels) and numpy's protocols;
- :mod:`.runtime`: numba.cuda (imported lazily), the caching allocator, launch sizes and launches;
- :mod:`.registration`: op meta rules on device arrays, and the tables that attach kernels to ops;
- :mod:`.codegen`: a registry formula -> a grid-stride map kernel over strided, broadcast operands;
- :mod:`.elementwise`: every elementwise op with a formula, from that one generator;
- the families, listed in :data:`MODULES`: reductions (:mod:`.reduce`, :mod:`.reduce_more`,
  :mod:`.reduce_scan`, :mod:`.reduce_norm`), products (:mod:`.gemm`, :mod:`.products`), neural-network
  ops (:mod:`.nn`, :mod:`.nn_norm`, :mod:`.nn_pool`), indexing (:mod:`.indexing`, :mod:`.masked`,
  :mod:`.scatter`, :mod:`.reduce_write`), ordering (:mod:`.sort`, :mod:`.sort_select`), layout (:mod:`.shape`,
  :mod:`.views`, :mod:`.view_scatter`, :mod:`.shape_join`), more products (:mod:`.products_tensor`,
  :mod:`.distances`), more neural-network ops (:mod:`.conv3d`, :mod:`.pooling_more`), linear algebra
  (:mod:`.linalg`, :mod:`.linalg_factor`, :mod:`.jacobi`, :mod:`.linalg_solves`, :mod:`.linalg_ldl`,
  :mod:`.linalg_lstsq`, :mod:`.matrix_exp`), :mod:`.gamma` and :mod:`.factory`.

An op without a CUDA kernel raises NotImplementedError naming the op and the
device; nothing is silently computed on the host (random numbers are drawn on
the host by design, see :mod:`.factory`).
"""

from __future__ import annotations

import importlib

from ..cuda_flags import is_built, matmul  # noqa: F401  (``toolkit.backends.cuda.matmul.allow_tf32``)
from . import runtime

# The kernel modules, each with a ``register()``, in registration order (a later module's kernel for an op
# replaces an earlier one's; :mod:`.views` only fills in view ops that have none).
MODULES = ("factory", "views", "reduce", "reduce_more", "reduce_scan", "reduce_norm", "gemm", "nn", "nn_norm",
           "nn_pool", "products", "indexing", "elementwise", "sort", "sort_select", "linalg", "linalg_factor", "shape",
           "masked", "scatter", "products_tensor", "view_scatter", "conv3d", "reduce_write", "linalg_solves",
           "pooling_more", "distances", "matrix_exp", "linalg_ldl", "linalg_lstsq", "gamma", "shape_join",
           "resample", "nan_reduce", "one_hot", "prelu", "search")

_registered: list = []


def register_kernels() -> list:
    """Attach CUDA kernels to the registry's ops (once); returns the ops that have one."""
    if not _registered:
        runtime.cuda()  # numba.cuda first (and, under the simulator, its fixes) before any kernel is defined
        for name in MODULES:
            _registered.extend(importlib.import_module(f"{__name__}.{name}").register())
    return list(_registered)
