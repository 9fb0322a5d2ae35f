"""Pointwise selection: where, clamp (clamp_min, clamp_max and the alias clip), maximum, minimum, fmax, fmin.

Each picks, per element, one of its inputs. ``where``'s bool ``condition``
takes no part in type promotion, and ``clamp``'s Python-number bounds do
(``clamp(int_tensor, min=0.5)`` is float), which their ``promote_args`` say.
Derivatives route the gradient to the input that was picked; ties of
``maximum``/``minimum`` split it in half, as PyTorch does.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core.dtypes import title as _title
from ..backends.cpu import map_kernel
from . import api
from ._meta_rules import elementwise_meta
from .complex_refusal import refuse_complex
from .elementwise import (
    FORMULA_KERNEL_MIN,
    compiled_float,
    formula_kernel,
    not_implemented,
)
from .masked import nonzero_numpy
from .pointwise import alias, compute_dtype
from .registry import ELEMENTWISE, INDEXING, op, refuses_names


# ----------------------------------------------------------------------------- where
def _check_condition(condition, warn: bool) -> None:
    dt = getattr(condition, "dtype", None)
    if dt is None or not hasattr(condition, "shape") or isinstance(condition, np.generic):
        raise TypeError(f"where(): argument 'condition' (position 1) must be Tensor, not {type(condition).__name__}")
    if dt.name == "uint8":
        if warn:
            warnings.warn(
                "where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                "future version of PyTorch. Use a boolean condition instead.",
                UserWarning,
                stacklevel=7,
            )
    elif dt.name != "bool":
        raise RuntimeError(
            f"where: where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_title(dt)}"
        )


@op("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="self if condition else other", promote_args=("self", "other"), nondiff_args=("condition",),
    method=False)
def where(condition, self, other):
    """``self`` where ``condition`` is True, else ``other``, with broadcasting; either may be a Python number.

    The result dtype promotes ``self`` and ``other`` only: the condition must be bool.
    """
    if type(condition) is not np.ndarray or condition.dtype != np.bool_:
        _check_condition(condition, warn=True)
    elif condition.size >= WHERE_KERNEL_MIN:
        out = _compiled_where(condition, self, other)
        if out is not None:
            return out
    return np.where(condition, self, other)


# From here (in elements) ``where`` on float arrays runs its formula's compiled loop: on a mixed condition numpy's
# took 2.8 us for 4096 float32 values and 4.0 for 6400 (the loop 2.9 and 3.1; 1.1 against 2.7 for 256).
WHERE_KERNEL_MIN = 1 << 12


def _compiled_where(condition: np.ndarray, self, other):
    """``where``'s formula as a compiled select, for float32/float64 arrays shaped like the bool condition (or a
    number on one side); None for anything else. numpy's ``where`` branches on each element and mispredicts on
    a mixed condition (a ReLU gradient of 92k values: 290 us; the loop about 10)."""
    if type(self) is np.ndarray:
        dt = self.dtype
        if type(other) is np.ndarray:
            if other.dtype is not dt or other.shape != self.shape:
                return None
            inputs, params, values = _BOTH, (), (condition, self, other)
        elif type(other) in _NUMBERS or type(other) is dt.type:  # numbers the array's dtype takes as they are
            inputs, params, values = _SELF, ("other",), (condition, self, dt.type(other))
        else:
            return None
        shape = self.shape
    elif type(other) is np.ndarray and (type(self) in _NUMBERS or type(self) is other.dtype.type):
        dt, shape = other.dtype, other.shape
        inputs, params, values = _OTHER, ("self",), (condition, other, dt.type(self))
    else:
        return None
    if not compiled_float(dt) or shape != condition.shape:
        return None
    k = _WHERE_KERNELS.get(inputs)
    if k is None:
        k = _WHERE_KERNELS[inputs] = map_kernel(where.formula, inputs, params)
    return k(*values)


_NUMBERS = (float, int, bool)  # Python numbers: an array's float dtype takes them as they are (NEP 50)
_BOTH, _SELF, _OTHER = ("condition", "self", "other"), ("condition", "self"), ("condition", "other")
# The kernels by the formula's inputs that are arrays: map_kernel memoizes them too, but building its key cost
# 0.35 us a call (3.4 against 3.0 us for 6400 values), a tenth of the call near the threshold.
_WHERE_KERNELS: dict = {}


@where.meta_rule
def _(condition, self, other):
    _check_condition(condition, warn=False)
    return elementwise_meta(where, condition, self, other)


@where.grad
def _(grad, condition, needs_input_grad):
    g_self = api.where(condition, grad, 0.0) if needs_input_grad[0] else None
    g_other = api.where(condition, 0.0, grad) if needs_input_grad[1] else None
    return g_self, g_other


@op("where(Tensor condition) -> Tensor[]", kind=INDEXING, method=False, composite=True, differentiable=False)
def where_nonzero(condition):
    """``where(condition)``: the coordinates of ``condition``'s nonzero elements, one 1-D tensor per dim
    (``condition.nonzero(as_tuple=True)``)."""
    return api.nonzero_numpy(condition)


where_nonzero.meta_rule(nonzero_numpy.meta)
where_nonzero.sample_inputs(nonzero_numpy.samples)


# ----------------------------------------------------------------------------- clamp
_NO_BOUND = "clamp: At least one of 'min' or 'max' must not be None"


def _bound(v, dt: np.dtype):
    """A Python-number bound in the compute dtype: PyTorch wraps negative bounds of unsigned
    tensors (two's complement) but rejects bounds the dtype cannot hold."""
    if v is None or isinstance(v, np.ndarray) or dt.kind not in "iu":
        return v
    iv = int(v)
    info = np.iinfo(dt)
    low = -int(info.max) if dt.kind == "u" else int(info.min)
    if not low <= iv <= int(info.max):
        raise RuntimeError(f"clamp: value cannot be converted to type {dt.name}_t without overflow")
    return np.array(iv).astype(dt)[()]


def _clamp(self, min, max):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError(_NO_BOUND)
    dt = compute_dtype(self)
    if dt == np.bool_:
        tensors = isinstance(min, np.ndarray) or isinstance(max, np.ndarray)
        if min is not None and max is not None:
            raise not_implemented("clamp", "clamp_cpu" if tensors else "clamp_scalar_cpu", dt)
        if not tensors:
            raise not_implemented("clamp", "clamp_min_scalar_cpu" if max is None else "clamp_max_scalar_cpu", dt)
    if (type(self) is np.ndarray and self.size >= FORMULA_KERNEL_MIN and compiled_float(dt)
            and not isinstance(min, np.ndarray) and not isinstance(max, np.ndarray)):
        bounds = tuple(dt.type(b) for b in (min, max) if b is not None)
        return _clamp_kernel(min is not None, max is not None)(self, *bounds)
    out = self
    if min is not None:
        out = _limit(out, _bound(min, dt), np.less)
    if max is not None:
        out = _limit(out, _bound(max, dt), np.greater)
    return out


def _limit(x, bound, beyond):
    """The formula's ``bound if (bound != bound or beyond(x, bound)) else x``: ``x`` itself where it equals the
    bound (so -0.0 stays -0.0 against a bound of 0, where numpy's maximum may give 0.0), NaN for a NaN bound."""
    take = beyond(x, bound)
    nan_bound = bound != bound
    if isinstance(nan_bound, np.ndarray) or nan_bound:
        take = take | nan_bound
    return np.where(take, bound, x)


_CLAMP_KERNELS: dict = {}


def _clamp_kernel(low: bool, high: bool):
    """The compiled loop of ``clamp``'s formula (``clamp_min``'s or ``clamp_max``'s for one bound)."""
    k = _CLAMP_KERNELS.get((low, high))
    if k is None:
        name, params = {(True, False): ("clamp_min", ("min",)), (False, True): ("clamp_max", ("max",)),
                        (True, True): ("clamp", ("min", "max"))}[low, high]
        k = _CLAMP_KERNELS[low, high] = formula_kernel(name, params, names={"min": "low", "max": "high"})
    return k


_LOW = "(min if min is not None and (min != min or self < min) else self)"
_CLAMP_FORMULA = f"(max if max is not None and (max != max or {_LOW} > max) else {_LOW})"


@op("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula=_CLAMP_FORMULA, inplace=True, promote_args=("self", "min", "max"), grad_fn="ClampBackward1")
def clamp(self, min=None, max=None):  # noqa: A002
    """Limit ``self`` to ``[min, max]``: ``min(max(self, min), max)``, so ``max`` wins when ``min > max``.

    NaN in ``self`` or in a bound gives NaN. The bounds take part in type
    promotion: ``clamp(int_tensor, min=0.5)`` is float.
    """
    return _clamp(self, min, max)


@op("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", kind=ELEMENTWISE,
    formula=_CLAMP_FORMULA, inplace=True)
def clamp_tensor(self, min=None, max=None):  # noqa: A002
    """Limit ``self`` to ``[min, max]`` elementwise (tensor bounds broadcast; either may be None)."""
    return _clamp(self, min, max)


@op("clamp_min(Tensor self, Scalar min) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="min if (min != min or self < min) else self", inplace=True, promote_args=("self", "min"))
def clamp_min(self, min):  # noqa: A002
    """``max(self, min)`` elementwise; ``min`` takes part in type promotion."""
    return _clamp(self, min, None)


@op("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", kind=ELEMENTWISE, grad_fn="ClampMinBackward1",
    formula="min if (min != min or self < min) else self", inplace=True)
def clamp_min_tensor(self, min):  # noqa: A002
    """``max(self, min)`` elementwise with a tensor bound (NaN propagates)."""
    return _clamp(self, min, None)


@op("clamp_max(Tensor self, Scalar max) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="max if (max != max or self > max) else self", inplace=True, promote_args=("self", "max"))
def clamp_max(self, max):  # noqa: A002
    """``min(self, max)`` elementwise; ``max`` takes part in type promotion."""
    return _clamp(self, None, max)


@op("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", kind=ELEMENTWISE, grad_fn="ClampMaxBackward1",
    formula="max if (max != max or self > max) else self", inplace=True)
def clamp_max_tensor(self, max):  # noqa: A002
    """``min(self, max)`` elementwise with a tensor bound (NaN propagates)."""
    return _clamp(self, None, max)


# Overloads are tried in PyTorch's order (ops.registry.sort_overloads): the Tensor overload first, so a tensor
# bound reaches it; a number must then fall through to the Scalar overload (its bound converts with PyTorch's
# overflow check), so the Tensor overload does not take numbers.
for _o in (clamp_min_tensor, clamp_max_tensor):
    _o.scalar_tensors = _o.inplace_variant.scalar_tensors = False


def _clamp_meta(opdef):
    def meta(self, min=None, max=None):  # noqa: A002
        if min is None and max is None:
            raise RuntimeError(_NO_BOUND)
        return elementwise_meta(opdef, self, min, max)

    opdef.meta_rule(meta)


_clamp_meta(clamp_tensor)
_clamp_meta(clamp)


def _clamp_grads(grad, self, min, max, needs_input_grad):  # noqa: A002
    """PyTorch's clamp_backward_min_max: ``self`` inside the range, else the bound that was picked."""
    zero = 0.0
    g_self = g_min = g_max = None
    if min is not None and max is not None:
        if needs_input_grad[0]:
            g_self = api.where((self >= min) & (self <= max), grad, zero)
        if len(needs_input_grad) > 1 and needs_input_grad[1]:
            g_min = api.where((min > self) & (min < max), grad, zero)
        if len(needs_input_grad) > 2 and needs_input_grad[2]:
            g_max = api.where((max < self) | (max < min), grad, zero)
    elif min is not None:
        g_self = api.where(self >= min, grad, zero) if needs_input_grad[0] else None
        if len(needs_input_grad) > 1 and needs_input_grad[1]:
            g_min = api.where(self < min, grad, zero)
    else:
        g_self = api.where(self <= max, grad, zero) if needs_input_grad[0] else None
        if len(needs_input_grad) > 2 and needs_input_grad[2]:
            g_max = api.where(self > max, grad, zero)
    return g_self, g_min, g_max


@clamp_tensor.grad
def _(grad, self, min, max, needs_input_grad):  # noqa: A002
    return _clamp_grads(grad, self, min, max, needs_input_grad)


@clamp.grad
def _(grad, self, min, max):  # noqa: A002
    return _clamp_grads(grad, self, min, max, (True,))[0]


@clamp_min_tensor.grad
def _(grad, self, min, needs_input_grad):  # noqa: A002
    g_self, g_min, _ = _clamp_grads(grad, self, min, None, needs_input_grad)
    return g_self, g_min


@clamp_min.grad
def _(grad, self, min):  # noqa: A002
    return _clamp_grads(grad, self, min, None, (True,))[0]


@clamp_max_tensor.grad
def _(grad, self, max, needs_input_grad):  # noqa: A002
    g_self, _, g_max = _clamp_grads(grad, self, None, max, (needs_input_grad[0], False, needs_input_grad[1]))
    return g_self, g_max


@clamp_max.grad
def _(grad, self, max):  # noqa: A002
    return _clamp_grads(grad, self, None, max, (True,))[0]


# ----------------------------------------------------------------------------- maximum, minimum, fmax, fmin
@op("maximum(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
    formula="self if (self != self or self > other) else other")
def maximum(self, other):
    """The larger of two tensors elementwise, with broadcasting; NaN propagates (see ``fmax``)."""
    return np.maximum(self, other)


@op("minimum(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
    formula="self if (self != self or self < other) else other")
def minimum(self, other):
    """The smaller of two tensors elementwise, with broadcasting; NaN propagates (see ``fmin``)."""
    return np.minimum(self, other)


@op("fmax(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
    formula="other if (self != self or other > self) else self")
def fmax(self, other):
    """Like ``maximum``, but a NaN loses to a number (NaN only where both are NaN)."""
    return np.fmax(self, other)


@op("fmin(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE,
    formula="other if (self != self or other < self) else self")
def fmin(self, other):
    """Like ``minimum``, but a NaN loses to a number (NaN only where both are NaN)."""
    return np.fmin(self, other)


def _split_at_ties(grad, lose_self, lose_other, tie, needs_input_grad):
    shared = api.where(tie, grad / 2, grad)
    g_self = api.where(lose_self, 0.0, shared) if needs_input_grad[0] else None
    g_other = api.where(lose_other, 0.0, shared) if needs_input_grad[1] else None
    return g_self, g_other


@maximum.grad
def _(grad, self, other, needs_input_grad):
    return _split_at_ties(grad, self < other, self > other, self == other, needs_input_grad)


@minimum.grad
def _(grad, self, other, needs_input_grad):
    return _split_at_ties(grad, self > other, self < other, self == other, needs_input_grad)


@fmax.grad
def _(grad, self, other, needs_input_grad):
    to_self = (self >= other) | api.isnan(other)
    return (api.where(to_self, grad, 0.0) if needs_input_grad[0] else None), (
        api.where(to_self, 0.0, grad) if needs_input_grad[1] else None)


@fmin.grad
def _(grad, self, other, needs_input_grad):
    to_self = (self <= other) | api.isnan(other)
    return (api.where(to_self, grad, 0.0) if needs_input_grad[0] else None), (
        api.where(to_self, 0.0, grad) if needs_input_grad[1] else None)


clip_tensor = alias(clamp_tensor, "clip")
clip = alias(clamp, "clip")


# ----------------------------------------------------------------------------- samples
def _ints(rng, shape, low=-5, high=6, dtype=np.int64):
    return rng.integers(low, high, shape).astype(dtype)


@where.sample_inputs
def _(rng):
    yield (rng.random((3, 4)) > 0.5, rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))), {}
    yield (rng.random((4,)) > 0.5, rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-2, 2, (3, 1))), {}
    yield ((rng.random((4, 3)) > 0.5).T, rng.uniform(-2, 2, (4, 3)).T, np.array(0.5)), {}
    yield (np.array(True), rng.uniform(-2, 2, (2, 2)), rng.uniform(-2, 2, (2, 2))), {}
    yield (rng.random((3,)) > 0.5, rng.uniform(-2, 2, (3,)), 2.5), {}
    yield (rng.random((3,)) > 0.5, 1.0, 0), {}
    yield (rng.random((3,)) > 0.5, 1, 0), {}
    yield (rng.random((3,)) > 0.5, _ints(rng, (3,)), 2.5), {}
    yield (rng.random((3,)) > 0.5, _ints(rng, (3,), dtype=np.uint8, low=0), _ints(rng, (3,), dtype=np.int8)), {}
    yield (rng.random((2, 1)) > 0.5, rng.random((3,)) > 0.5, rng.random((2, 3)) > 0.5), {}
    yield (rng.random((0, 3)) > 0.5, rng.uniform(-2, 2, (3,)), 0.0), {}


def _away_from(rng, shape, points, gap=0.1):
    """Values in [-2, 2] at least ``gap`` away from ``points`` (kinks where gradcheck would fail)."""
    x = rng.uniform(-2, 2, shape)
    for p in points:
        near = np.abs(x - p) < gap
        x = np.where(near, p + np.sign(x - p + 1e-12) * gap * 2, x)
    return x


@clamp.sample_inputs
def _(rng):
    yield (_away_from(rng, (3, 4), (-0.5, 0.5)), -0.5, 0.5), {}
    yield (_away_from(rng, (4, 3), (0.25,)).T,), {"min": 0.25}
    yield (_away_from(rng, (3,), (1.0,)),), {"max": 1.0}
    yield (np.array(1.5), -1, 1), {}
    yield (_away_from(rng, (3,), (0.5, -0.5)), 0.5, -0.5), {}
    yield (_ints(rng, (2, 3)), -2, 3), {}
    yield (_ints(rng, (4,)), 0.5), {}
    yield (_ints(rng, (4,), dtype=np.uint8, low=0), -1, 2), {}
    yield (rng.random((3,)) > 0.5, 2), {}
    yield (rng.uniform(-2, 2, (0, 3)), 0.0), {}


@clamp_tensor.sample_inputs
def _(rng):
    x = _away_from(rng, (3, 4), (-0.5, 0.5))
    yield (x, np.full((4,), -0.5) + np.arange(4) * 0.01, np.full((3, 1), 0.5)), {}
    yield (_away_from(rng, (4, 3), (0.0,)).T, np.array(0.0)), {}
    yield (_away_from(rng, (3,), (0.3,)), None, np.array([0.3, 0.3, 0.3])), {}
    yield (_away_from(rng, (3,), (0.5, -0.5)), np.array(0.5), np.array(-0.5)), {}
    yield (_ints(rng, (2, 3)), np.array([-2.5, 0.0, 1.5]), None), {}
    yield (rng.random((3,)) > 0.5, np.array(True)), {}
    yield (_ints(rng, (3,), dtype=np.int8), None, np.array(2, dtype=np.int16)), {}


@clamp_min.sample_inputs
def _(rng):
    yield (_away_from(rng, (3, 4), (0.25,)), 0.25), {}
    yield (_away_from(rng, (4, 3), (-1.0,)).T, -1), {}
    yield (_ints(rng, (4,)), 0.5), {}
    yield (_ints(rng, (4,), dtype=np.int8), 2), {}


@clamp_max.sample_inputs
def _(rng):
    yield (_away_from(rng, (3, 4), (0.25,)), 0.25), {}
    yield (np.array(1.5), 1), {}
    yield (_ints(rng, (4,)), -0.5), {}


@clamp_min_tensor.sample_inputs
def _(rng):
    yield (_away_from(rng, (3, 4), (0.0,)), rng.uniform(0.05, 0.1, (4,))), {}
    yield (_away_from(rng, (4, 3), (0.0,)).T, np.array(0.0)), {}
    yield (rng.random((3,)) > 0.5, rng.random((3,)) > 0.5), {}


@clamp_max_tensor.sample_inputs
def _(rng):
    yield (_away_from(rng, (3, 4), (0.0,)), rng.uniform(0.05, 0.1, (3, 1))), {}
    yield (_ints(rng, (3,)), np.array([1.5, -0.5, 0.0])), {}


def _extrema_samples(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 3, 4)), rng.uniform(-2, 2, (4,))), {}
    yield (rng.uniform(-2, 2, (4, 3)).T, np.array(0.5)), {}
    yield (_ints(rng, (2, 3)), rng.uniform(-2, 2, (3,))), {}
    yield (_ints(rng, (3,), dtype=np.uint8, low=0), _ints(rng, (3,), dtype=np.int8)), {}
    yield (rng.random((3,)) > 0.5, rng.random((3,)) > 0.5), {}
    yield (rng.uniform(-2, 2, (0, 3)), rng.uniform(-2, 2, (3,))), {}


