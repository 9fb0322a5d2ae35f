"""3-d, adaptive and fractional pooling on the device, their backward ops, and max unpooling.

Every forward kernel is one thread per output element over contiguous
``(planes, D, H, W)`` data (2-d inputs are volumes of depth one), with flat
indices within each plane, as the CPU's compiled passes give them:

- fixed windows (``max_pool3d``, ``avg_pool3d``) from stride, padding and
  dilation; max pooling keeps the first largest value and lets NaN win, as the
  CPU; the average's divisor per output position is the CPU op's own table
  (it depends on shapes only), so padding and ``divisor_override`` divide alike;
- windows from start/end tables (adaptive and fractional pooling): adaptive
  tables come from the shapes (the same for every plane); fractional ones are
  computed on the device from the random samples, in the samples' own dtype,
  as PyTorch's ``generate_intervals``.

The backward ops scatter each output gradient into the input positions it came
from with ``cuda.atomic.add`` (float32 and float64), and ``max_unpool`` writes
each value at its recorded index (bounds-checked first, as the CPU op).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import cuda  # imported when CUDA is first used (register_kernels), never by import toolkit

from ..._core import dtypes as _dt
from ...ops import registry as R
from ...ops.fractional_pool import fractional_check
from ...ops.pooling_3d import avg_pool3d_setup, pool3d_shape
from ...ops.pooling_adaptive import _require_float, adaptive_windows
from ...ops.unpool import unpool_check
from . import runtime
from .array import CudaArray, contiguous, copy_strided, full
from .codegen import run_map, typed_scalar
from .masked import checked_index
from .registration import meta_of, register_table
from .scatter import write_rows


@cuda.jit(device=True)
def _volume_of(i, od, oh, ow):
    """(plane, z, y, x) of flat output element ``i``."""
    ox = i % ow
    r = i // ow
    oy = r % oh
    r //= oh
    return r // od, r % od, oy, ox


@functools.cache
def _k():

    @cuda.jit
    def fixed_max(x, out, idx, total, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            p, oz, oy, ox = _volume_of(i, od, oh, ow)
            base = p * d * h * w
            best = x[base]
            bi = -1
            for a in range(kd):
                z = oz * sd - pd + a * dd
                if z < 0 or z >= d:
                    continue
                for b in range(kh):
                    y = oy * sh - ph + b * dh
                    if y < 0 or y >= h:
                        continue
                    for c in range(kw):
                        xx = ox * sw - pw + c * dw
                        if xx < 0 or xx >= w:
                            continue
                        v = x[base + (z * h + y) * w + xx]
                        if bi < 0 or v > best or v != v:
                            best = v
                            bi = (z * h + y) * w + xx
            out[i] = best
            idx[i] = bi

    @cuda.jit
    def table_max(x, out, idx, total, d, h, w, od, oh, ow, zs, ze, ys, ye, xs, xe, per_plane):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            p, oz, oy, ox = _volume_of(i, od, oh, ow)
            q = p if per_plane else 0
            z0, y0, x0 = zs[q * od + oz], ys[q * oh + oy], xs[q * ow + ox]
            base = p * d * h * w
            best = x[base + (z0 * h + y0) * w + x0]
            bi = (z0 * h + y0) * w + x0
            for z in range(z0, ze[q * od + oz]):
                for y in range(y0, ye[q * oh + oy]):
                    for xx in range(x0, xe[q * ow + ox]):
                        v = x[base + (z * h + y) * w + xx]
                        if v > best or v != v:
                            best = v
                            bi = (z * h + y) * w + xx
            out[i] = best
            idx[i] = bi

    @cuda.jit
    def scatter_planes(g, idx, out, total, per_plane, plane):
        """``out[plane p][idx[i]] += g[i]`` for the ``per_plane`` gradients of each plane."""
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            cuda.atomic.add(out, (i // per_plane) * plane + idx[i], g[i])

    @cuda.jit
    def fixed_avg(x, out, div, total, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, zero, is_float):
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            p, oz, oy, ox = _volume_of(i, od, oh, ow)
            base = p * d * h * w
            acc = zero
            for z in range(max(oz * sd - pd, 0), min(oz * sd - pd + kd, d)):
                for y in range(max(oy * sh - ph, 0), min(oy * sh - ph + kh, h)):
                    for xx in range(max(ox * sw - pw, 0), min(ox * sw - pw + kw, w)):
                        acc += x[base + (z * h + y) * w + xx]
            q = div[i % (od * oh * ow)]
            if is_float:
                out[i] = acc / q
            else:
                out[i] = int(acc / q)

    @cuda.jit
    def fixed_avg_bwd(g, out, total, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw):
        """``g`` is already divided by each window's divisor."""
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            p, oz, oy, ox = _volume_of(i, od, oh, ow)
            base = p * d * h * w
            v = g[i]
            for z in range(max(oz * sd - pd, 0), min(oz * sd - pd + kd, d)):
                for y in range(max(oy * sh - ph, 0), min(oy * sh - ph + kh, h)):
                    for xx in range(max(ox * sw - pw, 0), min(ox * sw - pw + kw, w)):
                        cuda.atomic.add(out, base + (z * h + y) * w + xx, v)

    @cuda.jit
    def table_avg(x, out, total, d, h, w, od, oh, ow, zs, ze, ys, ye, xs, xe, zero, backward):
        """Forward: the window means of ``x`` into ``out``; backward: ``x`` (the output gradient) spread evenly
        over each window of ``out``."""
        for i in range(cuda.grid(1), total, cuda.gridsize(1)):
            p, oz, oy, ox = _volume_of(i, od, oh, ow)
            base = p * d * h * w
            count = (ze[oz] - zs[oz]) * (ye[oy] - ys[oy]) * (xe[ox] - xs[ox])
            acc = zero
            share = x[i] / count if backward else zero
            for z in range(zs[oz], ze[oz]):
                for y in range(ys[oy], ye[oy]):
                    for xx in range(xs[ox], xe[ox]):
                        if backward:
                            cuda.atomic.add(out, base + (z * h + y) * w + xx, share)
                        else:
                            acc += x[base + (z * h + y) * w + xx]
            if not backward:
                out[i] = acc / count

    @cuda.jit
    def fractional_starts(samples, col, nd, starts, ends, planes, n, size, pool, alpha, steps):
        for t in range(cuda.grid(1), planes * n, cuda.gridsize(1)):
            p = t // n
            i = t % n
            if i == n - 1:
                s0 = size - pool
            else:
                s = samples[p * nd + col]
                s0 = int((steps[i] + s) * alpha) - int(s * alpha)
            starts[t] = s0
            ends[t] = s0 + pool

    return dict(fixed_max=fixed_max, table_max=table_max, scatter_planes=scatter_planes, fixed_avg=fixed_avg,
                fixed_avg_bwd=fixed_avg_bwd, table_avg=table_avg, fractional_starts=fractional_starts)


