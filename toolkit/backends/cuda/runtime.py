"""numba.cuda, imported on first use; the caching allocator; launch configurations.

``cuda()`` returns the ``numba.cuda`` module (the real target, or numba's CUDA
simulator when ``NUMBA_ENABLE_CUDASIM=1`` was set before numba was imported).
Under the simulator every simulated thread is a Python thread, so launches use
a few small blocks there; kernels loop grid-stride, so any launch size is
correct on both.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np


@functools.lru_cache(maxsize=1)
def cuda():
    from numba import cuda as numba_cuda

    return numba_cuda


def simulated() -> bool:
    """True under numba's CUDA simulator (slow Python threads: keep launches small)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def threads_per_block() -> int:
    return 16 if simulated() else 256


def launch_1d(n: int) -> tuple:
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    tpb = threads_per_block()
    blocks = max(1, min((n + tpb - 1) // tpb, 2 if simulated() else 4096))
    return blocks, tpb


def _round(nbytes: int) -> int:
    """Block sizes the allocator hands out: 512-byte multiples, powers of two up to 1 MiB, then 2 MiB multiples."""
    if nbytes <= 512:
        return 512
    if nbytes <= 1 << 20:
        return 1 << (nbytes - 1).bit_length()
    return (nbytes + (2 << 20) - 1) // (2 << 20) * (2 << 20)


class CachingAllocator:
    """Keeps freed device buffers by (dtype, rounded size) and hands them out again, as PyTorch's allocator.

    ``allocated`` counts bytes of live buffers, ``reserved`` bytes held from the
    driver (live and cached), ``peak`` the most ever allocated.
    """

    def __init__(self):
        self._free: dict = {}
        self._lock = threading.Lock()
        self.allocated = 0
        self.reserved = 0
        self.peak = 0

    def alloc(self, n: int, dtype: np.dtype):
        nbytes = _round(max(n, 1) * dtype.itemsize)
        key = (dtype.str, nbytes)
        with self._lock:
            free = self._free.get(key)
            buf = free.pop() if free else None
            if buf is None:
                buf = cuda().device_array(nbytes // dtype.itemsize, dtype)
                self.reserved += nbytes
            self.allocated += nbytes
            self.peak = max(self.peak, self.allocated)
        return buf

    def release(self, buf) -> None:
        dtype = np.dtype(buf.dtype)
        nbytes = buf.shape[0] * dtype.itemsize
        with self._lock:
            self.allocated -= nbytes
            self._free.setdefault((dtype.str, nbytes), []).append(buf)

    def empty_cache(self) -> None:
        with self._lock:
            for bufs in self._free.values():
                for b in bufs:
                    self.reserved -= b.shape[0] * np.dtype(b.dtype).itemsize
            self._free.clear()

    def reset_peak(self) -> None:
        self.peak = self.allocated


ALLOCATOR = CachingAllocator()
