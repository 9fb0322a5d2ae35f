"""CPU kernels: numpy where it is fast, numba map kernels generated from op formulas where it is not.

- :mod:`.codegen`: a scalar formula (an elementwise op's ``formula``) -> the source of a numba loop;
- :mod:`.cache`: generated sources as real files in ``$TOOLKIT_CACHE_DIR/kernels``, keyed by their hash;
- :mod:`.map_kernels`: ``map_kernel(formula, inputs, params)`` -> a callable over broadcast arrays;
- :mod:`.scalar`: helper functions formulas may call (``erfinv``, ``rint``, ...);
- :mod:`.split`: one kernel's work shared between the caller and helper threads, never slower than the serial
  loop on a busy machine (map kernels and the compiled kernels of ``ops`` run large calls through it).

numba is imported only when a kernel first runs.
"""

from .cache import cache_root, kernel_dir
from .codegen import FormulaError, map_source, rename, specialize
from .map_kernels import MapKernel, map_kernel

__all__ = ["FormulaError", "MapKernel", "cache_root", "kernel_dir", "map_kernel", "map_source", "rename", "specialize"]
