"""Binary and ternary pointwise arithmetic: pow, floor_divide, remainder, fmod, atan2, hypot, lerp, addcmul, addcdiv.

Dtypes follow PyTorch: the dispatcher promotes the tensor arguments (and
Python numbers in their place) and casts the result; kernels add PyTorch's
integer rules (``ZeroDivisionError`` for integer division by zero, no
negative integer powers of a Scalar exponent) and its unsupported-dtype
errors. ``clamp``, ``maximum``/``minimum`` and ``where`` live in
``selection.py``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._core import dtypes as _dt
from .._core.fp_errors import ignore_fp_errors
from .._core.meta import TensorMeta
from .._core.shape import broadcast_shapes
from . import api
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import (
    absolute,
    compute_dtype,
    div,
    floor_quotient,
    int_divisor_check,
    mul,
    neg,
    not_implemented,
    sign,
    sub,
    trunc,
)
from .grad_fn_rules import by_number_at, by_scalar_operand
from .registry import (
    ELEMENTWISE,
    PROMOTE_INT_TO_FLOAT,
    PROMOTE_NONE,
    OpDef,
    op,
    refuses_names,
    runs_on_sparse_values,
)


# ----------------------------------------------------------------------------- shared helpers
def is_number(v) -> bool:
    return isinstance(v, numbers.Number)


def alias(d: OpDef, name: str, schema: str | None = None, doc: str | None = None) -> OpDef:
    """Register ``name`` as another name of op ``d`` (``clip`` for ``clamp``): same kernel, rules and samples.

    ``schema`` gives the alias its own schema where PyTorch's takes fewer arguments (``true_divide`` has no
    ``rounding_mode``); the arguments it leaves out keep their defaults. ``doc`` replaces the generated
    docstring where the alias is an op of its own in PyTorch (``sgn`` is ``sign`` for real dtypes).
    """
    a = op(
        schema or str(d.schema).replace(d.schema.name, name, 1),
        kind=d.kind,
        formula=d.formula,
        promotion=d.promotion,
        mode_promotion=d.mode_promotion if schema is None else None,
        check_dtypes=d.check_dtypes,
        method=d.method,
        function=d.function,
        namespace=d.namespace,
        inplace=d.has_inplace,
        differentiable=d.differentiable,
        nondiff_args=tuple(d.arg_names[i] for i in d.tensor_args if i not in d.diff_args),
        promote_args=None if d.promote_args is d.tensor_args else tuple(d.arg_names[i] for i in d.promote_args),
        scalar_self=d.scalar_self,
        numbers_as_tensors=d.numbers_as_tensors,
        overlap_ok=d.overlap_ok,
        no_overlap=d.no_overlap,
        out=d.out or False,
        doc=doc or f"Alias of :func:`{d.name}`.\n\n{d.doc}",
        grad_fn=d,  # its grad_fn is named as d's (``multiply`` records ``MulBackward0``), as in PyTorch
    )(d.kernels["cpu"])
    if d.derivative is not None:
        a.grad(d.derivative)
        a.holomorphic_rule = d.holomorphic_rule
    if d.meta is not None:
        a.meta_rule(d.meta)
    # Samples are often attached after the alias is made; those using arguments the alias lacks are left out.
    a.samples = lambda rng: ((args, kw) for args, kw in d.samples(rng) if set(kw) <= set(a.arg_names))
    return a


# ----------------------------------------------------------------------------- pow
@op("pow(Tensor self, Tensor exponent) -> Tensor", kind=ELEMENTWISE, formula="math.pow(self, exponent)",
    inplace=True, dunders=("pow", "rpow", "ipow"),
    grad_fn=by_scalar_operand("PowBackward1", "PowBackward0", "PowBackward2"))
def pow(self, exponent):  # noqa: A001
    """``self ** exponent`` elementwise; ``self`` or ``exponent`` may be a Python number (``2 ** t``).

    Integer tensors keep their dtype. A negative Python-number exponent of an
    integer tensor is an error, as in PyTorch; negative exponents inside an
    integer tensor give 0 (or +-1 for bases +-1).
    """
    dt = compute_dtype(self, exponent)
    if isinstance(self, np.ndarray) and not isinstance(exponent, np.ndarray) and exponent in (0, 1):
        return np.ones_like(self) if exponent == 0 else self.copy()  # PyTorch's shortcut, for every dtype
    if dt == np.bool_:
        raise not_implemented("pow", "pow", dt)
    if dt.kind in "iu":
        if not isinstance(exponent, np.ndarray):
            if exponent < 0:
                raise RuntimeError("pow: Integers to negative integer powers are not allowed.")
            if isinstance(exponent, np.integer):  # the dispatcher wrapped a number outside the dtype's range
                raise RuntimeError(
                    f"pow: exponent out of range for {dt.name}: Integers to negative integer powers are not "
                    f"allowed., and the value cannot be converted to type {dt.name}_t without overflow")
            return np.power(self, exponent)
        return _integer_pow(np.asarray(self, dtype=dt), exponent)
    with ignore_fp_errors():
        if isinstance(self, np.ndarray) and not isinstance(exponent, np.ndarray) and exponent == 2 and dt.kind == "f":
            return np.square(self, dtype=dt)  # PyTorch's shortcut, the same product; numpy's power takes 3x longer
        return np.power(self, exponent)


def _integer_pow(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    negative = exponent < 0
    if not negative.any():
        return np.power(base, exponent)
    out = np.power(base, np.where(negative, 0, exponent).astype(exponent.dtype))
    odd = (exponent % 2) == 1
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, out).astype(out.dtype)


def _log_scalar(x: float) -> float:
    return math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)


@pow.grad
def _(grad, self, exponent, result, needs_input_grad):
    g_self = g_exp = None
    if needs_input_grad[0]:
        if is_number(exponent):
            if exponent == 0:
                g_self = grad * 0
            elif exponent == 2:  # self ** 1 would be a copy of self: the same products without it
                g_self = grad * exponent * self
            else:
                g_self = grad * exponent * self ** (exponent - 1)
        else:
            g_self = grad * api.where(exponent == 0, 0.0, exponent * self ** (exponent - 1))
    if needs_input_grad[1]:
        if is_number(self):
            if self == 0:
                g_exp = grad * api.where(exponent >= 0, 0.0, result * _log_scalar(self))
            else:
                g_exp = grad * (result * _log_scalar(self))
        else:
            g_exp = grad * api.where((self == 0) & (exponent >= 0), 0.0, result * self.log())
    return g_self, g_exp


# ----------------------------------------------------------------------------- other names of arithmetic
divide = alias(div, "divide")
true_divide = alias(div, "true_divide", "true_divide(Tensor self, Tensor other) -> Tensor")
multiply = alias(mul, "multiply")
subtract = alias(sub, "subtract")
negative = alias(neg, "negative")
absolute_alias = alias(absolute, "absolute")
fix = alias(trunc, "fix")
sgn = alias(sign, "sgn", doc="The sign of each element: ``sign`` for real dtypes (bool and integers keep their dtype).")
sgn.grad_fn = "SgnBackward0"  # an op of its own in PyTorch, with its own formula (complex inputs)


@sgn.wirtinger_grad
def _(grad, self, result):
    # sgn(z) = z / |z| keeps only the gradient's part across the unit circle: i Im(grad conj(s)) s / |z|
    if not self.is_complex():
        return grad * 0
    a = self.abs()
    return ((grad - (grad * result.conj()).real * result) / a).masked_fill(a == 0, 0)


# ----------------------------------------------------------------------------- division and modulo


@op("floor_divide(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="self // other", inplace=True,
    dunders=("floordiv", "rfloordiv", "ifloordiv"), differentiable=False)
def floor_divide(self, other):
    """``self // other``: the quotient rounded toward minus infinity (Python's ``//``)."""
    return floor_quotient("floor_divide", self, other)


