"""CUDA kernels written with numba.cuda, registered on the registry's ops when CUDA is first used.

- :mod:`.array`: ``CudaArray``, the strided device array a CUDA tensor holds;
- :mod:`.runtime`: numba.cuda (imported lazily), the caching allocator, launch sizes;
- :mod:`.codegen`: a registry formula -> a grid-stride map kernel over strided, broadcast operands;
- :mod:`.elementwise`: every elementwise op with a formula, from that one generator;
- :mod:`.reduce`, :mod:`.gemm`, :mod:`.nn`, :mod:`.indexing`, :mod:`.views`, :mod:`.factory`: the rest.

An op without a CUDA kernel raises NotImplementedError naming the op and the
device; nothing is silently computed on the host (random numbers are drawn on
the host by design, see :mod:`.factory`).
"""

from __future__ import annotations

_registered: list = []


def register_kernels() -> list:
    """Attach CUDA kernels to the registry's ops (once); returns the ops that have one."""
    if not _registered:
        from . import elementwise, factory, gemm, indexing, nn, reduce, views

        for mod in (factory, views, reduce, gemm, nn, indexing, elementwise):
            _registered.extend(mod.register())
    return list(_registered)
