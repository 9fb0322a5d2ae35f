"""Compiled reduction loops: sums (plain, of squares, of absolute values, of squared deviations), max/min and
argmax/argmin, over a whole contiguous array, over its last dim, or over a middle dim of an
``(outer, n, inner)`` contiguous layout, and the driver that splits large ones over the threads.

Why: numpy reduces on one thread, and its float32 sums accumulate in float32;
these loops add float32 terms in runs of ``NARROW`` over many vector lanes and
the runs' sums in float64 (so they are at least as accurate as PyTorch's
cascade sum, and no term pays a conversion; rows shorter than a run add their
terms in float64, which costs less there) and split large inputs over ``get_num_threads()``
threads (the loops release the GIL). Whole-array max/argmax and row max/argmax
run numpy's vectorized loops on the split blocks instead: they beat a compiled
scalar loop with NaN checks several times over.

Sums run over fixed blocks of ``BLOCK`` elements whose partial results are then
added in order, so a result never depends on the thread count. ``mode`` picks
what is summed: ``SUM`` ``x``, ``SQUARES`` ``x*x`` (squared in the input's dtype,
so a float32 square overflows to inf as PyTorch's does), ``ABS`` ``|x|``, ``DEV``
``(x - center)**2`` with the float64 ``center`` of each output.

Imported only when a large float reduction first runs, so ``import toolkit``
never loads numba; the compiled functions are cached on disk.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .._core.threads import get_num_threads
from ..backends.cpu.split import run_tasks, split_threads

SUM, SQUARES, ABS, DEV = 0, 1, 2, 3
BLOCK = 1 << 14  # elements per partial sum of a whole-array reduction
NARROW = 1024  # float32 terms added in float32 before their sum joins the float64 accumulator
INNER = 512  # columns of the (outer, n, inner) layout one task accumulates at a time
# Elements of the inner run of a two-run reduction below which the outer run is summed first: a row kernel pays
# ~35 ns a row, 46 us for a (64, 20, 8, 8) bias gradient's 1280 rows of 64, where columns first took 10 us.
SHORT_RUN = 512
_FAST = {"reassoc"}  # lets LLVM vectorize the accumulation; NaN and inf still propagate


@numba.njit(inline="always")
def _term(v, mode, c):
    if mode == SUM:
        return v
    if mode == SQUARES:
        return v * v
    if mode == ABS:
        return abs(v)
    d = v - c
    return d * d


@numba.njit(fastmath=_FAST)
def _sum_span(x, mode, c, zero):
    """The sum of ``mode``'s terms over a contiguous 1-D ``x`` (a slice: indices from 0 let LLVM vectorize)."""
    acc = zero
    for i in range(x.size):
        acc += _term(x[i], mode, c)
    return acc


@numba.njit(fastmath=_FAST)
def _narrow_span(x, mode, narrow_zero):
    acc = narrow_zero
    for i in range(x.size):
        acc += _term(x[i], mode, narrow_zero)  # never DEV here: narrow_zero only keeps the terms in x's type
    return acc


@numba.njit
def _sum_span_narrow(x, mode, narrow_zero, zero):
    """As ``_sum_span`` for float32 terms without a center: runs of ``NARROW`` terms add in float32 over many
    vector lanes (a few dozen terms per lane), the runs' sums in the wide accumulator, so no term pays a
    conversion and the error stays that of a float64 sum of a few thousand float32 values."""
    acc = zero
    for k in range(0, x.size, NARROW):
        acc += _narrow_span(x[k:k + NARROW], mode, narrow_zero)
    return acc


@numba.njit(cache=True, nogil=True)
def sum_blocks(x, parts, b0, b1, mode, c, narrow):
    """``parts[b]`` = the sum of ``mode``'s terms over block ``b`` of a contiguous 1-D ``x``, for b in [b0, b1);
    ``narrow``: float32 terms summed in runs (``_sum_span_narrow``)."""
    zero = parts.dtype.type(0)
    narrow_zero = np.zeros(1, x.dtype)[0]
    for b in range(b0, b1):
        block = x[b * BLOCK:min(x.size, (b + 1) * BLOCK)]
        parts[b] = _sum_span_narrow(block, mode, narrow_zero, zero) if narrow else _sum_span(block, mode, c, zero)