@op("remainder(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="self % other", inplace=True,
    dunders=("mod", "rmod", "imod"), grad_fn=by_scalar_operand("RemainderBackward1", "RemainderBackward0"))
def remainder(self, other):
    """Python's modulus: the remainder has the sign of the divisor."""
    dt = compute_dtype(self, other)
    if dt == np.bool_:
        raise not_implemented("remainder", "remainder_cpu", dt)
    with ignore_fp_errors():
        out = np.remainder(self, other)
    if dt.kind in "iu":
        int_divisor_check("remainder", other, out)
    return out


@remainder.grad
def _(grad, self, other, needs_input_grad):
    g_other = -grad * api.div(self, other, rounding_mode="floor") if needs_input_grad[1] else None
    return grad, g_other


@op("fmod(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="math.fmod(self, other)",
    inplace=True, grad_fn=by_scalar_operand("FmodBackward1", "FmodBackward0"))
def fmod(self, other):
    """C's ``fmod``: the remainder has the sign of the dividend."""
    dt = compute_dtype(self, other)
    if dt == np.bool_:
        raise not_implemented("fmod", "fmod_cpu", dt)
    with ignore_fp_errors():
        out = np.fmod(self, other)
    if dt.kind in "iu":
        int_divisor_check("fmod", other, out)
    return out


