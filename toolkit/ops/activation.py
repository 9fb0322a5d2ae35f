"""Activation functions: sigmoid, relu, gelu, silu, softplus, prelu.

``torch.sigmoid`` and ``torch.relu`` are top-level functions and Tensor
methods; ``gelu``, ``silu`` and ``softplus`` live in ``nn.functional`` only,
and (as in PyTorch) accept floating-point tensors only. ``torch.prelu`` takes
one slope per channel (dim 1) or one for all. Kernels are numpy,
except exact (erf-based) gelu, which runs its formula as a numba map kernel:
numpy has no ``erf``. Benchmarks on 1e6 elements showed numpy's vectorized
``exp``/``tanh``/``log1p`` beating numba's scalar loops for the others.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.meta import TensorMeta
from . import api
from ._meta_rules import elementwise_meta
from .complex_refusal import no_complex_kernel, refuse_complex
from .elementwise import (
    FORMULA_KERNEL_MIN,
    compiled_float,
    float_samples,
    formula_kernel,
    not_implemented,
    reject_dtypes,
    unary_samples,
)
from .registry import ELEMENTWISE, NN, PROMOTE_INT_TO_FLOAT, op, refuses_names, runs_on_sparse_values

_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_C = 0.044715


def _upcast_half(self):
    """Half inputs compute in float32 and round once, as PyTorch computes them."""
    return self.astype(np.float32) if self.dtype == np.float16 else self


def _floats_only(name: str, kernel: str, self) -> None:
    if self.dtype.kind != "f":
        raise not_implemented(name, kernel, self.dtype)


@op("sigmoid(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="1.0 / (1.0 + math.exp(-self))",
    promotion=PROMOTE_INT_TO_FLOAT, inplace=True)
def sigmoid(self):
    """The logistic function ``1 / (1 + exp(-self))``."""
    x = _upcast_half(self)
    with np.errstate(over="ignore"):
        return np.reciprocal(1.0 + np.exp(-x), dtype=x.dtype)


@sigmoid.grad
def _(grad, result):
    return grad * result * (1 - result)


# relu runs its formula's compiled loop from FORMULA_KERNEL_MIN elements: numpy's ``where`` branches on each sign
# and took 2 ms for 368k random float32 values, the loop 0.05 ms.


@op("relu(Tensor self) -> Tensor", kind=ELEMENTWISE, out=False, formula="0 if self < 0 else self", inplace=True)
def relu(self):
    """``max(self, 0)`` elementwise; integer dtypes are kept, and ``nan`` and ``-0.0`` pass through as in PyTorch."""
    if self.dtype == np.bool_:
        raise RuntimeError("relu: Boolean inputs not supported for relu")
    if self.size >= FORMULA_KERNEL_MIN and compiled_float(self.dtype):
        return formula_kernel("relu")(self)
    return np.where(self < 0, 0, self)


@relu.meta_rule
def _(self):
    if self.dtype.name == "bool":
        raise RuntimeError("relu: Boolean inputs not supported for relu")
    return elementwise_meta(relu, self)


@relu.grad
def _(grad, result):
    # PyTorch's threshold_backward: zero where the result is <= 0, the gradient elsewhere (a NaN input too); a
    # NaN or inf gradient at a clamped element gives 0, not its product with 0.
    return api.where(result <= 0, 0.0, grad)


@relu.symbolic
def _(g, self):
    dtype = g.dtype(self)
    if dtype is not None and not dtype.is_floating_point:  # ONNX Runtime's Relu is for floats
        return g.op("Max", self, g.constant(0, dtype))
    return g.op("Relu", self)


relu.inplace_variant.function = True  # ``torch.relu_`` is a function as well as a Tensor method


_GELU = (
    "0.5 * self * (1.0 + math.erf(self * 0.7071067811865476)) if approximate == 'none' "
    "else 0.5 * self * (1.0 + math.tanh(0.7978845608028654 * (self + 0.044715 * self * self * self)))"
)


def _check_approximate(approximate: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("gelu: approximate argument must be either none or tanh.")


@op("gelu(Tensor self, *, str approximate='none') -> Tensor", kind=ELEMENTWISE, formula=_GELU, inplace=True,
    method=False, namespace="nn.functional")
def gelu(self, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""
    _floats_only("gelu", "GeluKernelImpl", self)
    _check_approximate(approximate)
    if approximate == "none":
        return formula_kernel("gelu", constants={"approximate": "none"})(self)
    x = _upcast_half(self)
    with np.errstate(over="ignore", invalid="ignore"):
        return 0.5 * x * (1.0 + np.tanh(_TANH_K * (x + _TANH_C * x * x * x)))


@gelu.meta_rule
def _(self, approximate="none"):
    if not self.dtype.is_floating_point:
        raise not_implemented("gelu", "GeluKernelImpl", self.dtype)
    _check_approximate(approximate)
    return elementwise_meta(gelu, self, approximate)


@gelu.grad
def _(grad, self, approximate):
    if approximate == "tanh":
        x2 = self * self
        t = ((self + x2 * self * _TANH_C) * _TANH_K).tanh()
        d = (t + 1) * 0.5 + self * (1 - t * t) * (x2 * (3 * _TANH_C) + 1) * (0.5 * _TANH_K)
        return grad * d
    cdf = ((self * _SQRT1_2).erf() + 1) * 0.5
    pdf = (self * self * -0.5).exp() * _INV_SQRT_2PI
    return grad * (cdf + self * pdf)


@gelu.symbolic
def _(g, self, approximate="none"):
    if g.opset >= 20:
        return g.op("Gelu", self, approximate=approximate)
    c = (lambda v: g.constant(v, g.dtype(self)))
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.op("Mul", g.op("Mul", self, self), self)
        inner = g.op("Mul", g.op("Add", self, g.op("Mul", cube, c(_TANH_C))), c(_TANH_K))
        phi = g.op("Tanh", inner)
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        phi = g.op("Erf", g.op("Mul", self, c(_SQRT1_2)))
    return g.op("Mul", g.op("Mul", self, c(0.5)), g.op("Add", phi, c(1.0)))


@op("silu(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="self / (1.0 + math.exp(-self))", inplace=True,
    method=False, namespace="nn.functional")
def silu(self):
    """Sigmoid-weighted linear unit ``self * sigmoid(self)`` (a.k.a. swish)."""
    _floats_only("silu", "silu_cpu", self)
    x = _upcast_half(self)
    with np.errstate(over="ignore", invalid="ignore"):
        return x / (1.0 + np.exp(-x))


reject_dtypes(silu, "silu_cpu", integer=True)


@silu.grad
def _(grad, self):
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


@silu.symbolic
def _(g, self):
    return g.op("Mul", self, g.op("Sigmoid", self))


@op("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", kind=ELEMENTWISE,
    formula="self if self * beta > threshold else math.log1p(math.exp(self * beta)) / beta",
    method=False, namespace="nn.functional")
def softplus(self, beta=1, threshold=20):
    """``log(1 + exp(beta * self)) / beta``, and ``self`` itself where ``beta * self > threshold``."""
    _floats_only("softplus", "softplus_cpu", self)
    x = _upcast_half(self)
    with np.errstate(over="ignore", invalid="ignore"):
        bx = x * beta
        soft = np.log1p(np.exp(bx)) / beta
    return np.where(bx > threshold, x, soft).astype(x.dtype, copy=False)


reject_dtypes(softplus, "softplus_cpu", integer=True)


@softplus.grad
def _(grad, self, beta, threshold):
    z = self * beta
    return api.where(z > threshold, grad, grad * z.sigmoid())


# ----------------------------------------------------------------------------- prelu
def _prelu_check(self_shape, weight_shape, self_dtype, weight_dtype) -> tuple:
    """aten's prelu checks; the shape ``weight`` broadcasts to (its elements along dim 1)."""
    if len(weight_shape) > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {len(weight_shape)}")
    n = weight_shape[0] if weight_shape else 1
    channels = self_shape[1] if len(self_shape) >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if self_dtype != weight_dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {self_dtype} and {weight_dtype}")
    return (n,) + (1,) * (len(self_shape) - 2) if len(self_shape) >= 2 else ()