@numba.njit(cache=True, nogil=True)
def sum_rows(x, out, r0, r1, mode, centers, narrow):
    """``out[r]`` = the sum of ``mode``'s terms over row ``r`` of a contiguous 2-D ``x``, for r in [r0, r1)."""
    zero = out.dtype.type(0)
    narrow_zero = np.zeros(1, x.dtype)[0]
    for r in range(r0, r1):
        if narrow:
            out[r] = _sum_span_narrow(x[r], mode, narrow_zero, zero)
        else:
            out[r] = _sum_span(x[r], mode, centers[r if mode == DEV else 0], zero)


@numba.njit(inline="always")
def _columns(x, t):
    """Task ``t`` of the middle-dim loops: (o, j0, j1), the columns ``[j0, j1)`` of ``x[o]``, ``INNER`` at a time."""
    blocks = (x.shape[2] + INNER - 1) // INNER
    j0 = (t % blocks) * INNER
    return t // blocks, j0, min(x.shape[2], j0 + INNER)


@numba.njit(fastmath=_FAST)
def _sum_columns(x, out, mode, centers, o, j0, j1):
    """Columns ``[j0, j1)`` of ``out[o]``: the rows of ``x[o]`` summed into a small accumulator, four rows at a
    time (widened to the accumulator's type first), which keeps the accumulator's loads and stores from
    costing more than the conversions."""
    acc = np.zeros(j1 - j0, out.dtype)
    wide = out.dtype.type
    c = centers[o, j0:j1] if mode == DEV else centers[0, 0:1]
    n = x.shape[1]
    k = 0
    while k + 4 <= n:
        r0, r1, r2, r3 = x[o, k, j0:j1], x[o, k + 1, j0:j1], x[o, k + 2, j0:j1], x[o, k + 3, j0:j1]
        for j in range(r0.size):
            cj = c[j] if mode == DEV else c[0]
            acc[j] += (wide(_term(r0[j], mode, cj)) + wide(_term(r1[j], mode, cj))) + (
                wide(_term(r2[j], mode, cj)) + wide(_term(r3[j], mode, cj)))
        k += 4
    for r in range(k, n):
        row = x[o, r, j0:j1]
        for j in range(row.size):
            acc[j] += _term(row[j], mode, c[j] if mode == DEV else c[0])
    out[o, j0:j1] = acc


@numba.njit(cache=True, nogil=True)
def sum_mid(x, out, t0, t1, mode, centers):
    """``out[o, j]`` = the sum of ``mode``'s terms over ``x[o, :, j]`` of a contiguous 3-D ``x``, for the
    (o, column block) tasks in [t0, t1)."""
    for t in range(t0, t1):
        o, j0, j1 = _columns(x, t)
        _sum_columns(x, out, mode, centers, o, j0, j1)


# ----------------------------------------------------------------------------- extremes
@numba.njit(inline="always")
def _better(v, best, largest):
    """Whether ``v`` replaces ``best``: strictly beyond it, or a NaN (the first NaN then stays)."""
    if best != best:
        return False
    if v != v:
        return True
    return v > best if largest else v < best


@numba.njit
def _arg_columns(x, vals, idx, largest, o, j0, j1):
    best = vals[o, j0:j1]
    at = idx[o, j0:j1]
    best[:] = x[o, 0, j0:j1]
    at[:] = 0
    for k in range(1, x.shape[1]):
        row = x[o, k, j0:j1]
        for j in range(row.size):
            if _better(row[j], best[j], largest):
                best[j] = row[j]
                at[j] = k


