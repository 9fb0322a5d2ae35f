"""Compiled quickselect for ``kthvalue``: the same median-of-three partitioning as PyTorch's CPU kernel.

Among equal values PyTorch returns whichever index its quickselect leaves at
position k, so matching its indices means running the same algorithm.
Imported only when ``kthvalue`` first runs, so ``import toolkit`` never loads
numba; the compiled function is cached on disk.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def gt_or_nan(x, y):
    """``x`` comes after ``y`` in ascending order, NaN after every number (as torch orders NaN)."""
    return (x != x and y == y) or x > y


def quickselect(gt, swap):
    """PyTorch's partitioning loop, ``select(arr, idx, lo, hi, k)``: reorders ``arr[lo..hi]`` (``idx`` along)
    until position ``k`` holds the k-th smallest. Plain Python over the caller's ``gt(x, y)`` (x sorts after
    y) and ``swap(arr, idx, i, j)``, so that one algorithm is compiled here by numba.njit and as a CUDA device
    function by :mod:`toolkit.backends.cuda.sort_select`."""

    def select(arr, idx, lo, hi, k):
        while hi > lo:
            if hi == lo + 1:
                if gt(arr[lo], arr[hi]):
                    swap(arr, idx, lo, hi)
                break
            swap(arr, idx, lo + (hi - lo) // 2, lo + 1)
            if gt(arr[lo + 1], arr[hi]):
                swap(arr, idx, lo + 1, hi)
            if gt(arr[lo], arr[hi]):
                swap(arr, idx, lo, hi)
            if gt(arr[lo + 1], arr[lo]):
                swap(arr, idx, lo + 1, lo)
            i, j = lo + 1, hi
            piv = arr[lo]
            while True:
                i += 1
                while gt(piv, arr[i]):
                    i += 1
                j -= 1
                while gt(arr[j], piv):
                    j -= 1
                if j < i:
                    break
                swap(arr, idx, i, j)
            swap(arr, idx, lo, j)
            if j <= k:
                lo = i
            if j >= k:
                hi = j - 1

    return select


@numba.njit(cache=True, inline="always")
def _swap(arr, idx, i, j):
    arr[i], arr[j] = arr[j], arr[i]
    idx[i], idx[j] = idx[j], idx[i]


_select = numba.njit(quickselect(gt_or_nan, _swap))


@numba.njit(cache=True)
def kth_indices(rows, k):
    """For each row, the index of its k-th smallest element (0-based k), NaN counting as the largest."""
    m, n = rows.shape
    out = np.empty(m, np.int64)
    arr = np.empty(n, rows.dtype)
    idx = np.empty(n, np.int64)
    for r in range(m):
        for t in range(n):
            arr[t] = rows[r, t]
            idx[t] = t
        _select(arr, idx, 0, n - 1, k)
        out[r] = idx[k]
    return out
