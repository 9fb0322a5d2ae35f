"""Source generation for CUDA map kernels: a registry formula becomes a grid-stride numba.cuda kernel.

The same formula text the CPU map kernels and the JIT's fused kernels compile
(see :mod:`toolkit.backends.cpu.codegen`) is inlined into a loop over the
output's elements; every operand is read through its own element offset and
strides (zero strides for broadcast dimensions), and the output is written
through its strides too, so one kernel serves contiguous, transposed, sliced
and broadcast operands. A kernel is specialized per rank only; helpers
(``rint``, ``erfinv``, ...) are copied in as device functions.

Example::

    >>> print(map_source("self * alpha", inputs=("self",), params=("alpha",), rank=2))  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import textwrap
import threading
from typing import TYPE_CHECKING

import numpy as np

from ..cpu.cache import load_source
from ..cpu.codegen import (
    FormulaError,
    check_formula,
    free_names,
    helper_constants,
    helpers_needed,
    specialize,
)
from ..cpu.scalar import HELPERS
from . import runtime

if TYPE_CHECKING:  # array.py imports this module: CudaArray's copies and casts are map kernels
    from .array import CudaArray

_HEADER = '"""A toolkit CUDA map kernel, generated from a scalar formula; do not edit.\n\nformula: {expr}\n"""\n\n' \
          "import math\n\nimport numpy as np\nfrom numba import cuda\n\n\n"


def index_lines(rank: int, operands: list, pad: str = "        ") -> list:
    """Lines turning the flat index ``_k_i`` into each operand's buffer position ``_k_p_<name>``."""
    lines = [f"{pad}_k_r = _k_i"]
    for d in reversed(range(rank)):
        if d == 0:
            lines.append(f"{pad}_k_i0 = _k_r")
        else:
            lines.append(f"{pad}_k_i{d} = _k_r % _k_sh[{d}]")
            lines.append(f"{pad}_k_r = _k_r // _k_sh[{d}]")
    for name in operands:
        terms = [f"o_{name}"] + [f"_k_i{d} * st_{name}[{d}]" for d in range(rank)]
        lines.append(f"{pad}_k_p_{name} = {' + '.join(terms)}")
    return lines


def helper_source(names: set) -> str:
    """Device-function copies of the scalar helpers an expression calls, and the constants they read."""
    helpers = []
    for h in helpers_needed(names):
        src = textwrap.dedent(inspect.getsource(HELPERS[h]))
        helpers.append(f"@cuda.jit(device=True)\n{src.rstrip()}\n")
    consts = "".join(f"{k} = {v!r}\n" for k, v in helper_constants(helpers).items())
    return ((consts + "\n\n") if consts else "") + "\n\n".join(helpers) + ("\n\n" if helpers else "")


def map_source(expr: str, inputs: tuple, params: tuple, rank: int) -> str:
    """A module with ``kernel(out, o_out, st_out, _k_n, _k_sh, in_<x>, o_<x>, st_<x>, ..., *params)``."""
    try:
        check_formula(expr, inputs, params)
    except FormulaError:
        if free_names(expr) - set(inputs) - set(params) - {"bool", "math", "min", "max", "abs", "float", "int"} \
                - set(HELPERS):
            raise
    sig = ["out", "o_out", "st_out", "_k_n", "_k_sh"]
    for a in inputs:
        sig += [f"in_{a}", f"o_{a}", f"st_{a}"]
    sig += list(params)
    body = ["    _k_i = cuda.grid(1)", "    _k_step = cuda.gridsize(1)", "    while _k_i < _k_n:"]
    body += index_lines(rank, ["out", *inputs])
    body += [f"        {a} = in_{a}[_k_p_{a}]" for a in inputs]
    body += [f"        out[_k_p_out] = {expr}", "        _k_i += _k_step"]
    src = _HEADER.format(expr=expr) + helper_source(free_names(expr))
    return src + "@cuda.jit\ndef kernel(" + ", ".join(sig) + "):\n" + "\n".join(body) + "\n"


_modules: dict = {}
_lock = threading.Lock()


def map_module(expr: str, inputs: tuple, params: tuple, rank: int):
    key = (expr, inputs, params, rank)
    m = _modules.get(key)
    if m is None:
        with _lock:
            m = _modules.get(key)
            if m is None:
                m = _modules[key] = load_source(map_source(expr, inputs, params, rank), "cuda_map")
    return m


def broadcast_estrides(a: CudaArray, shape: tuple) -> tuple:
    """``a``'s element strides seen from ``shape`` (0 where ``a`` is broadcast)."""
    lead = len(shape) - a.ndim
    st = a.estrides
    return (0,) * lead + tuple(0 if n != m else s for n, m, s in zip(a.shape, shape[lead:], st))


def run_map(expr: str, out: CudaArray, inputs: dict, params: dict, constants: dict | None = None) -> CudaArray:
    """``out[...] = expr`` over ``out``'s elements; ``inputs`` name CudaArrays broadcastable to ``out``."""
    if constants:
        expr = specialize(expr, constants)
    names = tuple(inputs)
    pnames = tuple(params)
    shape = out.shape
    n = out.size
    if n == 0:
        return out
    rank = len(shape)
    m = map_module(expr, names, pnames, rank)
    args = [out.buf, out.offset, out.estrides, n, shape]
    for a in names:
        v = inputs[a]
        args += [v.buf, v.offset, broadcast_estrides(v, shape)]
    args += [params[p] for p in pnames]
    blocks, threads = runtime.launch_1d(n)
    m.kernel[blocks, threads](*args)
    return out


def typed_scalar(v, dtype: np.dtype):
    """A Python number as a numpy scalar of ``dtype`` (integers wrap as in PyTorch's integer arithmetic)."""
    if dtype == np.bool_:
        return np.bool_(bool(v))
    if dtype.kind == "f":
        return dtype.type(float(v))
    if isinstance(v, float):
        return dtype.type(int(v))
    return np.array(int(v)).astype(dtype)[()]