def _volumes(x: CudaArray, nd: int, dtype=None) -> tuple:
    """``x`` contiguous (cast to ``dtype``), its number of planes and (D, H, W) (2-d: depth one)."""
    sp = (1,) * (3 - nd) + tuple(x.shape[-nd:])
    planes = math.prod(x.shape[:-nd])
    return contiguous(x, dtype), planes, sp


def _work_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype == np.float16 else dtype


# ----------------------------------------------------------------------------- max pooling
def _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    k, s, p, dl, out = pool3d_shape("max_pool3d", self.shape, kernel_size, stride, padding, dilation, ceil_mode)
    x, planes, sp = _volumes(self, 3, _work_dtype(self.dtype))
    shape = self.shape[:-3] + out
    vals = CudaArray.empty(shape, x.dtype)
    idx = CudaArray.empty(shape, np.int64)
    total = vals.size
    runtime.launch(_k()["fixed_max"], total, x.flat_device(), vals.buf, idx.buf, total, *sp, *out, *k, *s, *p, *dl)
    return (vals if vals.dtype == self.dtype else vals.astype(self.dtype)), idx


def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    meta_of(R.get("max_pool3d_with_indices"), [self, kernel_size, stride, padding, dilation, ceil_mode])
    return _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    meta_of(R.get("max_pool3d"), [self, kernel_size, stride, padding, dilation, ceil_mode])
    return _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _scatter_to_planes(grad_output: CudaArray, indices: CudaArray, shape: tuple, nd: int, dtype) -> CudaArray:
    """Zeros of ``shape`` with ``grad_output`` added at the flat ``indices`` within each ``nd``-d plane."""
    work = np.dtype(np.float64) if np.dtype(dtype) == np.float64 else np.dtype(np.float32)
    out = full(shape, 0, work)
    plane = math.prod(shape[-nd:])
    per_plane = math.prod(grad_output.shape[-nd:])
    g = contiguous(grad_output, work)
    idx = contiguous(indices, np.int64)
    total = g.size
    if total and plane:
        runtime.launch(_k()["scatter_planes"], total, g.flat_device(), idx.flat_device(), out.buf, total,
                       per_plane, plane)
    return out if out.dtype == np.dtype(dtype) else out.astype(dtype)


def max_pool3d_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    meta_of(R.get("max_pool3d_with_indices_backward"), [grad_output, self, kernel_size, stride, padding, dilation,
                                                         ceil_mode, indices])
    return _scatter_to_planes(grad_output, indices, self.shape, 3, self.dtype)