for _o in (maximum, minimum, fmax, fmin):
    _o.sample_inputs(_extrema_samples)


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("clamp", "clip", "clamp_min", "clamp_max"), "clamp is not supported for complex types")
refuse_complex(("maximum", "minimum", "fmax", "fmin"), "{name} not implemented for complex tensors.", RuntimeError)
refuse_complex(("max",), "maximum not implemented for complex tensors.", RuntimeError, only=("other", "out"))
refuse_complex(("min",), "minimum not implemented for complex tensors.", RuntimeError, only=("other", "out"))


# -- ONNX lowerings (read by toolkit.onnx; see OpDef.symbolic) ----------------------------------------------
def _onnx_promote(g, *xs):
    from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them
    return onnx_promote(g, *xs)


def onnx_extremum(g, op_type, a, b):
    """``Max``/``Min`` of two tensors in their common dtype (of bools: ``Or``/``And``)."""
    from .._core import dtypes as _dt  # only lowerings need dtypes here

    a, b = _onnx_promote(g, a, b)
    if g.dtype(a) is _dt.bool:
        return g.op("Or" if op_type == "Max" else "And", a, b)
    return g.op(op_type, a, b)


@where.symbolic
def _(g, condition, self, other):
    from .._core import dtypes as _dt  # only lowerings need dtypes here

    if g.dtype(condition) is not _dt.bool:
        condition = g.op("Cast", condition, to=_dt.bool)
    return g.op("Where", condition, *_onnx_promote(g, self, other))