@numba.njit(cache=True, nogil=True)
def arg_mid(x, vals, idx, t0, t1, largest):
    """Over ``x[o, :, j]`` of a contiguous 3-D ``x`` (middle dim >= 1): the extreme and its first index, for the
    (o, column block) tasks in [t0, t1)."""
    for t in range(t0, t1):
        o, j0, j1 = _columns(x, t)
        _arg_columns(x, vals, idx, largest, o, j0, j1)


# ----------------------------------------------------------------------------- layouts
def _memory_order(a: np.ndarray):
    """``(perm, a.transpose(perm))`` with the dims in memory order (largest stride first), where that view is
    C-contiguous; None where ``a``'s elements are not one dense block."""
    perm = tuple(range(a.ndim))
    if not a.flags.c_contiguous:
        perm = tuple(sorted(perm, key=lambda d: (-a.strides[d], d)))
    b = a.transpose(perm)
    return (perm, b) if b.flags.c_contiguous else None


def dense_layout(a: np.ndarray, dims):
    """``a`` viewed as a contiguous ``(outer, n, inner)`` array with ``dims`` (a tuple, or None for all) in the
    middle, without copying, and the order of the kept dims in that view; None where no such view exists."""
    if a.ndim == 0:
        return None
    if dims is None and a.flags.c_contiguous:  # the whole of a dense array: the common case, without the search
        return a.reshape(1, a.size, 1), ()
    order = _memory_order(a)
    if order is None:
        return None
    perm, b = order
    red = range(a.ndim) if dims is None else dims
    pos = sorted(perm.index(d) for d in red)
    if pos != list(range(pos[0], pos[-1] + 1)):
        return None
    shape = b.shape
    outer = math.prod(shape[:pos[0]])
    n = math.prod(shape[pos[0]:pos[-1] + 1])
    kept = tuple(d for d in perm if d not in red)
    return b.reshape(outer, n, -1), kept


def restore_layout(r: np.ndarray, a: np.ndarray, kept, dims, keepdim: bool) -> np.ndarray:
    """A result computed in the layout's order, put back into ``a``'s dim order and reduced shape."""
    shape = tuple(a.shape[d] for d in kept)
    r = r.reshape(shape)
    if kept != tuple(sorted(kept)):
        r = np.ascontiguousarray(r.transpose(np.argsort(kept)))
    if keepdim:
        red = range(a.ndim) if dims is None else dims
        r = r.reshape(tuple(1 if d in red else a.shape[d] for d in range(a.ndim)))
    return r


