"""``import toolkit`` keeps freed memory in glibc's heap (``toolkit._core.heap``): a few-megabyte array then
comes from the heap instead of fresh pages mapped for it, which glibc's own counters show; ``TOOLKIT_KEEP_HEAP=0``
leaves glibc's defaults. Each case runs in a fresh interpreter, since the settings are process-wide."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc" or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="the heap settings are glibc's (and its counters, mallinfo2, glibc 2.33's)")

_PROBE = """
import ctypes, numpy as np
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
import toolkit
from toolkit._core import heap
mapped = libc.mallinfo2().hblkhd
a = np.ones(4 << 20, np.uint8)  # 4 MiB: above glibc's default mmap threshold, below toolkit's
grew = libc.mallinfo2().hblkhd - mapped
print(heap.keep_freed_memory(), grew >= 4 << 20)
"""


def _probe(**env) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env})
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_import_keeps_freed_memory_in_the_heap():
    kept, mapped = _probe()
    assert kept == "True" and mapped == "False"  # the 4 MiB array came from the heap


def test_environment_switch_leaves_glibc_defaults():
    kept, mapped = _probe(TOOLKIT_KEEP_HEAP="0")
    assert kept == "False" and mapped == "True"  # glibc mapped fresh pages for it
