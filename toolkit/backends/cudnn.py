"""``toolkit.backends.cudnn``: PyTorch's cuDNN switches, kept so code that sets them runs unchanged.

toolkit's CUDA kernels are its own (numba.cuda), never cuDNN's: ``is_available()``
is False and ``version()`` None. The flags are set and read as in PyTorch
(``cudnn.benchmark = True``); toolkit's convolutions pick no algorithm by timing,
and are deterministic, whatever they say::

    with toolkit.backends.cudnn.flags(enabled=False):
        ...
"""

from __future__ import annotations

import sys

from . import flags_set

enabled = True
benchmark = False
benchmark_limit = None  # PyTorch's value without cuDNN
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: toolkit does not use cuDNN."""
    return False


def version() -> int | None:
    return None


def is_acceptable(tensor) -> bool:
    """Whether cuDNN would take this tensor: never, as toolkit has no cuDNN."""
    return False


def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
          allow_tf32: bool = True):
    """Set the flags for a ``with`` block (PyTorch's defaults for the arguments not given)."""
    return flags_set(sys.modules[__name__], enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                     deterministic=deterministic, allow_tf32=allow_tf32)
