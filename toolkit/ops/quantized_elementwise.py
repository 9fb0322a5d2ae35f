"""Elementwise ops on quantized tensors, as PyTorch's x86/fbgemm CPU kernels compute them: ``quantized::add``,
``add_relu``, ``mul``, ``mul_relu``, their ``_scalar`` forms, ``matmul``, ``cat``, ``cat_relu`` and ``relu6`` (what ``QFunctional`` and the quantized
modules call), and the ``"quantized_cpu"`` kernels of ``relu``/``relu_``, ``hardtanh`` and ``relu6``::

    from toolkit.ops import registry as R
    qc = R.get("quantized::add")(qa, qb, 0.1, 128)    # (a + b) requantized to scale 0.1, zero point 128
    toolkit.relu(qa)                                  # the integers clamped below at qa's zero point

``add`` dequantizes both inputs (``fma(scale, q, -zero_point * scale)`` in float32, PyTorch's vectorized form),
adds, and quantizes with the output's reciprocal scale; ``mul`` multiplies the integers less their zero points
and requantizes the int32 products with ``a_scale * b_scale / scale``. Clamps and ReLUs work on the integers, with
the bounds quantized with the tensor's own parameters.
"""

from __future__ import annotations

import numpy as np

from .._core import qscheme as _qs
from .._core.shape import broadcast_shapes
from . import registry as R
from .quantized import QUANTIZED_KIND, RANGES, dequantize_per_tensor, quantize_array
from .registry import NN, op
from .shape import cat_shape
from .sparse_coo import backend_refusal

_OPTIONS = {"kind": NN, "composite": True, "differentiable": False, "method": False, "function": False}


def make_like(q, ints: np.ndarray, scale: float | None = None, zero_point: int | None = None):
    """A per-tensor quantized tensor of ``q``'s dtype over ``ints``, with ``q``'s parameters unless given."""
    return QUANTIZED_KIND["make"](ints, q.dtype, "per_tensor_affine", float(q._scale if scale is None else scale),
                                  int(q._zero_point if zero_point is None else zero_point), None)


def per_tensor(q, fn: str) -> None:
    """Refuse a per-channel quantized tensor where the op takes one scale and zero point."""
    if q._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError(f"{fn}: only per-tensor quantized tensors are supported, got {q._qscheme!r}")


def quantize_value(q, value: float) -> int:
    """``value`` quantized with ``q``'s parameters (PyTorch's ``quantize_val``), clamped to its dtype's range."""
    lo, hi = RANGES[q.dtype.name]
    inv = np.float32(1.0) / np.float32(q._scale)
    return int(min(max(int(np.rint(np.float32(value) * inv)) + q._zero_point, lo), hi))  # product rounded, then zp


def _fma_dequantize(q) -> np.ndarray:
    """PyTorch's vectorized dequantize: ``fma(scale, q, -zero_point * scale)`` with one float32 rounding (computed
    in float64, where the product is exact)."""
    scale = np.float32(q._scale)
    premul = np.float32(-np.float32(q._zero_point) * scale)
    return (q._data.astype(np.float64) * np.float64(scale) + np.float64(premul)).astype(np.float32)


def _binary_inputs(qa, qb, fn: str):
    for q in (qa, qb):
        if not q.is_quantized:
            raise NotImplementedError(f"{fn}: both inputs must be quantized tensors")
        per_tensor(q, fn)
    if qa.dtype is not qb.dtype:
        raise RuntimeError(f"{fn} operands should have same data type.")
    broadcast_shapes(qa.shape, qb.shape, op=fn)


def _add(qa, qb, scale, zero_point, relu: bool, fn: str):
    _binary_inputs(qa, qb, fn)
    c = _fma_dequantize(qa) + _fma_dequantize(qb)
    if relu:
        np.maximum(c, 0, out=c)
    rng = RANGES[qa.dtype.name]
    inv = np.float32(1.0) / np.float32(scale)
    v = np.rint(c * inv) + np.float32(zero_point)
    return make_like(qa, np.clip(v, *rng).astype(qa.dtype.np), scale, zero_point)


def _mul(qa, qb, scale, zero_point, relu: bool, fn: str):
    _binary_inputs(qa, qb, fn)
    prod = (qa._data.astype(np.int32) - qa._zero_point) * (qb._data.astype(np.int32) - qb._zero_point)
    multiplier = np.float32(qa._scale * qb._scale / scale)
    v = np.rint(prod.astype(np.float32) * multiplier) + np.float32(zero_point)
    lo, hi = RANGES[qa.dtype.name]
    v = np.clip(v, zero_point if relu else lo, hi)
    return make_like(qa, v.astype(qa.dtype.np), scale, zero_point)


def _strided(name: str):
    def refuse(*args):
        raise backend_refusal(f"quantized::{name}", "CPU")

    return refuse