# ----------------------------------------------------------------------------- reductions
def _mid_tasks(outer: int, inner: int) -> int:
    return outer * ((inner + INNER - 1) // INNER)


def _layout_sums(x: np.ndarray, mode: int, centers) -> np.ndarray:
    """Sums of ``mode``'s terms over the middle dim of a contiguous ``(outer, n, inner)`` ``x``, shaped
    ``(outer, inner)``; ``centers`` (float64, that shape) only for ``DEV``."""
    outer, n, inner = x.shape
    acc = np.int64 if x.dtype.kind in "iu" else np.float64
    narrow = x.dtype == np.float32 and mode != DEV
    if outer * inner == 1:
        parts = np.empty((n + BLOCK - 1) // BLOCK, acc)
        c = acc(0) if centers is None else centers.flat[0]  # an int64 zero keeps integer sums exact
        parts, = run_tasks(sum_blocks, parts.size, n, (x.reshape(-1),), (parts,), (mode, c, narrow))
        return (parts.sum() if parts.size > 1 else parts[:1]).reshape(1, 1)
    if inner == 1:
        r = np.empty(outer, acc)
        c = np.zeros(1, acc) if centers is None else centers.reshape(-1)
        # Rows shorter than a run add their terms straight into float64: a run's float32 lanes then cost more
        # than the conversions (576-value rows, a bias gradient's, in cache: 25 -> 16 us for 640 rows).
        r, = run_tasks(sum_rows, outer, x.size, (x.reshape(outer, n),), (r,), (mode, c, narrow and n >= NARROW))
        return r.reshape(outer, 1)
    r = np.empty((outer, inner), acc)
    c = np.zeros((1, 1), acc) if centers is None else centers
    r, = run_tasks(sum_mid, _mid_tasks(outer, inner), x.size, (x,), (r,), (mode, c))
    return r


def _reducible(a: np.ndarray, dims):
    lay = dense_layout(a, dims)
    if lay is None or not lay[0].shape[1] or not lay[0].size:
        return None
    return lay


def two_run_layout(a: np.ndarray, dims):
    """``a`` viewed as a contiguous ``(outer, n1, mid, n2, inner)`` array whose two runs of ``dims`` are ``n1``
    and ``n2`` (a convolution's bias gradient: ``(N, C, H, W)`` over ``(0, 2, 3)``), without copying, and the
    order of the kept dims in that view; None where ``dims`` do not form exactly two such runs."""
    if a.ndim < 3 or dims is None or not a.size:
        return None
    order = _memory_order(a)
    if order is None:
        return None
    perm, b = order
    pos = sorted(perm.index(d) for d in dims)
    breaks = [k for k in range(1, len(pos)) if pos[k] != pos[k - 1] + 1]
    if len(breaks) != 1:
        return None
    first, second = pos[:breaks[0]], pos[breaks[0]:]
    shape = b.shape
    sizes = (math.prod(shape[:first[0]]), math.prod(shape[first[0]:first[-1] + 1]),
             math.prod(shape[first[-1] + 1:second[0]]), math.prod(shape[second[0]:second[-1] + 1]),
             math.prod(shape[second[-1] + 1:]))
    return b.reshape(sizes), tuple(d for d in perm if d not in dims)


def _two_run_sums(x: np.ndarray, mode: int) -> np.ndarray:
    """Sums of ``mode``'s terms over dims 1 and 3 of a contiguous ``(outer, n1, mid, n2, inner)`` ``x``, shaped
    ``(outer, mid*inner)``: the inner run first, over the whole array, then the other over its partial sums
    (float64, or int64 for integers, as each stage accumulates)."""
    outer, n1, mid, n2, inner = x.shape
    if n2 * inner >= SHORT_RUN:
        partial = _layout_sums(x.reshape(outer * n1 * mid, n2, inner), mode, None)
        return _layout_sums(partial.reshape(outer, n1, mid * inner), SUM, None)
    # Short inner runs (an 8x8 plane): the outer run first, down long columns, then the short rows of sums.
    partial = _layout_sums(x.reshape(outer, n1, mid * n2 * inner), mode, None)
    return _layout_sums(partial.reshape(outer * mid, n2, inner), SUM, None)


def sum_terms(a: np.ndarray, dims, keepdim: bool, mode: int = SUM, scale: float = 1.0):
    """The sums of ``mode``'s terms over ``dims`` of ``a``, accumulated in float64 (int64 for integers), times
    ``scale`` and cast to ``a``'s dtype (to inf where they overflow it, as PyTorch's float32 sums do); None
    where ``a`` has no dense layout for them or nothing to reduce (then the caller's numpy path runs)."""
    lay = _reducible(a, dims)
    if lay is not None:
        x, kept = lay
        r = _layout_sums(x, mode, None)
    else:
        lay = two_run_layout(a, dims)
        if lay is None:
            return None
        x, kept = lay
        r = _two_run_sums(x, mode)
    with np.errstate(over="ignore"):
        r = (r if scale == 1.0 else r * scale).astype(a.dtype, copy=False)
    return restore_layout(r, a, kept, dims, keepdim)


def squared_deviations(a: np.ndarray, dims, keepdim: bool):
    """(sum of squared deviations from the mean, mean) over ``dims``, in float64: two passes, each output's
    mean first, so the variance keeps its precision where ``E[x^2] - E[x]^2`` would cancel; None as for
    :func:`sum_terms`."""
    lay = _reducible(a, dims)
    if lay is None:
        return None
    x, kept = lay
    mean = _layout_sums(x, SUM, None) / x.shape[1]
    dev = _layout_sums(x, DEV, mean)
    return restore_layout(dev, a, kept, dims, keepdim), restore_layout(mean, a, kept, dims, keepdim)


def _block_extremes(x, vals, idx, b0, b1, largest, size):
    """numpy's (SIMD) max or argmax of each block ``b`` in [b0, b1) of ``x``; ``idx`` None for values only."""
    for b in range(b0, b1):
        part = x[b * size:(b + 1) * size]
        if idx is None:
            vals[b] = part.max() if largest else part.min()
        else:
            i = int(part.argmax() if largest else part.argmin())
            vals[b], idx[b] = part[i], b * size + i


def _row_extremes(x, vals, idx, r0, r1, largest):
    """numpy's max or argmax along the rows [r0, r1) of a 2-D ``x``; ``idx`` None for values only, ``vals``
    None for indices only."""
    part = x[r0:r1]
    if idx is None:
        (np.max if largest else np.min)(part, axis=1, out=vals[r0:r1])
        return
    i = idx[r0:r1]
    (np.argmax if largest else np.argmin)(part, axis=1, out=i)
    if vals is not None:
        vals[r0:r1] = np.take_along_axis(part, i[:, None], 1)[:, 0]


def _first_extreme(vals, idx, largest: bool):
    """The winner among blocks' (value, index) pairs: the first NaN, else the earlier block on ties."""
    best = 0
    for b in range(1, vals.size):
        v, w = vals[b], vals[best]
        if w != w:
            break
        if v != v or (v > w if largest else v < w):
            best = b
    return vals[best], idx[best]


def extreme(a: np.ndarray, dim, keepdim: bool, largest: bool, indices: bool = True, values: bool = True):
    """(values or None, int64 indices or None) of the first largest (smallest) element, NaN winning, over all
    of ``a`` (``dim`` None: the flat index) or along ``dim``; None where ``a`` has no dense layout for it.

    Whole arrays and rows use numpy's vectorized max/argmax on blocks split over the threads (None when
    they would not split: then the caller's one numpy call is the cheapest); a middle dim uses the compiled
    column loop (numpy's argmax there copies the array).
    """
    dims = None if dim is None else (dim,)
    lay = _reducible(a, dims) if dim is not None or a.flags.c_contiguous else None
    if lay is None:
        return None
    x, kept = lay
    outer, n, inner = x.shape
    if inner == 1 and split_threads(x.size, max(outer, 2)) < 2:
        return None  # numpy's own single call, the vectorized loop the blocks would run
    if outer * inner == 1:
        nb = 4 * get_num_threads()
        size = -(-n // nb)
        vals, idx = np.empty(nb, a.dtype), np.empty(nb, np.int64) if indices else None
        vals, idx = run_tasks(_block_extremes, nb, n, (x.reshape(-1),), (vals, idx), (largest, size))
        if indices:
            v, i = _first_extreme(vals, idx, largest)
            vals, idx = np.asarray(v, a.dtype), np.asarray(i, np.int64)
        else:
            vals = np.asarray(vals.max() if largest else vals.min())
    elif inner == 1:
        vals = np.empty(outer, a.dtype) if values or not indices else None
        idx = np.empty(outer, np.int64) if indices else None
        vals, idx = run_tasks(_row_extremes, outer, x.size, (x.reshape(outer, n),), (vals, idx), (largest,))
    else:
        vals, idx = np.empty((outer, inner), a.dtype), np.empty((outer, inner), np.int64)
        vals, idx = run_tasks(arg_mid, _mid_tasks(outer, inner), x.size, (x,), (vals, idx), (largest,))
    vals = restore_layout(vals, a, kept, dims, keepdim) if values else None
    return vals, restore_layout(idx, a, kept, dims, keepdim) if indices else None