@op("prelu(Tensor self, Tensor weight) -> Tensor", kind=NN, grad_fn="PreluKernelBackward0", autocast="lower")
def prelu(self, weight):
    """``self`` where positive, ``weight * self`` elsewhere, one slope per channel (dim 1) or one for all."""
    shape = _prelu_check(self.shape, weight.shape, _dt_title(self.dtype), _dt_title(weight.dtype))
    _floats_only("prelu", "prelu_cpu", self)
    w = weight.reshape(shape) if shape else weight.reshape(())
    return np.where(self > 0, self, w * self).astype(self.dtype, copy=False)


def _dt_title(dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half"}.get(np.dtype(dtype).name, str(dtype))


@prelu.meta_rule
def _(self, weight):
    _prelu_check(tuple(self.shape), tuple(weight.shape), self.dtype, weight.dtype)
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"prelu_cpu\" not implemented for '{self.dtype}'")
    return TensorMeta(tuple(self.shape), self.dtype, self.device)


@prelu.grad
def _(grad, self, weight, needs_input_grad):
    shape = (weight.numel(),) + (1,) * (self.dim() - 2) if self.dim() >= 2 else ()
    w = weight.reshape(shape)
    positive = self > 0
    gi = api.where(positive, grad, grad * w) if needs_input_grad[0] else None
    gw = None
    if needs_input_grad[1]:
        gw = api.where(positive, api.zeros_like(grad), grad * self)
        if weight.numel() == 1:
            gw = gw.sum().reshape(weight.shape)
        else:
            gw = gw.sum([0] + list(range(2, self.dim())))
    return gi, gw


