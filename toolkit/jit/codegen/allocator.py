"""A caching allocator for fused kernels' outputs: reuse a buffer once nothing else holds it.

Large fresh arrays cost page faults on every call (glibc hands big blocks back
to the kernel on free), which can take longer than the fused loop itself. The
pool keeps the raw buffers it handed out; a buffer is free again when the pool
holds the only reference to it, which CPython's reference count tells exactly:
every array (and so every Tensor) made from a pooled buffer, views included,
keeps a reference to it through ``.base``.

Example::

    >>> out = POOL.empty((1000,), np.float32)   # a fresh buffer, or a free one reused
"""

from __future__ import annotations

import sys
import threading

import numpy as np

MIN_BYTES = 1 << 16  # smaller arrays come from numpy's own small-block cache cheaply
_FREE_REFS = 3  # the pool's list, the loop variable and getrefcount's argument


class BufferPool:
    """Buffers grouped by byte size; at most ``per_size`` kept per size and ``max_bytes`` in all."""

    def __init__(self, per_size: int = 4, max_bytes: int = 1 << 30):
        self.per_size = per_size
        self.max_bytes = max_bytes
        self._buckets: dict[int, list] = {}
        self._held = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def empty(self, shape: tuple, dtype) -> np.ndarray:
        """An uninitialized C-contiguous array of ``shape`` and ``dtype``."""
        dtype = np.dtype(dtype)
        n = 1
        for s in shape:
            n *= s
        nbytes = n * dtype.itemsize
        if nbytes < MIN_BYTES:
            return np.empty(shape, dtype)
        with self._lock:
            bucket = self._buckets.get(nbytes)
            if bucket is None:
                bucket = self._buckets[nbytes] = []
            for b in bucket:
                if sys.getrefcount(b) <= _FREE_REFS:
                    self.hits += 1
                    return b.view(dtype).reshape(shape)
            self.misses += 1
            b = np.empty(nbytes, np.uint8)
            if len(bucket) < self.per_size and self._held + nbytes <= self.max_bytes:
                bucket.append(b)
                self._held += nbytes
            return b.view(dtype).reshape(shape)

    def held_bytes(self) -> int:
        return self._held

    def clear(self) -> None:
        """Forget every buffer (arrays still in use keep theirs alive)."""
        with self._lock:
            self._buckets.clear()
            self._held = 0


POOL = BufferPool()