# ----------------------------------------------------------------------------- avg_pool3d
def avg_pool3d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    meta_of(R.get("avg_pool3d"), [self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override])
    k, s, p, out, div = avg_pool3d_setup(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    is_float = self.dtype.kind == "f"
    acc = _work_dtype(self.dtype) if is_float else np.dtype(np.int64)
    x, planes, sp = _volumes(self, 3, acc)
    vals = CudaArray.empty(self.shape[:-3] + out, self.dtype)
    total = vals.size
    if total:
        runtime.launch(_k()["fixed_avg"], total, x.flat_device(), vals.buf, CudaArray.from_host(div).flat_device(), total,
                       *sp, *out, *k, *s, *p, typed_scalar(0, acc), is_float)
    return vals


def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    meta_of(R.get("avg_pool3d_backward"), [grad_output, self, kernel_size, stride, padding, ceil_mode,
                                           count_include_pad, divisor_override])
    k, s, p, out, div = avg_pool3d_setup(self.shape, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                         divisor_override)
    work = np.dtype(np.float64) if self.dtype == np.float64 else np.dtype(np.float32)
    g = copy_strided(grad_output, self.dtype)
    g = run_map("g / q", CudaArray.empty(g.shape, work), {"g": g, "q": CudaArray.from_host(div.astype(work))}, {})
    result = full(self.shape, 0, work)
    _, planes, sp = _volumes(self, 3)
    total = g.size
    if total:
        runtime.launch(_k()["fixed_avg_bwd"], total, g.buf, result.buf, total, *sp, *out, *k, *s, *p)
    return result if result.dtype == self.dtype else result.astype(self.dtype)


# ----------------------------------------------------------------------------- adaptive pooling
def _adaptive_tables(sp: tuple, out: tuple) -> list:
    """Device (start, end) tables of each of the three dims, the same for every plane (numba arrays, which keep
    their buffers alive until the kernel has read them)."""
    tables = []
    for size, o in zip(sp, out):
        start, end = adaptive_windows(size, o)
        tables += [CudaArray.from_host(start).flat_device(), CudaArray.from_host(end).flat_device()]
    return tables


def adaptive_avg_pool3d(self, output_size):
    meta = meta_of(R.get("adaptive_avg_pool3d"), [self, output_size])
    out = tuple(meta.shape[-3:])
    work = _work_dtype(self.dtype)
    x, planes, sp = _volumes(self, 3, work)
    vals = CudaArray.empty(self.shape[:-3] + out, work)
    total = vals.size
    if total:
        runtime.launch(_k()["table_avg"], total, x.flat_device(), vals.buf, total, *sp, *out,
                       *_adaptive_tables(sp, out), typed_scalar(0, work), False)
    return vals if vals.dtype == self.dtype else vals.astype(self.dtype)


def adaptive_avg_pool3d_backward(grad_output, self):
    meta_of(R.get("_adaptive_avg_pool3d_backward"), [grad_output, self])
    work = np.dtype(np.float64) if self.dtype == np.float64 else np.dtype(np.float32)
    out = tuple(grad_output.shape[-3:])
    g = contiguous(grad_output, work)
    _, planes, sp = _volumes(self, 3)
    result = full(self.shape, 0, work)
    total = g.size
    if total:
        runtime.launch(_k()["table_avg"], total, g.flat_device(), result.buf, total, *sp, *out,
                       *_adaptive_tables(sp, out), typed_scalar(0, work), True)
    return result if result.dtype == self.dtype else result.astype(self.dtype)


def _table_max(self, nd: int, out: tuple, tables: list, per_plane: bool) -> tuple:
    x, planes, sp = _volumes(self, nd, _work_dtype(self.dtype))
    full_out = (1,) * (3 - nd) + tuple(out)
    shape = self.shape[:-nd] + tuple(out)
    vals = CudaArray.empty(shape, x.dtype)
    idx = CudaArray.empty(shape, np.int64)
    total = vals.size
    if total:
        runtime.launch(_k()["table_max"], total, x.flat_device(), vals.buf, idx.buf, total, *sp, *full_out, *tables,
                       per_plane)
    return (vals if vals.dtype == self.dtype else vals.astype(self.dtype)), idx


def _adaptive_max(name: str, nd: int):
    def kernel(self, output_size):
        meta, _ = meta_of(R.get(name), [self, output_size])
        _require_float(name, self.dtype)
        out = tuple(meta.shape[-nd:])
        sp = (1,) * (3 - nd) + tuple(self.shape[-nd:])
        return _table_max(self, nd, out, _adaptive_tables(sp, (1,) * (3 - nd) + out), False)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _planes_backward(name: str, nd: int):
    def kernel(grad_output, self, *args):
        meta_of(R.get(name), [grad_output, self, *args])
        return _scatter_to_planes(grad_output, args[-1], self.shape, nd, self.dtype)

    kernel.__name__ = f"{name}_cuda"
    return kernel


# ----------------------------------------------------------------------------- fractional max pooling
def _fractional(name: str, nd: int):
    def kernel(self, kernel_size, output_size, random_samples):
        meta_of(R.get(name), [self, kernel_size, output_size, random_samples])
        k, out = fractional_check(nd, self.shape, kernel_size, output_size, random_samples.shape, self.dtype,
                                  random_samples.dtype)
        if self.dtype.kind != "f":
            raise NotImplementedError(f"\"fractional_max_pool{nd}d_out_frame\" not implemented for "
                                      f"'{_title(self.dtype)}'")
        planes = math.prod(self.shape[:-nd])
        samples = copy_strided(random_samples)
        dt = samples.dtype.type
        order = (1, 0) if nd == 2 else (0, 1, 2)  # 2-d samples are (width, height)
        tables = [] if nd == 3 else [full((planes,), 0, np.int64).flat_device(), full((planes,), 1, np.int64).flat_device()]
        for axis, col in enumerate(order):
            size, n, pool = self.shape[self.ndim - nd + axis], out[axis], k[axis]
            starts = CudaArray.empty((planes, n), np.int64)
            ends = CudaArray.empty((planes, n), np.int64)
            alpha = dt(size - pool) / dt(n - 1) if n > 1 else dt(0)
            steps = CudaArray.from_host(np.arange(max(n, 1), dtype=samples.dtype))
            runtime.launch(_k()["fractional_starts"], planes * n, samples.flat_device(), col, nd, starts.buf, ends.buf,
                           planes, n, size, pool, alpha, steps.buf)
            tables += [starts.flat_device(), ends.flat_device()]
        return _table_max(self, nd, out, tables, True)

    kernel.__name__ = f"{name}_cuda"
    return kernel


def _title(dtype) -> str:
    return _dt.title(_dt.from_numpy_dtype(dtype))


# ----------------------------------------------------------------------------- max_unpool
def _unpool(name: str, nd: int):
    def kernel(self, indices, output_size, *rest):
        meta_of(R.get(name), [self, indices, output_size, *rest])
        out = unpool_check(nd, self.shape, indices.shape, indices.dtype, output_size, *rest)
        if self.dtype.kind != "f":
            raise NotImplementedError(f"\"max_unpool{nd}d\" not implemented for '{_title(self.dtype)}'")
        plane = math.prod(out)
        per = math.prod(self.shape[-nd:])
        rows = math.prod(self.shape[:-nd])
        idx, bad = checked_index(indices.reshape((-1,)), plane, allow_negative=False)
        if bad is not None:
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(map(str, out))})")
        result = full((rows * plane,), 0, self.dtype)
        if idx.size:
            base = CudaArray.from_host(np.repeat(np.arange(rows, dtype=np.int64) * plane, per))
            pos = run_map("i + b", CudaArray.empty((idx.size,), np.int64), {"i": idx, "b": base}, {})
            write_rows(result, pos, copy_strided(self).reshape((-1,)), "set")
        return result.reshape(self.shape[:-nd] + tuple(out))

    kernel.__name__ = f"{name}_cuda"
    return kernel