def _onnx_clip(g, self, min=None, max=None):
    """Clip in the dtype PyTorch computes in: a float bound makes an integer tensor's result float."""
    from .._core import dtypes as _dt  # only lowerings need dtypes here

    dtype = g.dtype(self)
    numbers = [b for b in (min, max) if b is not None and not g.is_value(b)]
    if dtype is not None and numbers:
        wanted = _dt.result_type_from([dtype], (), numbers)
        if wanted is not dtype:
            self, dtype = g.op("Cast", self, to=wanted), wanted
    min, max = (None if b is None else b if g.is_value(b) else g.constant(b, dtype) for b in (min, max))
    return g.op("Clip", self, min, max)


@clamp.symbolic
def _(g, self, min=None, max=None):
    return _onnx_clip(g, self, min, max)


@clamp_tensor.symbolic
def _(g, self, min=None, max=None):
    if min is not None:
        self = onnx_extremum(g, "Max", self, min)
    if max is not None:
        self = onnx_extremum(g, "Min", self, max)
    return self


@clamp_min.symbolic
def _(g, self, min):
    return _onnx_clip(g, self, min)


@clamp_max.symbolic
def _(g, self, max):
    return _onnx_clip(g, self, None, max)


@clamp_min_tensor.symbolic
def _(g, self, min):
    return onnx_extremum(g, "Max", self, min)


@clamp_max_tensor.symbolic
def _(g, self, max):
    return onnx_extremum(g, "Min", self, max)

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("fmax", "fmin", "where.self"))
