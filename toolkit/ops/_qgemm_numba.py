"""The int8 matrix product of quantized linear layers and convolutions: uint8 activations with a zero point times
int8 weights with per-tensor or per-output-channel zero points, accumulated exactly in int32.

``acc[m, n] = sum_k (x[m, k] - x_zp) * (w[n, k] - w_zp[n])`` is computed as the raw product ``sum_k x * w`` less
the zero-point corrections ``x_zp * wsum[n] + w_zp[n] * xsum[m] - K * x_zp * w_zp[n]``, where ``wsum`` (the
weight rows' sums) is computed once when the weight is packed and ``xsum`` (the activation rows' sums) in the same
pass as the product. The weight is packed once, transposed to (K, N) int8, so the inner loop runs over a contiguous
row of N weights: LLVM widens it to int32 and vectorizes it (AVX2/AVX-512), and eight rows of K are summed before
the accumulator row is written back, which halves the product's memory traffic against one row at a time::

    packed = pack_weight(w_int8)                    # (K, N) int8 and the rows' sums, once per weight
    acc = gemm_u8s8(x_uint8, x_zp, packed, w_zp)    # (M, N) int32

Where the CPU has dot-product instructions for it (AVX-512 VNNI, AVX-VNNI or AVX2's ``vpmaddwd``, see
``_qgemm_vnni``), known once at import as :data:`FAST`, the weight is packed for them instead and the raw product
runs there: 64 x 1024 x 1024 on one core took 0.17 ms with AVX-512 VNNI, 0.31 ms with AVX-VNNI and 0.67 ms with
AVX2, against 0.9 ms for the loop above. The zero-point corrections and the requantization are the same code on
both paths, so the results are equal bit for bit. ``pack_weight(w, fast=False)`` keeps the portable loop.

Rows of ``x`` are independent: large products split them over the cores with ``backends.cpu.split.run_slices``
(which follows how many cores other processes leave free). Imported only when a quantized product first runs,
so ``import toolkit`` never loads numba; the compiled loops are cached on disk.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..backends.cpu.split import run_slices
from . import _qgemm_vnni as _vnni

# One multiply-add of the vectorized int8 loop costs about a tenth of a float32 sum's element (measured 0.9 ms for
# 64 x 1024 x 1024 on one core): the work ``run_slices`` weighs against the cost of handing out chunks.
MACS_PER_WORK = 10
# The same on the dot-product instructions (see the module's text for the times it is taken from).
MACS_PER_WORK_FAST = {"avx512vnni": 40, "avxvnni": 22, "avx2": 12}.get(_vnni.KIND, MACS_PER_WORK)
UNROLL = 8  # rows of K summed per pass over an accumulator row
FAST = _vnni.KIND is not None  # whether weights are packed for the dot-product instructions by default
INT32, REQUANTIZE, DEQUANTIZE = 0, 1, 2  # what ``_fast_rows`` writes
_NO_EPILOGUE = (np.zeros(0, np.float32), np.zeros(0, np.float32), np.float32(0), np.float32(0), np.float32(0))


class PackedWeight(NamedTuple):
    """An int8 weight (N, K) as the product reads it: transposed to (K, N) for the portable loop, or packed for
    the dot-product instructions, with each output row's sum."""
    wt: np.ndarray | None  # (K, N) int8, C-contiguous; None when packed for the instructions
    wsum: np.ndarray  # (N,) int32: sum over K of w[n, :]
    wv: np.ndarray | None  # (panels, ceil(K / STEP), NR) int32 (``_qgemm_vnni.pack``), or None
    k: int  # the weight's columns (K)

    @property
    def n(self) -> int:
        return self.wsum.shape[0]


def pack_weight(w: np.ndarray, fast: bool | None = None) -> PackedWeight:
    """Pack int8 weight ``w`` (N, K) once, with its rows' sums: for the dot-product instructions when ``fast`` (by
    default where the CPU has them, :data:`FAST`), else its transpose, contiguous, for the portable loop."""
    w = np.asarray(w, dtype=np.int8)
    fast = FAST if fast is None else fast
    if fast and not FAST:
        raise RuntimeError("the CPU (or numba's target) has no dot-product instructions for the int8 product "
                           "(AVX-512 VNNI, AVX-VNNI or AVX2)")
    wsum = w.sum(axis=1, dtype=np.int64).astype(np.int32)
    if fast:
        return PackedWeight(None, wsum, _vnni.pack(w), w.shape[1])
    return PackedWeight(np.ascontiguousarray(w.T), wsum, None, w.shape[1])


def _setup(x: np.ndarray, x_zp: int, packed: PackedWeight, w_zp, k: int | None = None) -> tuple:
    x = np.ascontiguousarray(x, dtype=np.uint8)
    m, k = x.shape[0], x.shape[1] if k is None else k  # a given k: the columns past it are zeros (``words``)
    n = packed.n
    w_zp = np.broadcast_to(np.asarray(w_zp, dtype=np.int32), (n,)).copy()
    corr = (np.int32(k) * np.int32(x_zp) * w_zp - np.int32(x_zp) * packed.wsum).astype(np.int32)
    return x, m, n, m * n * max(k, 1) // (MACS_PER_WORK_FAST if packed.wv is not None else MACS_PER_WORK), w_zp, corr


