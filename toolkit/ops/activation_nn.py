"""The ``nn.functional`` activations beyond sigmoid/relu/gelu/silu/softplus.

leaky_relu, elu, selu, celu, hardtanh, relu6, mish, hardsigmoid, hardswish,
logsigmoid, softsign, tanhshrink, threshold, hardshrink, softshrink and glu.
Each elementwise one has a numpy kernel, a scalar ``formula`` for the fusion
code generator, an in-place variant where PyTorch has one (``F.elu(x,
inplace=True)`` calls ``elu_``) and a derivative written with registered ops.
As in PyTorch most accept floating-point tensors only; hardtanh, relu6 and
threshold also take integers. selu, celu, threshold and hardshrink are also
``torch.*`` functions (with ``torch.selu_``, ``celu_``, ``threshold_``).
"""

from __future__ import annotations

import numpy as np

from .._core.meta import TensorMeta
from .._core.shape import wrap_dim
from . import api
from ._meta_rules import elementwise_meta
from .complex_refusal import refuse_complex
from .elementwise import not_implemented, reject_dtypes, unary_samples
from .registry import ELEMENTWISE, NN, PROMOTE_INT_TO_FLOAT, op, refuses_names

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _floats(name: str, kernel: str, x: np.ndarray) -> np.ndarray:
    """Reject non-float inputs with PyTorch's message; half computes in float32."""
    if x.dtype.kind != "f":
        raise not_implemented(name, kernel, x.dtype)
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _out(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(like.dtype, copy=False)


def _api():
    return api


# ----------------------------------------------------------------------------- relu family
@op("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", kind=ELEMENTWISE,
    formula="self if self > 0 else self * negative_slope", inplace=True, method=False, namespace="nn.functional")
def leaky_relu(self, negative_slope=0.01):
    """``self`` where positive, ``negative_slope * self`` elsewhere."""
    x = _floats("leaky_relu", "leaky_relu_cpu", self)
    return _out(np.where(x > 0, x, x * negative_slope), self)


reject_dtypes(leaky_relu, "leaky_relu_cpu", integer=True)


@leaky_relu.grad
def _(grad, self, negative_slope):
    return _api().where(self > 0, grad, grad * negative_slope)


@leaky_relu.symbolic
def _(g, self, negative_slope=0.01):
    return g.op("LeakyRelu", self, alpha=float(negative_slope))


def _elu(x, alpha, scale=1.0, input_scale=1.0):
    with np.errstate(over="ignore"):
        return np.where(x > 0, x * scale, np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale))


@op("elu(Tensor self, Scalar alpha=1.0) -> Tensor", kind=ELEMENTWISE,
    formula="self if self > 0 else alpha * math.expm1(self)", inplace=True, method=False,
    namespace="nn.functional")
def elu(self, alpha=1.0):
    """Exponential linear unit: ``self`` where positive, ``alpha * (exp(self) - 1)`` elsewhere."""
    return _out(_elu(_floats("elu", "elu_cpu", self), alpha), self)


reject_dtypes(elu, "elu_cpu", integer=True)


@elu.grad
def _(grad, self, alpha):
    return _api().where(self > 0, grad, grad * self.exp() * alpha)


@elu.symbolic
def _(g, self, alpha=1.0):
    return g.op("Elu", self, alpha=float(alpha))


@op("selu(Tensor self) -> Tensor", kind=ELEMENTWISE, grad_fn="EluBackward0", out=False,
    formula=f"{SELU_SCALE!r} * (self if self > 0 else {SELU_ALPHA!r} * math.expm1(self))", inplace=True,
    method=False)
def selu(self):
    """Scaled ELU with PyTorch's fixed ``alpha`` and ``scale`` (self-normalizing networks)."""
    return _out(_elu(_floats("selu", "elu_cpu", self), SELU_ALPHA, SELU_SCALE), self)


reject_dtypes(selu, "elu_cpu", integer=True)


@selu.grad
def _(grad, self):
    return _api().where(self > 0, grad * SELU_SCALE, grad * self.exp() * (SELU_ALPHA * SELU_SCALE))


@op("celu(Tensor self, Scalar alpha=1.0) -> Tensor", kind=ELEMENTWISE, out=False,
    formula="self if self > 0 else alpha * math.expm1(self / alpha)", inplace=True, method=False)
