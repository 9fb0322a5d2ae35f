"""Kernels per device, written once and specialized per scalar formula.

``toolkit.backends.cpu`` turns an elementwise op's scalar ``formula`` into a
numba map kernel (compiled lazily, cached on disk); a CUDA backend will
specialize the same formulas for ``numba.cuda``. Nothing here imports numba
until a kernel is first called, so ``import toolkit`` compiles nothing.
"""

import contextlib
from types import ModuleType


@contextlib.contextmanager
def flags_set(module: ModuleType, **values):
    """Set a backend's flags (``cudnn.benchmark``...) for a ``with`` block and restore them after; None leaves a
    flag as it is. What ``toolkit.backends.<name>.flags(...)`` returns."""
    given = {k: v for k, v in values.items() if v is not None}
    before = {k: getattr(module, k) for k in given}
    for k, v in given.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            setattr(module, k, v)


from . import cudnn, mkldnn, mps, opt_einsum  # noqa: E402  (the flags modules PyTorch's users set)