@fmod.grad
def _(grad, self, other, needs_input_grad):
    g_other = -grad * api.div(self, other, rounding_mode="trunc") if needs_input_grad[1] else None
    return grad, g_other


# ----------------------------------------------------------------------------- two-argument math
@op("atan2(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="math.atan2(self, other)",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True)
def atan2(self, other):
    """The angle of the point ``(other, self)``, in ``[-pi, pi]``; integers compute in float."""
    return np.arctan2(self, other)


@atan2.grad
def _(grad, self, other, needs_input_grad):
    scale = grad / (self * self + other * other)
    return (scale * other if needs_input_grad[0] else None), (scale * -self if needs_input_grad[1] else None)


arctan2 = alias(atan2, "arctan2")


@op("hypot(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="math.hypot(self, other)",
    inplace=True)
def hypot(self, other):
    """``sqrt(self**2 + other**2)`` without overflow; floating-point inputs only, as in PyTorch."""
    dt = compute_dtype(self, other)
    if dt.kind != "f":
        raise not_implemented("hypot", "hypot_cpu", dt)
    return np.hypot(self, other)


@hypot.grad
def _(grad, self, other, result, needs_input_grad):
    return (grad * self / result if needs_input_grad[0] else None), (
        grad * other / result if needs_input_grad[1] else None)


# ----------------------------------------------------------------------------- lerp


def _lerp_check(self_dtype, end_dtype, weight_dtype, weight_ndim) -> None:
    """PyTorch's lerp: ``end`` (and a weight with dims) must have ``self``'s dtype; floats only."""
    if end_dtype is not None and end_dtype != self_dtype:
        raise RuntimeError(f"lerp: expected dtype {_dt.cpp_name(self_dtype)} for `end` but got dtype "
                           f"{_dt.cpp_name(end_dtype)}")
    if weight_dtype is not None and weight_ndim and weight_dtype != self_dtype:
        raise RuntimeError(f"lerp: expected dtype {_dt.cpp_name(self_dtype)} for `weight` but got dtype "
                           f"{_dt.cpp_name(weight_dtype)}")
    if self_dtype.name not in ("float16", "float32", "float64", "complex64", "complex128"):
        kernel = "lerp_kernel_scalar" if weight_dtype is None else "lerp_kernel_tensor"
        raise not_implemented("lerp", kernel, self_dtype)


@op("lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", kind=ELEMENTWISE, out="cast", promotion=PROMOTE_NONE,
    formula="self + weight * (end - self) if abs(weight) < 0.5 else end - (end - self) * (1 - weight)",
    inplace=True, grad_fn=by_number_at(2, "LerpBackward0", "LerpBackward1"))
def lerp(self, end, weight, out=None):
    """Linear interpolation ``self + weight * (end - self)``; ``weight`` is a number or a tensor.

    Computed in the stable two-sided form PyTorch uses, in float32 for half inputs. A number (or 0-d)
    weight picks one side for the whole tensor: three in-place passes instead of both sides and a select.
    """
    dt = np.asarray(self).dtype
    end_dt = end.dtype if isinstance(end, np.ndarray) else None
    w_is_array = isinstance(weight, np.ndarray)
    _lerp_check(dt, end_dt, weight.dtype if w_is_array else None, weight.ndim if w_is_array else 0)
    ct = np.dtype(np.float32 if dt == np.float16 else dt)
    with ignore_fp_errors():
        if not w_is_array or weight.ndim == 0:
            return _lerp_scalar_weight(self, end, ct.type(weight), dt, ct, out)
        s = np.asarray(self, dtype=ct)
        e = np.asarray(end, dtype=ct)
        w = np.asarray(weight, dtype=ct)
        diff = e - s
        res = np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))
    if out is not None:
        np.copyto(out, res, casting="same_kind")
        return out
    return res.astype(dt, copy=False)


