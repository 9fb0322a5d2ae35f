"""CUDA kernels for every elementwise op with a registry formula, made by one generator.

The dispatcher hands an elementwise kernel its tensor arguments already cast
to the compute dtype (CudaArrays, or Python numbers for scalar operands) and
the other arguments as Python values. Here numeric arguments become kernel
parameters of the compute dtype (as eager CPU kernels and PyTorch convert a
Scalar first), strings and None are substituted into the formula, and the
output dtype is the one the op's CPU kernel gives for the same dtypes (asked
once per dtype signature on one-element host arrays, which also raises the
CPU kernel's errors, e.g. bitwise ops on floats).
"""

from __future__ import annotations

import numpy as np

from ...ops import registry as R
from .array import CudaArray
from .codegen import run_map, typed_scalar

_probe_cache: dict = {}


def _probe_dtype(op, args: list) -> np.dtype:
    key = [op]
    for v in args:
        key.append(v.dtype if isinstance(v, CudaArray) else (type(v), v if isinstance(v, (str, bool)) else None))
    key = tuple(key)
    dt = _probe_cache.get(key)
    if dt is None:
        host = [np.ones((1,), v.dtype) if isinstance(v, CudaArray) else v for v in args]
        with np.errstate(all="ignore"):
            r = op.kernels["cpu"](*host)
        dt = _probe_cache[key] = np.asarray(r).dtype
    return dt


COMPLEX_REFUSAL = "complex dtypes are not implemented on CUDA yet"


def _check_dtypes(op, arrays) -> None:
    for a in arrays:
        if a.dtype == np.float16:
            raise NotImplementedError(f"{op.name}: float16 is not implemented on CUDA")
        if a.dtype.kind == "c":  # the generated kernels compute in real arithmetic: refuse rather than drop parts
            raise NotImplementedError(f"{op.name}: {COMPLEX_REFUSAL}")


def make_kernel(op):
    """The CUDA kernel of elementwise ``op``: its formula over strided, broadcast operands."""
    tensor_idx = set(op.tensor_args)
    names = op.arg_names
    types = [a.type for a in op.args]

    def kernel(*args):
        arrays = [a for a in args if isinstance(a, CudaArray)]
        _check_dtypes(op, arrays)
        compute = np.result_type(*[a.dtype for a in arrays])
        out_dtype = _probe_dtype(op, list(args))
        if out_dtype.kind == "c":  # complex, polar: a complex result from real operands
            raise NotImplementedError(f"{op.name}: {COMPLEX_REFUSAL}")
        inputs, params, constants = {}, {}, {}
        for i, v in enumerate(args):
            name = names[i]
            if isinstance(v, CudaArray):
                inputs[name] = v
            elif v is None or isinstance(v, str):
                constants[name] = v
            elif isinstance(v, (bool, np.bool_)) and i not in tensor_idx:
                constants[name] = bool(v)
            elif i in tensor_idx or types[i].startswith("Scalar"):
                params[name] = typed_scalar(v, compute)
            else:
                params[name] = typed_scalar(v, np.dtype(np.float64 if isinstance(v, float) else np.int64))
        shape = np.broadcast_shapes(*[a.shape for a in arrays])
        out = CudaArray.empty(shape, out_dtype)
        return run_map(op.formula, out, inputs, params, constants)

    kernel.__name__ = f"{op.name}_cuda"
    kernel.__doc__ = f"CUDA kernel of {op.name}, generated from its formula ``{op.formula}``."
    return kernel


def register() -> list:
    """Give every non-inplace elementwise op with a formula a CUDA kernel; returns the ops covered."""
    done = []
    for op in R.all_ops():
        if (op.kind in (R.ELEMENTWISE, R.COMPARISON) and op.formula and op.n_outputs == 1
                and op.composite is None and "cpu" in op.kernels and "cuda" not in op.kernels):
            op.kernel("cuda")(make_kernel(op))
            done.append(op)
    return done