def _binary_op(name: str, compute, relu: bool, doc: str) -> R.OpDef:
    d = op(f"quantized::{name}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
           doc=doc, **_OPTIONS)(_strided(name))
    d.kernels["quantized_cpu"] = lambda qa, qb, scale, zp: compute(qa, qb, scale, zp, relu, f"quantized::{name}")
    return d


add = _binary_op("add", _add, False, "``qa + qb`` requantized to ``scale``/``zero_point``.")
add_relu = _binary_op("add_relu", _add, True, "``relu(qa + qb)`` requantized to ``scale``/``zero_point``.")
mul = _binary_op("mul", _mul, False, "``qa * qb`` requantized to ``scale``/``zero_point``.")
mul_relu = _binary_op("mul_relu", _mul, True, "``relu(qa * qb)`` requantized to ``scale``/``zero_point``.")


def _scalar_input(qa, fn: str, verb: str):
    """The checks PyTorch's ``add_scalar``/``mul_scalar`` make: one per-tensor quantized input."""
    if not qa.is_quantized:
        raise NotImplementedError(f"{fn}: the input must be a quantized tensor")
    if qa._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError(f"Only per tensor quantization is supported in {verb}.")
    return RANGES[qa.dtype.name]


def _add_scalar(qa, b, relu: bool, fn: str):
    """``qa + b`` as PyTorch computes it: ``b`` is rounded to ``c_q`` integer steps of ``qa``'s scale and taken
    from the zero point, so the integers stay as they are; only where ``zero_point - c_q`` leaves the dtype's range
    does the scale widen to hold the shifted range, the zero point pinned at its edge, and the integers shifted by
    ``c_q`` are requantized with ``float32(scale_in) * (1 / scale_out)``."""
    lo, hi = _scalar_input(qa, fn, "Add")
    s, z = float(qa._scale), int(qa._zero_point)
    c_q = int(np.rint(float(b) / s))
    shifted = z - c_q
    if lo <= shifted <= hi:
        return make_like(qa, np.maximum(qa._data, shifted) if relu else qa._data.copy(), s, shifted)
    scale, zp = ((hi - shifted) / (hi - lo) * s, lo) if shifted < lo else ((shifted - lo) / (hi - lo) * s, hi)
    multiplier = np.float32(s) * (np.float32(1.0) / np.float32(scale))
    c = (qa._data.astype(np.int64) - z + c_q).astype(np.float32)
    v = np.clip(np.rint(c * multiplier) + np.float32(zp), zp if relu else lo, hi)
    return make_like(qa, v.astype(qa.dtype.np), scale, zp)


def _mul_scalar(qa, b, relu: bool, fn: str):
    """``qa * b`` as PyTorch computes it, in the parameters alone where it can: ``b > 0`` scales the scale,
    ``b == 0`` gives zeros at scale 1, zero point 0, and ``b < 0`` mirrors the integers (``q_max + q_min - q``) and
    the zero point, the scale multiplied by ``|b|``."""
    lo, hi = _scalar_input(qa, fn, "Mul")
    b, s, z = float(b), float(qa._scale), int(qa._zero_point)
    if b > 0:
        return make_like(qa, np.maximum(qa._data, z) if relu else qa._data.copy(), b * s, z)
    if b == 0:
        return make_like(qa, np.zeros_like(qa._data), 1.0, 0)
    zp = hi - (z - lo)
    ints = (hi + lo) - qa._data.astype(np.int64)
    return make_like(qa, (np.maximum(ints, zp) if relu else ints).astype(qa.dtype.np), abs(b) * s, zp)


def _scalar_op(name: str, compute, relu: bool, doc: str) -> R.OpDef:
    d = op(f"quantized::{name}(Tensor qa, Scalar b) -> Tensor qc", doc=doc, **_OPTIONS)(_strided(name))
    d.kernels["quantized_cpu"] = lambda qa, b: compute(qa, b, relu, f"quantized::{name}")
    return d


add_scalar = _scalar_op("add_scalar", _add_scalar, False,
                        "``qa + b``, its output parameters derived from ``qa``'s (see ``_add_scalar``).")
add_scalar_relu = _scalar_op("add_scalar_relu", _add_scalar, True,
                             "``relu(qa + b)``, its output parameters derived from ``qa``'s.")
mul_scalar = _scalar_op("mul_scalar", _mul_scalar, False,
                        "``qa * b``, its output parameters derived from ``qa``'s (see ``_mul_scalar``).")
mul_scalar_relu = _scalar_op("mul_scalar_relu", _mul_scalar, True,
                             "``relu(qa * b)``, its output parameters derived from ``qa``'s.")