def _lerp_scalar_weight(self, end, w, dt: np.dtype, ct: np.dtype, out):
    """``self + w * (end - self)`` if ``|w| < 0.5`` else ``end - (end - self) * (1 - w)``, op for op in ``ct``."""
    diff = np.asarray(np.subtract(end, self, dtype=ct))
    if abs(w) < 0.5:
        diff *= w
        fn, a, b = np.add, diff, self
    else:
        diff *= ct.type(1) - w
        fn, a, b = np.subtract, end, diff
    if out is not None:
        fn(a, b, out=out, dtype=ct, casting="same_kind")
        return out
    if dt == ct and diff.ndim:
        return fn(a, b, out=diff, dtype=ct)
    return np.asarray(fn(a, b, dtype=ct)).astype(dt, copy=False)


@lerp.meta_rule
def _(self, end, weight):
    end_dt = end.dtype if hasattr(end, "dtype") else None
    w_dt = weight.dtype if hasattr(weight, "dtype") else None
    _lerp_check(self.dtype, end_dt, w_dt, len(weight.shape) if w_dt is not None else 0)
    shapes = [tuple(x.shape) for x in (self, end, weight) if hasattr(x, "shape")]
    return TensorMeta(broadcast_shapes(*shapes, op="lerp"), self.dtype, self.device)


@lerp.grad
def _(grad, self, end, weight, needs_input_grad):
    g_self = grad * (1 - weight) if needs_input_grad[0] else None
    g_end = grad * weight if needs_input_grad[1] else None
    g_weight = grad * (end - self) if needs_input_grad[2] else None
    return g_self, g_end, g_weight


# ----------------------------------------------------------------------------- addcmul, addcdiv
def _value_as(value, dt: np.dtype):
    """``value`` in the compute dtype: PyTorch truncates a float value for integer tensors."""
    return int(value) if dt.kind in "iu" else value


@op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", kind=ELEMENTWISE,
    formula="self + value * tensor1 * tensor2", inplace=True)
