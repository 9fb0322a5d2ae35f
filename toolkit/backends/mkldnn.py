"""``toolkit.backends.mkldnn``: PyTorch's oneDNN (MKL-DNN) switches, kept so code that sets them runs.

toolkit's CPU kernels are numpy and numba, never oneDNN's: ``is_available()`` is
False; ``enabled`` and ``deterministic`` are set and read as in PyTorch.
"""

from __future__ import annotations

import sys

from . import flags_set

enabled = True
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: toolkit does not use oneDNN."""
    return False


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True):
    """Set the flags for a ``with`` block."""
    return flags_set(sys.modules[__name__], enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)