def _run(kernel, mode: int, x: np.ndarray, packed: PackedWeight, work: int, out: np.ndarray, tail: tuple,
         epilogue: tuple = ()) -> np.ndarray:
    """Split the rows of the fresh ``out`` over the cores, on the path ``packed`` was packed for: the portable
    ``kernel`` with ``tail``, or ``_fast_rows`` in ``mode`` with ``tail`` and the ``epilogue``'s five arguments.
    Returns the array holding the result (``out``, or its copy after a late helper)."""
    if packed.wv is None:
        return run_slices(kernel, x.shape[0], work, (x,), (out,), (packed.wt, *tail))[0]
    words, padded = _vnni.words(x)
    return run_slices(_fast_rows, x.shape[0], work, (words, padded), (out,),
                      (packed.wv, *tail[:2], mode, *(epilogue or _NO_EPILOGUE)))[0]


def gemm_u8s8(x: np.ndarray, x_zp: int, packed: PackedWeight, w_zp) -> np.ndarray:
    """``(x - x_zp) @ (w - w_zp[:, None]).T`` in int32 for uint8 ``x`` (M, K) and the packed int8 ``w`` (N, K);
    ``w_zp`` holds one zero point per output column (N,), or one for all."""
    x, m, n, work, w_zp, corr = _setup(x, x_zp, packed, w_zp)
    acc = np.empty((m, n), np.int32)
    if m and n:
        acc = _run(_gemm_rows, INT32, x, packed, work, acc, (w_zp, corr))
    return acc


def gemm_u8s8_requantize(x: np.ndarray, x_zp: int, packed: PackedWeight, w_zp, offset: np.ndarray,
                         multiplier: np.ndarray, y_zp: int, lo: int, hi: int, k: int | None = None) -> np.ndarray:
    """The product requantized to uint8 row by row as it is computed (no int32 matrix in memory):
    ``clamp(round_half_even((float32(acc) + offset[n]) * multiplier[n]) + y_zp, lo, hi)``, all in float32.
    ``k`` (packed for the dot-product instructions only): ``x``'s first ``k`` columns are the activations and the
    rest, up to the next whole word, zeros, so its rows are read as words in place."""
    x, m, n, work, w_zp, corr = _setup(x, x_zp, packed, w_zp, k)
    out = np.empty((m, n), np.uint8)
    if m and n:
        tail = (offset, multiplier, np.float32(y_zp), np.float32(lo), np.float32(hi))
        out = _run(_gemm_rows_requantize, REQUANTIZE, x, packed, work, out, (w_zp, corr, *tail), tail)
    return out


def gemm_u8s8_dequantize(x: np.ndarray, x_zp: int, packed: PackedWeight, w_zp, scale: np.ndarray,
                         bias: np.ndarray) -> np.ndarray:
    """The product as float32 row by row: ``float32(acc) * scale[n] + bias[n]`` (two float32 roundings)."""
    x, m, n, work, w_zp, corr = _setup(x, x_zp, packed, w_zp)
    out = np.empty((m, n), np.float32)
    if m and n:
        out = _run(_gemm_rows_dequantize, DEQUANTIZE, x, packed, work, out, (w_zp, corr, scale, bias),
                   (bias, scale, np.float32(0), np.float32(0), np.float32(0)))
    return out


@numba.njit(cache=True, nogil=True)
def _row(x, i, row, wt, w_zp, corr):  # pragma: no cover - compiled
    """Row ``i`` of the corrected int32 product into ``row``."""
    k = x.shape[1]
    n = wt.shape[1]
    for j in range(n):
        row[j] = 0
    xsum = np.int32(0)  # a pass of its own: summed inside the product, it stops LLVM vectorizing
    for kk in range(k):
        xsum += np.int32(x[i, kk])
    kk = 0
    while kk + UNROLL <= k:
        x0 = np.int32(x[i, kk])
        x1 = np.int32(x[i, kk + 1])
        x2 = np.int32(x[i, kk + 2])
        x3 = np.int32(x[i, kk + 3])
        x4 = np.int32(x[i, kk + 4])
        x5 = np.int32(x[i, kk + 5])
        x6 = np.int32(x[i, kk + 6])
        x7 = np.int32(x[i, kk + 7])
        w0 = wt[kk]
        w1 = wt[kk + 1]
        w2 = wt[kk + 2]
        w3 = wt[kk + 3]
        w4 = wt[kk + 4]
        w5 = wt[kk + 5]
        w6 = wt[kk + 6]
        w7 = wt[kk + 7]
        for j in range(n):
            row[j] += (x0 * np.int32(w0[j]) + x1 * np.int32(w1[j]) + x2 * np.int32(w2[j])
                       + x3 * np.int32(w3[j]) + x4 * np.int32(w4[j]) + x5 * np.int32(w5[j])
                       + x6 * np.int32(w6[j]) + x7 * np.int32(w7[j]))
        kk += UNROLL
    while kk < k:
        xv = np.int32(x[i, kk])
        w = wt[kk]
        for j in range(n):
            row[j] += xv * np.int32(w[j])
        kk += 1
    for j in range(n):
        row[j] += corr[j] - w_zp[j] * xsum