def addcmul(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 * tensor2``, with broadcasting; ``value`` does not take part in promotion."""
    dt = compute_dtype(self, tensor1, tensor2)
    if dt == np.bool_:
        raise not_implemented("addcmul", "addcmul_cpu_out", dt)
    v = _value_as(value, dt)
    with ignore_fp_errors():
        scaled = tensor1 if v == 1 else np.multiply(v, tensor1, dtype=dt)
        return np.add(self, np.multiply(scaled, tensor2, dtype=dt), dtype=dt)


@addcmul.grad
def _(grad, tensor1, tensor2, value, needs_input_grad):
    g1 = grad * tensor2 * value if needs_input_grad[1] else None
    g2 = grad * tensor1 * value if needs_input_grad[2] else None
    return grad, g1, g2


@op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", kind=ELEMENTWISE,
    formula="self + value * tensor1 / tensor2", inplace=True)
def addcdiv(self, tensor1, tensor2, value=1):
    """``self + value * tensor1 / tensor2``; integer division is an error, as in PyTorch."""
    dt = compute_dtype(self, tensor1, tensor2)
    if dt.kind in "biu":
        raise RuntimeError(
            "addcdiv: Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
            "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + "
            "value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    with ignore_fp_errors():
        scaled = tensor1 if value == 1 else np.multiply(value, tensor1, dtype=dt)
        return np.add(self, np.true_divide(scaled, tensor2, dtype=dt), dtype=dt)


@addcdiv.grad
def _(grad, tensor1, tensor2, value, needs_input_grad):
    g1 = grad * value / tensor2 if needs_input_grad[1] else None
    g2 = -grad * value * tensor1 / (tensor2 * tensor2) if needs_input_grad[2] else None
    return grad, g1, g2


# ----------------------------------------------------------------------------- samples
def _ints(rng, shape, low=-5, high=6, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


def _nonzero_ints(rng, shape, dtype=np.int64):
    return (rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)).astype(dtype)


def _signed(rng, shape, low=0.5, high=2.0):
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


@pow.sample_inputs
def _(rng):
    yield (rng.uniform(0.5, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))), {}
    yield (rng.uniform(0.5, 2, (2, 3, 4)), rng.uniform(-2, 2, (4,))), {}
    yield (rng.uniform(0.5, 2, (4, 3)).T, np.array(1.5)), {}
    yield (_signed(rng, (3, 2)), 2), {}
    yield (_signed(rng, (3,)), -1.0), {}
    yield (rng.uniform(0.5, 2, (3,)), 0), {}
    yield (2.5, rng.uniform(-1, 1, (2, 3))), {}
    yield (np.array(rng.uniform(0.5, 2)), rng.uniform(-1, 1, (2, 2))), {}
    yield (_ints(rng, (2, 3), -3, 4), _ints(rng, (3,), 0, 4)), {}
    yield (np.array([1, -1, -1, 2, 0], dtype=np.int32), np.array([-3, -3, -2, -1, 2], dtype=np.int32)), {}
    yield (_ints(rng, (4,), dtype=np.int8), 3), {}
    yield (_ints(rng, (4,)), 2.5), {}
    yield (2, _ints(rng, (4,), 0, 5)), {}
    yield (rng.random((3,)) > 0.5, 2), {}
    yield (rng.uniform(0.5, 2, (0, 3)), 2.0), {}


def _division_samples(rng, scalar_self: bool = True):
    yield (rng.uniform(-3, 3, (3, 4)), _signed(rng, (3, 4))), {}
    yield (rng.uniform(-3, 3, (2, 3, 4)), _signed(rng, (4,))), {}
    yield (rng.uniform(-3, 3, (4, 3)).T, np.array(-0.75)), {}
    yield (rng.uniform(-3, 3, (3,)), 1.25), {}
    yield (_ints(rng, (2, 3), -9, 10), _nonzero_ints(rng, (3,))), {}
    yield (_ints(rng, (4,), dtype=np.uint8, low=0), 3), {}
    yield (_ints(rng, (4,), dtype=np.int8), _nonzero_ints(rng, (4,), np.int16)), {}
    yield (_ints(rng, (4,)), 2.5), {}
    yield (rng.uniform(-3, 3, (0, 2)), 2.0), {}
    if scalar_self:
        yield (5, _nonzero_ints(rng, (4,))), {}


floor_divide.sample_inputs(_division_samples)
remainder.sample_inputs(_division_samples)


@fmod.sample_inputs
def _(rng):
    yield from _division_samples(rng, scalar_self=False)


def _two_float_samples(rng):
    yield (_signed(rng, (3, 4)), _signed(rng, (3, 4))), {}
    yield (_signed(rng, (2, 3, 4)), _signed(rng, (4,))), {}
    yield (_signed(rng, (4, 3)).T, np.array(0.75)), {}
    yield (np.array(-1.25), _signed(rng, (2, 2))), {}
    yield (_signed(rng, (0, 2)), _signed(rng, (2,))), {}
    yield (_signed(rng, (3,)).astype(np.float32), _signed(rng, (3,))), {}


@atan2.sample_inputs
def _(rng):
    yield from _two_float_samples(rng)
    yield (_ints(rng, (2, 3)), _nonzero_ints(rng, (3,), np.int8)), {}
    yield (rng.random((3,)) > 0.5, _ints(rng, (3,))), {}


hypot.sample_inputs(_two_float_samples)


@lerp.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4)), 0.3), {}
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (4,)), 0.8), {}
    yield (rng.uniform(-2, 2, (4, 3)).T, rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 1)), rng.uniform(-2, 2, (3,)), rng.uniform(0, 1, (2, 3))), {}
    yield (np.array(0.5), np.array(-1.5), np.array(0.25)), {}
    yield (rng.uniform(-2, 2, (3,)).astype(np.float32), rng.uniform(-2, 2, (3,)).astype(np.float32), 1.5), {}
    yield (rng.uniform(-2, 2, (0, 2)), rng.uniform(-2, 2, (2,)), 0.5), {}


def _addc_samples(rng, divisor):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4)), divisor(rng, (3, 4))), {}
    yield (rng.uniform(-2, 2, (4,)), rng.uniform(-2, 2, (2, 1)), divisor(rng, (4,))), {"value": 0.5}
    yield (rng.uniform(-2, 2, (4, 3)).T, rng.uniform(-2, 2, (3, 4)), divisor(rng, (4, 3)).T), {"value": -2}
    yield (np.array(1.5), np.array(-0.5), divisor(rng, (2,))), {}
    yield (rng.uniform(-2, 2, (0, 2)), rng.uniform(-2, 2, (2,)), divisor(rng, (2,))), {}
    yield (rng.uniform(-2, 2, (3,)).astype(np.float32), _ints(rng, (3,)), divisor(rng, (3,))), {"value": 2}


@addcmul.sample_inputs
def _(rng):
    yield from _addc_samples(rng, lambda r, s: r.uniform(-2, 2, s))
    yield (_ints(rng, (3,)), _ints(rng, (3,)), _ints(rng, (2, 1), dtype=np.int16)), {"value": 3}


@addcdiv.sample_inputs
def _(rng):
    yield from _addc_samples(rng, _signed)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("atan2", "arctan2", "remainder", "fmod", "hypot"), no_complex_kernel("{name}_cpu"))
refuse_complex(("floor_divide",), no_complex_kernel("div_floor_cpu"))
refuse_complex(("sign",), "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn "
                          "instead.")  # after ``sgn``, which shares its kernel and takes complex
refuse_complex(("absolute_",), "In-place abs is not supported for complex tensors.", RuntimeError)
# (``fix`` took ``trunc``'s kernel with its refusal)

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("sgn",))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
@pow.symbolic
def _(g, self, exponent):
    from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them
    return g.op("Pow", *onnx_promote(g, self, exponent))


@floor_divide.symbolic
def _(g, self, other):
    from .elementwise import div  # defined beside the elementwise ops, imported after them
    return div.onnx_lowering(g, self, other, rounding_mode="floor")

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("fmod", "lerp", "remainder", "sgn"))
