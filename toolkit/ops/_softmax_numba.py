"""Compiled softmax and log_softmax over the last dimension: one pass per row for the max, one for the sum of
exponentials, one to write, with rows spread over the cores when there are enough elements.

numpy's form (``x - max``, ``exp``, ``sum``, ``log``, ``-``) makes five full-size temporaries and runs on one
thread; this writes only the result. Rows run in parallel from ``PARALLEL_MIN`` elements on (the serial loop
below, where thread start-up costs more than it saves). Sums accumulate in float64, so float32 results are at
least as accurate as PyTorch's.

Imported only when softmax first runs over a last dimension, so ``import toolkit`` never loads numba; the
compiled functions are cached on disk.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..backends.cpu.map_kernels import PARALLEL_MIN


def _row_softmax(x, out, i, log):
    m = x.shape[1]
    top = -np.inf
    nan = False
    for j in range(m):
        v = x[i, j]
        if v != v:
            nan = True
        elif v > top:
            top = v
    if nan:
        for j in range(m):
            out[i, j] = np.nan
        return
    total = 0.0
    if log:
        for j in range(m):
            total += math.exp(x[i, j] - top)
        shift = top + math.log(total)
        for j in range(m):
            out[i, j] = x[i, j] - shift
    else:
        for j in range(m):
            e = math.exp(x[i, j] - top)
            out[i, j] = e
            total += e
        scale = 1.0 / total
        for j in range(m):
            out[i, j] = out[i, j] * scale


_row = numba.njit(cache=True, inline="always")(_row_softmax)


@numba.njit(cache=True)
def _serial(x, out, log):
    for i in range(x.shape[0]):
        _row(x, out, i, log)


@numba.njit(cache=True, parallel=True)
def _parallel(x, out, log):
    for i in numba.prange(x.shape[0]):
        _row(x, out, i, log)


def softmax_last_dim(x: np.ndarray, log: bool) -> np.ndarray:
    """softmax (or log_softmax) of a C-contiguous float32/float64 ``x`` along its last axis, in ``x``'s dtype."""
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty_like(rows)
    (_parallel if x.size >= PARALLEL_MIN and rows.shape[0] > 1 else _serial)(rows, out, log)
    return out.reshape(x.shape)