@numba.njit(cache=True, nogil=True)
def _gemm_rows(x, acc, wt, w_zp, corr):  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        _row(x, i, acc[i], wt, w_zp, corr)


@numba.njit(cache=True, nogil=True)
def _requantize(row, out, mult, offset, y_zp, lo, hi):  # pragma: no cover - compiled
    for j in range(row.shape[0]):
        v = np.rint((np.float32(row[j]) + offset[j]) * mult[j]) + y_zp
        out[j] = np.uint8(min(max(v, lo), hi))


@numba.njit(cache=True, nogil=True)
def _dequantize(row, out, scale, bias):  # pragma: no cover - compiled
    for j in range(row.shape[0]):
        out[j] = np.float32(row[j]) * scale[j] + bias[j]


@numba.njit(cache=True, nogil=True)
def _gemm_rows_requantize(x, out, wt, w_zp, corr, offset, mult, y_zp, lo, hi):  # pragma: no cover - compiled
    row = np.empty(wt.shape[1], np.int32)
    for i in range(x.shape[0]):
        _row(x, i, row, wt, w_zp, corr)
        _requantize(row, out[i], mult, offset, y_zp, lo, hi)


@numba.njit(cache=True, nogil=True)
def _gemm_rows_dequantize(x, out, wt, w_zp, corr, scale, bias):  # pragma: no cover - compiled
    row = np.empty(wt.shape[1], np.int32)
    for i in range(x.shape[0]):
        _row(x, i, row, wt, w_zp, corr)
        _dequantize(row, out[i], scale, bias)


@numba.njit(cache=True, nogil=True)
def _acc(raw, corr, w_zp, xsum):  # pragma: no cover - compiled
    """The corrected accumulator, wrapped to int32 as the portable loop's int32 row holds it (numba widens
    int32 sums to int64)."""
    return np.int32(raw + corr - w_zp * xsum)


@numba.njit(cache=True, nogil=True)
def _fast_rows(xw, xb, out, wv, w_zp, corr, mode, offset, mult, y_zp, lo, hi):  # pragma: no cover - compiled
    """The three products on the dot-product instructions, ``RB`` rows at a time, from activation words
    ``xw`` (see ``_qgemm_vnni.words``) and the uint8 rows ``xb`` they hold: ``mode`` ``INT32`` (``_gemm_rows``),
    ``REQUANTIZE`` or ``DEQUANTIZE`` (``mult`` the scale, ``offset`` the bias), with the portable loop's
    corrections and epilogues (the same float32 operations, so the same bits). The epilogue runs on the block in
    place, indexed, with no per-row views or calls: for small N (a convolution's few output channels) per-row
    overhead cost several times the product. The rows' sums are skipped where every ``w_zp`` is 0 (symmetric
    weights), as they then add nothing."""
    m = xw.shape[0]
    n = out.shape[1]
    c = np.empty((min(_vnni.RB, m), wv.shape[0] * wv.shape[2]), np.int32)
    xsum = np.zeros(_vnni.RB, np.int32)
    scaled = np.empty((c.shape[0], n if mode == REQUANTIZE else 0), np.float32)
    any_zp = False
    for j in range(n):
        any_zp |= w_zp[j] != 0
    for i0 in range(0, m, _vnni.RB):
        i1 = min(i0 + _vnni.RB, m)
        _vnni.product(xw[i0:i1], wv, c)
        if any_zp:
            for i in range(i0, i1):
                s = np.int32(0)
                for kk in range(xb.shape[1]):  # the zero padding adds nothing
                    s += np.int32(xb[i, kk])
                xsum[i - i0] = s
        for i in range(i0, i1):
            r = i - i0
            xs = xsum[r]
            if mode == INT32:
                for j in range(n):
                    out[i, j] = _acc(c[r, j], corr[j], w_zp[j], xs)
            elif mode == REQUANTIZE and any_zp:  # clamped in a loop of its own below: both vectorize better
                for j in range(n):
                    scaled[r, j] = np.rint((np.float32(_acc(c[r, j], corr[j], w_zp[j], xs)) + offset[j])
                                           * mult[j]) + y_zp
            elif mode == REQUANTIZE:  # the same without the rows' sums, which add nothing here
                for j in range(n):
                    scaled[r, j] = np.rint((np.float32(np.int32(c[r, j] + corr[j])) + offset[j]) * mult[j]) + y_zp
            else:
                for j in range(n):
                    out[i, j] = np.float32(_acc(c[r, j], corr[j], w_zp[j], xs)) * mult[j] + offset[j]
        if mode == REQUANTIZE:
            for i in range(i0, i1):
                for j in range(n):
                    out[i, j] = np.uint8(min(max(scaled[i - i0, j], lo), hi))
