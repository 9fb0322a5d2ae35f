"""Map kernels: ``out[i] = formula(inputs[i]..., params...)`` over broadcast inputs, compiled by numba.

A ``MapKernel`` is cheap to create: it generates its source (see
:mod:`.codegen`) and only imports numba and compiles on its first call, once
per input dtype; the machine code is cached on disk (see :mod:`.cache`), so a
later process loads it instead of compiling. Large inputs are shared out over
the cores by :mod:`.split` (never ``prange``, whose pool waits for every worker
and loses to the serial loop beside busy processes), small ones run the loop at
once. A formula that calls functions (``math.erf``) counts as ``CALL_WORK``
elements of a sum per element, so it splits from smaller sizes than ``x < 0``.

Example::

    >>> k = map_kernel("self / (1.0 + math.exp(-self))", inputs=("self",))
    >>> k(np.linspace(-1, 1, 5))                       # doctest: +SKIP
    array([-0.26894142, -0.18877033,  0.        ,  0.31122967,  0.73105858])
"""

from __future__ import annotations

import ast
import threading

import numpy as np

from .cache import load_source
from .codegen import map_source, specialize
from .split import PARALLEL_MIN, run_slices

# Work of one element of a formula with function calls, in elements of a float32 sum: erf splits from 64k
# elements, where a split beat the serial loop (1.5-1.8x at 64k-256k elements on 2 cores).
CALL_WORK = PARALLEL_MIN >> 16
_HALF = np.dtype(np.float16)  # computed in float32, so never on the short paths
_BOOL = np.dtype(np.bool_)


class MapKernel:
    """One formula's loop, split over the cores for large inputs; call it with inputs (arrays or numbers) then params."""

    __slots__ = ("expr", "inputs", "params", "source", "work", "_module", "_lock")

    def __init__(self, expr: str, inputs: tuple, params: tuple = ()):
        self.expr = expr
        self.inputs = tuple(inputs)
        self.params = tuple(params)
        self.source = map_source(expr, self.inputs, self.params)
        calls = any(isinstance(n, ast.Call) for n in ast.walk(ast.parse(expr, mode="eval")))
        self.work = CALL_WORK if calls else 1
        self._module = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MapKernel({self.expr!r}, inputs={self.inputs}, params={self.params})"

    @property
    def module(self):
        """The generated module (written and imported on first use; imports numba)."""
        if self._module is None:
            with self._lock:
                if self._module is None:
                    self._module = load_source(self.source, "map")
        return self._module

    def __call__(self, *values, dtype=None) -> np.ndarray:
        """Broadcast the inputs, compute in ``dtype`` (their result type by default) and return a new array.

        float16 is computed in float32 and rounded once at the end, as PyTorch
        computes half-precision math.
        """
        n_in = len(self.inputs)
        if n_in == 1 and dtype is None and type(values[0]) is np.ndarray and len(values) == 1 + len(self.params):
            a = values[0]  # one array as it is, the common call: no broadcast, cast or copy to prepare
            if a.dtype != _HALF and a.dtype.isnative and a.flags.c_contiguous and a.size * self.work < PARALLEL_MIN:
                out = np.empty(a.shape, a.dtype)
                if a.size:
                    self.module.serial(out.reshape(-1), a.reshape(-1), *values[1:])
                return out
        if len(values) != n_in + len(self.params):
            raise TypeError(f"{self!r} takes {n_in + len(self.params)} values, got {len(values)}")
        if n_in > 1 and dtype is None:
            out = self._same_layout(values, n_in)
            if out is not None:
                return out
        arrays = [np.asarray(v) for v in values[:n_in]]
        params = values[n_in:]
        dtype = np.result_type(*arrays) if dtype is None else np.dtype(dtype)
        compute = np.dtype(np.float32) if dtype == np.float16 else dtype
        if n_in > 1:
            arrays = np.broadcast_arrays(*arrays)
        shape = arrays[0].shape
        flat = [np.ascontiguousarray(a, dtype=compute).reshape(-1) for a in arrays]
        out = np.empty(flat[0].size, dtype=compute)
        if out.size * self.work >= PARALLEL_MIN:
            loop, n_in = self.module.serial, len(flat)

            def rows(*a):  # split passes (inputs, out, params), the loop takes (out, inputs, params)
                loop(a[n_in], *a[:n_in], *a[n_in + 1:])

            out, = run_slices(rows, out.size, out.size * self.work, tuple(flat), (out,), tuple(params))
        elif out.size:
            self.module.serial(out, *flat, *params)
        out = out.reshape(shape)
        return out.astype(dtype) if compute != dtype else out

    def _same_layout(self, values: tuple, n_in: int):
        """The loop on input arrays as they are, where they need no preparing: one shape, C-contiguous, native
        byte order, all of one dtype besides bool ones (a condition: bool promotes to any dtype, so the result
        has that dtype and a converted condition would read the same); None where they do, or where the loop
        splits over the cores. (The one-array call keeps its own shorter test in ``__call__``: through this
        loop relu's kernel on 6400 values took 1.98 us instead of 1.56.)"""
        first, dt = values[0], None
        shape = first.shape if type(first) is np.ndarray else None
        for a in values[:n_in]:
            if type(a) is not np.ndarray or a.shape != shape or not a.flags.c_contiguous or not a.dtype.isnative:
                return None
            if a.dtype is not _BOOL:
                if dt is None:
                    dt = a.dtype
                elif a.dtype != dt:
                    return None
        if dt is None or dt is _HALF or first.size * self.work >= PARALLEL_MIN:
            return None
        out = np.empty(shape, dt)
        if out.size:
            self.module.serial(out.reshape(-1), *[a.reshape(-1) for a in values[:n_in]], *values[n_in:])
        return out


_kernels: dict = {}


def map_kernel(expr: str, inputs: tuple, params: tuple = (), constants: dict | None = None) -> MapKernel:
    """The (memoized) map kernel of ``expr`` with ``constants`` substituted into it.

    ``inputs`` name the array operands, ``params`` the run-time scalars, in the
    order the kernel is called with.
    """
    key = (expr, tuple(inputs), tuple(params), tuple(sorted((constants or {}).items())))
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = MapKernel(specialize(expr, constants), inputs, params)
    return k
