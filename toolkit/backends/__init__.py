"""Kernels per device, written once and specialized per scalar formula.

``toolkit.backends.cpu`` turns an elementwise op's scalar ``formula`` into a
numba map kernel (compiled lazily, cached on disk); a CUDA backend will
specialize the same formulas for ``numba.cuda``. Nothing here imports numba
until a kernel is first called, so ``import toolkit`` compiles nothing.
"""
