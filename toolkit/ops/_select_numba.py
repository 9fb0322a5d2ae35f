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
def _gt_or_nan(x, y):
    return (x != x and y == y) or x > y


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
        lo, hi = 0, n - 1
        while hi > lo:
            if hi == lo + 1:
                if _gt_or_nan(arr[lo], arr[hi]):
                    arr[lo], arr[hi] = arr[hi], arr[lo]
                    idx[lo], idx[hi] = idx[hi], idx[lo]
                break
            p = lo + (hi - lo) // 2
            arr[p], arr[lo + 1] = arr[lo + 1], arr[p]
            idx[p], idx[lo + 1] = idx[lo + 1], idx[p]
            if _gt_or_nan(arr[lo + 1], arr[hi]):
                arr[lo + 1], arr[hi] = arr[hi], arr[lo + 1]
                idx[lo + 1], idx[hi] = idx[hi], idx[lo + 1]
            if _gt_or_nan(arr[lo], arr[hi]):
                arr[lo], arr[hi] = arr[hi], arr[lo]
                idx[lo], idx[hi] = idx[hi], idx[lo]
            if _gt_or_nan(arr[lo + 1], arr[lo]):
                arr[lo + 1], arr[lo] = arr[lo], arr[lo + 1]
                idx[lo + 1], idx[lo] = idx[lo], idx[lo + 1]
            i, j = lo + 1, hi
            piv = arr[lo]
            while True:
                i += 1
                while _gt_or_nan(piv, arr[i]):
                    i += 1
                j -= 1
                while _gt_or_nan(arr[j], piv):
                    j -= 1
                if j < i:
                    break
                arr[i], arr[j] = arr[j], arr[i]
                idx[i], idx[j] = idx[j], idx[i]
            arr[lo], arr[j] = arr[j], arr[lo]
            idx[lo], idx[j] = idx[j], idx[lo]
            if j <= k:
                lo = i
            if j >= k:
                hi = j - 1
        out[r] = idx[k]
    return out