@prelu.sample_inputs
def _(rng):
    def signed(*s):
        return rng.uniform(0.1, 2, s) * rng.choice([-1, 1], s)

    yield (signed(2, 3, 4), rng.uniform(0.05, 0.5, 3)), {}
    yield (signed(2, 3), rng.uniform(0.05, 0.5, 1)), {}
    yield (signed(5), np.array(0.25)), {}
    yield (signed(3, 2, 2).transpose(1, 0, 2), rng.uniform(0.05, 0.5, 3)), {}
    yield (np.array(-0.7), rng.uniform(0.05, 0.5, 1)), {}


# ----------------------------------------------------------------------------- samples
float_samples(sigmoid)


@relu.sample_inputs
def _(rng):
    yield (np.array([-1.5, -0.3, 0.2, 1.7]),), {}
    yield (rng.uniform(0.1, 1, (3, 3)) * rng.choice([-1, 1], (3, 3)),), {}
    yield (rng.uniform(0.1, 1, (3, 2)).T * rng.choice([-1, 1], (2, 3)),), {}
    yield (rng.integers(-5, 6, (2, 3)),), {}


@gelu.sample_inputs
def _(rng):
    yield from unary_samples(rng, -3.0, 3.0)
    yield (rng.uniform(-3, 3, (2, 5)),), {"approximate": "tanh"}
    yield (rng.uniform(-3, 3, (3, 2)).T,), {"approximate": "none"}


@silu.sample_inputs
def _(rng):
    yield from unary_samples(rng, -4.0, 4.0)


@softplus.sample_inputs
def _(rng):
    yield from unary_samples(rng, -3.0, 3.0)
    yield (rng.uniform(-3, 3, (2, 4)),), {"beta": 2, "threshold": 4.5}
    yield (rng.uniform(-3, 3, (4, 2)).T, 0.5, 1), {}


# PyTorch refuses complex input for these, with its own messages
refuse_complex(("softplus",), no_complex_kernel("softplus_cpu"))
refuse_complex(("gelu",), no_complex_kernel("GeluKernelImpl"))
refuse_complex(("relu",), "clamp is not supported for complex types")

# PyTorch's sparse kernels for these map the values (each maps zero to zero).
runs_on_sparse_values(("relu",))


@sigmoid.symbolic
def _(g, self):
    from .elementwise import onnx_promote  # defined beside the elementwise ops, imported after them
    return g.op("Sigmoid", *onnx_promote(g, self, floating=True))

# Ops PyTorch never taught names (its named-tensor registrations leave them out): a named input raises.
refuses_names(("gelu", "silu", "softplus"))
