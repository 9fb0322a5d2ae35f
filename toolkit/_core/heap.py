"""Keeping freed memory in the process: glibc's allocator tuned so a training loop's arrays reuse warm pages.

A training step allocates and frees the same few-hundred-kilobyte to few-megabyte arrays every iteration
(activations, gradients, column buffers). glibc hands blocks above its mmap threshold straight to the OS and
gives back the top of its heap when more than the trim threshold is free, so the next step's arrays arrive as
fresh pages, and faulting them in (the kernel zeroes each page) costs as much as the arithmetic: the seed
``Net`` training step spent about 30% of its time there (6.9 ms a step; 4.9 ms with the heap kept). PyTorch keeps
its memory for reuse the same way on GPUs with its caching allocator.

``keep_freed_memory`` raises three of glibc's ``mallopt`` settings once, at ``import toolkit``: blocks up to
32 MiB come from the heap (larger ones still map and unmap their own pages), free memory at the top of the heap
is kept up to 1 GiB, and the heap grows in steps of 64 MiB of address space (pages are only committed when
touched). The cost is that a process's resident memory stays near its peak instead of shrinking between steps.
It does nothing on other C libraries, and ``TOOLKIT_KEEP_HEAP=0`` in the environment turns it off. No well-kept
library does this for numpy's arrays (numpy's own cache holds only small blocks), hence these few lines.
"""

from __future__ import annotations

import ctypes
import os

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3

SETTINGS = ((_M_MMAP_THRESHOLD, 32 << 20), (_M_TRIM_THRESHOLD, 1 << 30), (_M_TOP_PAD, 64 << 20))

_state = {"kept": None}


def keep_freed_memory() -> bool:
    """Apply ``SETTINGS`` once (glibc only, unless ``TOOLKIT_KEEP_HEAP=0``); whether they are in effect."""
    if _state["kept"] is None:
        _state["kept"] = _apply()
    return _state["kept"]


def _apply() -> bool:
    if os.environ.get("TOOLKIT_KEEP_HEAP", "1").strip().lower() in ("0", "false", "off"):
        return False
    try:  # glibc answers with its version; other C libraries and systems raise or answer nothing
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
    except (ValueError, OSError, AttributeError):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all(mallopt(param, value) == 1 for param, value in SETTINGS)
