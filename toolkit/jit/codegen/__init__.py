"""Code generation for fusion groups: numba kernels written from the registry's scalar formulas."""

from .allocator import POOL, BufferPool
from .elementwise import fusibility
from .fused_kernel import FusedKernel, generate_source

__all__ = ["POOL", "BufferPool", "FusedKernel", "fusibility", "generate_source"]
