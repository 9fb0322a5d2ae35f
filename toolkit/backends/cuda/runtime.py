"""numba.cuda, imported on first use; the caching allocator; launch configurations.

``cuda()`` returns the ``numba.cuda`` module (the real target, or numba's CUDA
simulator when ``NUMBA_ENABLE_CUDASIM=1`` was set before numba was imported).
Under the simulator every simulated thread is a Python thread, so launches use
a few small blocks there; kernels loop grid-stride, so any launch size is
correct on both. The simulator's shared arrays are made race-free here (see
:func:`_atomic_simulated_shared_arrays`).
"""

from __future__ import annotations

import functools
import os
import sys
import threading

import numpy as np


@functools.lru_cache(maxsize=1)
def cuda():
    from numba import cuda as numba_cuda  # optional: numba.cuda loads on first CUDA use

    if simulated():
        _atomic_simulated_shared_arrays()
    return numba_cuda


def simulated() -> bool:
    """True under numba's CUDA simulator (slow Python threads: keep launches small)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _atomic_simulated_shared_arrays() -> None:
    """Make the simulator create each shared array once per block, however its threads interleave.

    numba's simulator (``FakeCUDAShared.array``) looks a block's shared array up
    by call site and, when missing, creates and stores it: a get, then a set,
    on a dict all the block's threads (Python threads) share. A thread
    preempted between the two keeps an array of its own, and what it writes
    there is lost to the others: a tree reduction or a GEMM tile then comes out
    wrong now and then (more often on a loaded machine). Here the insert is one
    atomic ``dict.setdefault``, so every thread gets the array stored first;
    the call site is read from the caller's frame (numba formats the whole
    stack for it, which is also slow).
    """
    from numba.core import types  # optional: numba (the simulator's fixes)
    from numba.cuda.simulator import kernelapi  # optional: numba (the simulator's fixes)
    from numba.np import numpy_support  # optional: numba (the simulator's fixes)

    shared = kernelapi.FakeCUDAShared
    if getattr(shared.array, "atomic_insert", False):
        return
    original = shared.array

    def array(self, shape, dtype, *rest):
        if shape == 0 or rest:  # dynamic shared memory (one buffer, no race) or options numba checks itself
            return original(self, shape, dtype, *rest)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        found = self._allocations.get(key)
        return found if found is not None else self._allocations.setdefault(key, np.empty(shape, dtype))

    array.atomic_insert = True
    shared.array = array


def threads_per_block() -> int:
    return 16 if simulated() else 256


def launch_1d(n: int) -> tuple:
    """(blocks, threads) for a grid-stride loop over ``n`` items."""
    tpb = threads_per_block()
    blocks = max(1, min((n + tpb - 1) // tpb, 2 if simulated() else 4096))
    return blocks, tpb


def launch(kernel, n: int, *args) -> None:
    """``kernel(*args)`` launched for a grid-stride loop over ``n`` items; nothing is launched when ``n`` is 0."""
    if n:
        blocks, threads = launch_1d(n)
        kernel[blocks, threads](*args)


def rows_launch(m: int) -> tuple:
    """(blocks, threads) for one block per row of ``m`` rows (blocks walk the rows grid-stride)."""
    return min(m, 2 if simulated() else 1024), threads_per_block()


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
