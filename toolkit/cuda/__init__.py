"""The CUDA device runtime. Tensors on ``cuda`` need a GPU visible to numba.cuda.

``is_available`` asks numba (imported on first call only, so ``import
toolkit`` stays fast); without a GPU every CUDA request fails with a clear error.
"""

from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=1)
def is_available() -> bool:
    """True when numba.cuda finds a usable GPU (never true under the CUDA simulator)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    try:
        from numba import cuda
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    try:
        return bool(cuda.is_available())
    except Exception:  # a broken driver means no GPU for us
        return False


def device_count() -> int:
    if not is_available():
        return 0
    from numba import cuda

    return len(cuda.gpus)


def _lazy_init() -> None:
    if not is_available():
        raise RuntimeError("Found no NVIDIA driver on your system or CUDA is unavailable: toolkit.cuda needs a GPU.")