def register() -> list:
    return register_table({
        "max_pool3d_with_indices": max_pool3d_with_indices, "max_pool3d": max_pool3d,
        "max_pool3d_with_indices_backward": max_pool3d_backward, "avg_pool3d": avg_pool3d,
        "avg_pool3d_backward": avg_pool3d_backward, "adaptive_avg_pool3d": adaptive_avg_pool3d,
        "_adaptive_avg_pool3d_backward": adaptive_avg_pool3d_backward,
        "adaptive_max_pool2d": _adaptive_max("adaptive_max_pool2d", 2),
        "adaptive_max_pool3d": _adaptive_max("adaptive_max_pool3d", 3),
        "adaptive_max_pool2d_backward": _planes_backward("adaptive_max_pool2d_backward", 2),
        "adaptive_max_pool3d_backward": _planes_backward("adaptive_max_pool3d_backward", 3),
        "fractional_max_pool2d": _fractional("fractional_max_pool2d", 2),
        "fractional_max_pool3d": _fractional("fractional_max_pool3d", 3),
        "fractional_max_pool2d_backward": _planes_backward("fractional_max_pool2d_backward", 2),
        "fractional_max_pool3d_backward": _planes_backward("fractional_max_pool3d_backward", 3),
        "max_unpool2d": _unpool("max_unpool2d", 2), "max_unpool3d": _unpool("max_unpool3d", 3),
    })