def _matmul(qa, qb, scale, zero_point):
    """PyTorch's x86 ``quantized::matmul``: its checks, then its reference path, ``quantize_per_tensor(
    matmul(qa.dequantize(), qb.dequantize()))`` (the float product through the registered ``matmul``, so shapes,
    broadcasting and their errors are ``matmul``'s)."""
    if not (qa.is_quantized and qa.dtype.name in ("quint8", "qint8")):
        raise RuntimeError("MatMul operands should use QInt8 or QUInt8 data types.")
    if not qb.is_quantized or qb.dtype is not qa.dtype:
        raise RuntimeError("MatMul operands should have same data type.")
    if qa._qscheme is not _qs.per_tensor_affine:
        raise RuntimeError("Only per-tensor quantization is supported in Matmul.")
    if qb._qscheme is not qa._qscheme:
        raise RuntimeError("Both inputs to Matmul must have the same quantization scheme.")
    product = R.get("matmul")(qa.dequantize(), qb.dequantize())
    return R.get("quantize_per_tensor")(product, scale, zero_point, qa.dtype)


matmul = op("quantized::matmul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
            doc="``qa @ qb`` requantized to ``scale``/``zero_point`` (8-bit, per-tensor inputs of one dtype).",
            **_OPTIONS)(_strided("matmul"))
matmul.kernels["quantized_cpu"] = _matmul


def _cat(qx, dim, scale, zero_point, relu: bool, fn: str):
    if not qx:
        raise RuntimeError(f"{fn}: expected a non-empty list of tensors")
    for q in qx:
        if not q.is_quantized:
            raise NotImplementedError(f"{fn}: all inputs must be quantized tensors")
        per_tensor(q, fn)
        if q.dtype is not qx[0].dtype:
            raise RuntimeError(f"{fn}: all inputs must have the same quantized dtype")
    first = qx[0]
    scale = float(first._scale if scale is None else scale)
    zero_point = int(first._zero_point if zero_point is None else zero_point)
    _, dim, _ = cat_shape([q.shape for q in qx], dim, fn)
    x = np.concatenate([dequantize_per_tensor(q._data, q._scale, q._zero_point) for q in qx], axis=dim)
    if relu:
        np.maximum(x, 0, out=x)
    return make_like(first, quantize_array(x, scale, zero_point, RANGES[first.dtype.name], first.dtype.np), scale,
                     zero_point)


for _name, _relu in (("cat", False), ("cat_relu", True)):
    _d = op(f"quantized::{_name}(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor",
            doc="Concatenate quantized tensors along ``dim``: dequantized, joined"
                + (", clamped at 0" if _relu else "") + " and quantized again with ``scale``/``zero_point`` "
                "(the first input's where None).", **_OPTIONS)(_strided(_name))
    _d.kernels["quantized_cpu"] = (lambda qx, dim, scale, zp, _relu=_relu, _n=_name:
                                   _cat(qx, dim, scale, zp, _relu, f"quantized::{_n}"))
    if _name == "cat":
        cat = _d


def _clamp_ints(q, lo: int | None, hi: int | None) -> np.ndarray:
    return np.clip(q._data, lo, hi)


def _relu6(qx, inplace=False):
    per_tensor(qx, "quantized::relu6")
    ints = _clamp_ints(qx, qx._zero_point, quantize_value(qx, 6.0))
    if inplace:
        qx._data[...] = ints
        return qx
    return make_like(qx, ints)


relu6 = op("quantized::relu6(Tensor qx, bool inplace=False) -> Tensor",
           doc="``min(max(x, 0), 6)`` of a quantized tensor, on its integers (its parameters kept).",
           **_OPTIONS)(_strided("relu6"))
relu6.kernels["quantized_cpu"] = _relu6


def _aten_relu(q):
    per_tensor(q, "relu")
    return make_like(q, np.maximum(q._data, q.dtype.np.type(q._zero_point)))


def _aten_hardtanh(q, min_val=-1, max_val=1):
    per_tensor(q, "hardtanh")
    return make_like(q, _clamp_ints(q, quantize_value(q, min_val), quantize_value(q, max_val)))


def _aten_relu6(q):
    return make_like(q, _relu6(q)._data)


R.get("relu").kernels["quantized_cpu"] = _aten_relu  # relu_ shares relu's kernels and writes the result back
R.get("hardtanh").kernels["quantized_cpu"] = _aten_hardtanh
R.get("relu6").kernels["quantized_cpu"] = _aten_relu6


_TESTED_ELSEWHERE = ("Its inputs are quantized tensors, which the generated comparisons do not build; "
                     "tests/quantization/test_quantized_elementwise.py checks it against PyTorch.")


for _d in (add, add_relu, mul, mul_relu, cat, R.get("quantized::cat_relu"), relu6, add_scalar, add_scalar_relu,
           mul_scalar, mul_scalar_relu, matmul):
    _d.tested_elsewhere(_TESTED_ELSEWHERE)