def celu(self, alpha=1.0):
    """Continuously differentiable ELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _out(_elu(_floats("celu", "elu_cpu", self), alpha, 1.0, 1.0 / alpha), self)


reject_dtypes(celu, "elu_cpu", integer=True)


@celu.grad
def _(grad, self, alpha):
    return _api().where(self > 0, grad, grad * (self / alpha).exp())


def _no_bool(name: str, x: np.ndarray) -> None:
    if x.dtype == np.bool_:
        raise RuntimeError(f"{name}: Bool inputs not supported for hardtanh")


@op("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", kind=ELEMENTWISE,
    formula="min(max(self, min_val), max_val)", inplace=True, method=False, namespace="nn.functional")
def hardtanh(self, min_val=-1, max_val=1):
    """Clamp to ``[min_val, max_val]``."""
    _no_bool("hardtanh", self)
    return _out(np.minimum(np.maximum(self, min_val), max_val), self)


@op("relu6(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="min(max(self, 0), 6)", inplace=True,
    method=False, namespace="nn.functional", grad_fn="HardtanhBackward0")
def relu6(self):
    """``min(max(self, 0), 6)``: hardtanh on ``[0, 6]``."""
    _no_bool("relu6", self)
    return _out(np.minimum(np.maximum(self, 0), 6), self)


def _bool_meta(opdef, name):
    @opdef.meta_rule
    def _(self, *rest):
        if self.dtype.name == "bool":
            raise RuntimeError(f"{name}: Bool inputs not supported for hardtanh")
        return elementwise_meta(opdef, self, *rest)


_bool_meta(hardtanh, "hardtanh")
_bool_meta(relu6, "relu6")


@hardtanh.grad
def _(grad, self, min_val, max_val):
    return grad * ((self > min_val) & (self < max_val))


@relu6.grad
def _(grad, self):
    return grad * ((self > 0) & (self < 6))


@hardtanh.symbolic
def _(g, self, min_val=-1, max_val=1):
    return g.op("Clip", self, g.constant(min_val, g.dtype(self)), g.constant(max_val, g.dtype(self)))


@relu6.symbolic
def _(g, self):
    return g.op("Clip", self, g.constant(0, g.dtype(self)), g.constant(6, g.dtype(self)))


@op("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", kind=ELEMENTWISE,
    formula="self if self > threshold else value", inplace=True, method=False)
def threshold(self, threshold, value):
    """``self`` where ``self > threshold``, ``value`` elsewhere."""
    if self.dtype == np.bool_:
        raise not_implemented("threshold", "threshold_cpu", self.dtype)
    return _out(np.where(self > threshold, self, value), self)


reject_dtypes(threshold, "threshold_cpu")


@threshold.grad
def _(grad, self, threshold):
    return grad * (self > threshold)


# ----------------------------------------------------------------------------- smooth ones
@op("mish(Tensor self) -> Tensor", kind=ELEMENTWISE,
    formula="self * math.tanh(self if self > 20 else math.log1p(math.exp(self)))", inplace=True,
    method=False, namespace="nn.functional")
def mish(self):
    """``self * tanh(softplus(self))``."""
    x = _floats("mish", "mish_cpu", self)
    with np.errstate(over="ignore"):
        return _out(x * np.tanh(np.logaddexp(0, x)), self)


reject_dtypes(mish, "mish_cpu", integer=True)


@mish.grad
def _(grad, self):
    t = self.exp().log1p().tanh()
    return grad * (t + self * self.sigmoid() * (1 - t * t))


@op("hardsigmoid(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="min(max(self + 3.0, 0.0), 6.0) / 6.0",
    inplace=True, method=False, namespace="nn.functional")
def hardsigmoid(self):
    """Piecewise-linear sigmoid: ``relu6(self + 3) / 6``."""
    x = _floats("hardsigmoid", "hardsigmoid_cpu", self)
    return _out(np.minimum(np.maximum(x + 3, 0), 6) / 6, self)


reject_dtypes(hardsigmoid, "hardsigmoid_cpu", integer=True)


@hardsigmoid.grad
def _(grad, self):
    return grad * ((self > -3) & (self < 3)) * (1 / 6)


@op("hardswish(Tensor self) -> Tensor", kind=ELEMENTWISE,
    formula="self * min(max(self + 3.0, 0.0), 6.0) / 6.0", inplace=True, method=False,
    namespace="nn.functional")
def hardswish(self):
    """``self * relu6(self + 3) / 6``."""
    x = _floats("hardswish", "hardswish_cpu", self)
    return _out(x * np.minimum(np.maximum(x + 3, 0), 6) / 6, self)


reject_dtypes(hardswish, "hardswish_cpu", integer=True)


@hardswish.grad
def _(grad, self):
    api = _api()
    mid = grad * (self / 3 + 0.5)
    return api.where(self < -3, grad * 0, api.where(self <= 3, mid, grad))


@op("log_sigmoid(Tensor self) -> Tensor", kind=ELEMENTWISE,
    formula="min(self, 0.0) - math.log1p(math.exp(-abs(self)))", method=False, function="logsigmoid",
    namespace="nn.functional")
def log_sigmoid(self):
    """``log(sigmoid(self))``, computed without overflow as ``min(x, 0) - log1p(exp(-|x|))``."""
    x = _floats("log_sigmoid", "log_sigmoid_cpu", self)
    return _out(np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), self)


reject_dtypes(log_sigmoid, "log_sigmoid_cpu", integer=True)


@log_sigmoid.grad
def _(grad, self):
    return grad * (-self).sigmoid()


@op("softsign(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="self / (1.0 + abs(self))",
    promotion=PROMOTE_INT_TO_FLOAT, method=False, namespace="nn.functional", grad_fn="DivBackward0")
def softsign(self):
    """``self / (1 + |self|)``."""
    if self.dtype == np.bool_:
        raise not_implemented("softsign", "abs_cpu", self.dtype)
    return self / (1 + np.abs(self))


reject_dtypes(softsign, "abs_cpu")


@softsign.grad
def _(grad, self):
    d = self.abs() + 1
    return grad / (d * d)


@op("tanhshrink(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="self - math.tanh(self)",
    promotion=PROMOTE_INT_TO_FLOAT, method=False, namespace="nn.functional", grad_fn="SubBackward0")
def tanhshrink(self):
    """``self - tanh(self)``."""
    if self.dtype == np.bool_:
        raise RuntimeError("tanhshrink: Subtraction, the `-` operator, with a bool tensor is not supported.")
    return self - np.tanh(self)


@tanhshrink.meta_rule
def _(self):
    if self.dtype.name == "bool":
        raise RuntimeError("tanhshrink: Subtraction, the `-` operator, with a bool tensor is not supported.")
    return elementwise_meta(tanhshrink, self)


@tanhshrink.grad
def _(grad, self):
    t = self.tanh()
    return grad * t * t


@op("hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", kind=ELEMENTWISE, out="exact",
    formula="self if abs(self) > lambd else 0.0 * self")
def hardshrink(self, lambd=0.5):
    """``self`` where ``|self| > lambd``, 0 elsewhere."""
    x = _floats("hardshrink", "hardshrink_cpu", self)
    return _out(np.where(np.abs(x) > lambd, x, 0), self)


reject_dtypes(hardshrink, "hardshrink_cpu", integer=True)


@hardshrink.grad
def _(grad, self, lambd):
    return grad * (self.abs() > lambd)


@op("softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", kind=ELEMENTWISE,
    formula="self - lambd if self > lambd else (self + lambd if self < -lambd else 0.0 * self)",
    method=False, namespace="nn.functional")
def softshrink(self, lambd=0.5):
    """Shrink towards 0 by ``lambd``: ``self - lambd``, ``self + lambd`` or 0."""
    x = _floats("softshrink", "softshrink_check", self)
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}.")
    return _out(np.where(x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0)), self)


reject_dtypes(softshrink, "softshrink_check", integer=True)


@softshrink.grad
def _(grad, self, lambd):
    return grad * (self.abs() > lambd)


# ----------------------------------------------------------------------------- glu
def _glu_dim(shape, dim):
    if len(shape) == 0:
        raise RuntimeError("glu: glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, len(shape), "glu")
    if shape[d] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {d} is size {shape[d]}")
    return d


@op("glu(Tensor self, int dim=-1) -> Tensor", kind=NN, method=False, namespace="nn.functional")
def glu(self, dim=-1):
    """Gated linear unit: split ``self`` in halves ``a, b`` along ``dim`` and return ``a * sigmoid(b)``."""
    d = _glu_dim(self.shape, dim)
    if self.dtype.kind != "f":
        raise not_implemented("glu", "glu_cpu", self.dtype)
    a, b = np.split(self, 2, axis=d)
    with np.errstate(over="ignore"):
        return (a / (1 + np.exp(-b))).astype(self.dtype, copy=False)


@glu.meta_rule
def _(self, dim=-1):
    d = _glu_dim(tuple(self.shape), dim)
    shape = list(self.shape)
    shape[d] //= 2
    return TensorMeta(tuple(shape), self.dtype, self.device)


@glu.grad
def _(grad, self, dim):
    a, b = self.chunk(2, dim)
    s = b.sigmoid()
    return _api().cat([grad * s, grad * a * s * (1 - s)], dim)


# ----------------------------------------------------------------------------- samples
def _signed(rng, low, high):
    """unary samples with |x| in [low, high): away from kinks at 0."""
    for (x,), kw in unary_samples(rng, low, high):
        yield (np.asarray(x * rng.choice([-1.0, 1.0], x.shape)),), kw


def _with_ints(rng):
    yield (rng.integers(-8, 9, (2, 3)),), {}


@leaky_relu.sample_inputs
def _(rng):
    yield from _signed(rng, 0.1, 3.0)
    yield (rng.uniform(0.1, 2, (2, 3)) * rng.choice([-1, 1], (2, 3)), 0.2), {}
    yield (rng.uniform(0.1, 2, (3, 2)) * rng.choice([-1, 1], (3, 2)),), {"negative_slope": -0.5}


@elu.sample_inputs
def _(rng):
    yield from _signed(rng, 0.1, 3.0)
    yield (rng.uniform(0.1, 2, (2, 3)) * rng.choice([-1, 1], (2, 3)), 0.5), {}
    yield (rng.uniform(0.1, 2, (3, 2)) * rng.choice([-1, 1], (3, 2)),), {"alpha": 2.0}


@celu.sample_inputs
def _(rng):
    yield from _signed(rng, 0.1, 3.0)
    yield (rng.uniform(0.1, 2, (3, 2)) * rng.choice([-1, 1], (3, 2)),), {"alpha": 2.0}


def _kinks_at(*points):
    """Samples kept at least 0.1 away from each kink in ``points``."""

    def gen(rng):
        for (x,), kw in unary_samples(rng, -8.0, 8.0):
            x = np.asarray(x, dtype=np.float64)
            for p in points:
                near = np.abs(x - p) < 0.1
                x = np.where(near, p + 0.2 * np.sign(x - p + 1e-9), x)
            yield (x,), kw

    return gen


for _o in (selu, mish, log_sigmoid, softsign, tanhshrink):
    _o.sample_inputs(_kinks_at(0.0))
hardsigmoid.sample_inputs(_kinks_at(-3.0, 3.0))
hardswish.sample_inputs(_kinks_at(-3.0, 3.0))


# ``torch.selu_``, ``torch.celu_`` and ``torch.threshold_`` are functions as well as Tensor methods.
for _o in (selu, celu, threshold):
    _o.inplace_variant.function = True


@relu6.sample_inputs
def _(rng):
    yield from _kinks_at(0.0, 6.0)(rng)
    yield from _with_ints(rng)


@hardtanh.sample_inputs
def _(rng):
    yield from _kinks_at(-1.0, 1.0)(rng)
    yield (np.array([-3.0, -0.5, 0.25, 0.6, 2.0]), -0.3, 0.5), {}
    yield (np.array([-3.0, -0.5, 0.25, 0.6, 2.0]),), {"min_val": -2.0, "max_val": 0.1}
    yield from _with_ints(rng)


@threshold.sample_inputs
def _(rng):
    yield (np.array([-3.0, -0.5, 0.25, 0.6, 2.0]), 0.1, 20.0), {}
    yield (rng.uniform(-1, 1, (3, 2)).T, -0.05, -1.0), {}
    yield (rng.integers(-8, 9, (2, 3)), 1, 5), {}


@hardshrink.sample_inputs
def _(rng):
    yield from _kinks_at(-0.5, 0.5)(rng)
    yield (np.array([-3.0, -0.5, 0.25, 0.6, 2.0]), 0.3), {}


@softshrink.sample_inputs
def _(rng):
    yield from _kinks_at(-0.5, 0.5)(rng)
    yield (np.array([-3.0, -0.4, 0.25, 0.6, 2.0]), 0.3), {}


@glu.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)),), {}
    yield (rng.uniform(-2, 2, (4, 3)), 0), {}
    yield (rng.uniform(-2, 2, (2, 4, 3)).transpose(0, 2, 1),), {"dim": 2}
    yield (rng.uniform(-2, 2, (0, 2)),), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("hardtanh",), "clamp is not supported for complex types")

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("celu", "elu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "mish", "softshrink"))
