"""Elementwise math: arithmetic, powers, exponentials, trigonometry, activations, rounding.

Each op has a numpy kernel, a derivative written with registered ops, and a
scalar ``formula`` (a Python expression over the schema's argument names,
using ``math``) that the fusion code generator inlines into one loop body.
"""

from __future__ import annotations

import numpy as np

from .registry import ELEMENTWISE, PROMOTE_INT_TO_FLOAT, op


def _binary(a, b):
    return [(a, b)]


@op("add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kind=ELEMENTWISE,
    formula="self + alpha * other", inplace=True, dunders=("add", "radd", "iadd"))
def add(self, other, alpha=1):
    """Add ``other``, scaled by ``alpha``, to ``self`` elementwise, with broadcasting."""
    if alpha != 1:
        other = np.multiply(other, alpha, dtype=np.result_type(other)) if isinstance(other, np.ndarray) else other * alpha
    return np.add(self, other)


@add.grad
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


@op("sub(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", kind=ELEMENTWISE,
    formula="self - alpha * other", inplace=True, dunders=("sub", "rsub", "isub"))
def sub(self, other, alpha=1):
    """Subtract ``alpha * other`` from ``self`` elementwise."""
    if isinstance(self, np.ndarray) and self.dtype == np.bool_:
        raise RuntimeError(
            "sub: Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if alpha != 1:
        other = np.multiply(other, alpha, dtype=np.result_type(other)) if isinstance(other, np.ndarray) else other * alpha
    return np.subtract(self, other)


@sub.grad
def _(grad, alpha):
    return grad, (-grad if alpha == 1 else grad * (-alpha))


@op("mul(Tensor self, Tensor other) -> Tensor", kind=ELEMENTWISE, formula="self * other", inplace=True,
    dunders=("mul", "rmul", "imul"))
def mul(self, other):
    """Multiply elementwise, with broadcasting."""
    return np.multiply(self, other)


@mul.grad
def _(grad, self, other, needs_input_grad):
    return (grad * other if needs_input_grad[0] else None), (grad * self if needs_input_grad[1] else None)


@op("div(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor", kind=ELEMENTWISE,
    formula="self / other", promotion=PROMOTE_INT_TO_FLOAT, inplace=True,
    dunders=("truediv", "rtruediv", "itruediv"))
def div(self, other, rounding_mode=None):
    """True division (or ``'trunc'``/``'floor'`` rounding), promoting integers to float as PyTorch does."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.true_divide(self, other)
        if rounding_mode is None:
            return q
        if rounding_mode == "trunc":
            return np.trunc(q)
        if rounding_mode == "floor":
            return np.floor(q)
    raise RuntimeError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{rounding_mode}'"
    )


@div.grad
def _(grad, self, other, rounding_mode, needs_input_grad):
    if rounding_mode is not None:
        return grad * 0, (grad * 0 if isinstance(other, type(grad)) else None)
    ga = grad / other if needs_input_grad[0] else None
    gb = -grad * self / (other * other) if needs_input_grad[1] else None
    return ga, gb


@op("neg(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="-self", inplace=True, dunders=("neg",))
def neg(self):
    """Negate elementwise."""
    if self.dtype == np.bool_:
        raise RuntimeError(
            "neg: Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(self)


@neg.grad
def _(grad):
    return -grad


@op("exp(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="math.exp(self)", promotion=PROMOTE_INT_TO_FLOAT,
    inplace=True)
def exp(self):
    """``e ** self`` elementwise."""
    with np.errstate(over="ignore"):
        return np.exp(self)


@exp.grad
def _(grad, result):
    return grad * result


@op("log(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="math.log(self)", promotion=PROMOTE_INT_TO_FLOAT,
    inplace=True)
def log(self):
    """Natural logarithm; ``-inf`` at 0 and ``nan`` below, as in PyTorch."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(self)


@log.grad
def _(grad, self):
    return grad / self


@op("tanh(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="math.tanh(self)", promotion=PROMOTE_INT_TO_FLOAT,
    inplace=True)
def tanh(self):
    """Hyperbolic tangent."""
    return np.tanh(self)


@tanh.grad
def _(grad, result):
    return grad * (1 - result * result)


@op("relu(Tensor self) -> Tensor", kind=ELEMENTWISE, formula="max(self, 0)", inplace=True)
def relu(self):
    """``max(self, 0)`` elementwise."""
    if self.dtype == np.bool_:
        raise RuntimeError('relu: "clamp_min_scalar_cpu" not implemented for \'Bool\'')
    return np.maximum(self, 0, dtype=self.dtype)


@relu.grad
def _(grad, result):
    return grad * (result > 0)


# ----------------------------------------------------------------------------- samples
def _unary_samples(rng, low=-2.0, high=2.0):
    yield (rng.uniform(low, high, (3, 4)),), {}
    yield (rng.uniform(low, high, (4, 3)).T,), {}
    yield (np.array(rng.uniform(low, high)),), {}
    yield (rng.uniform(low, high, (0, 3)),), {}


def _binary_samples(rng, low=-2.0, high=2.0):
    yield (rng.uniform(low, high, (3, 4)), rng.uniform(low, high, (3, 4))), {}
    yield (rng.uniform(low, high, (2, 3, 4)), rng.uniform(low, high, (4,))), {}
    yield (rng.uniform(low, high, (4, 3)).T, rng.uniform(low, high, (3, 1))), {}
    yield (rng.uniform(low, high, (3,)), 1.5), {}
    yield (np.array(rng.uniform(low, high)), rng.uniform(low, high, (2, 2))), {}


for _o in (mul, exp, tanh):
    _o.sample_inputs(_unary_samples if _o is not mul else _binary_samples)


@add.sample_inputs
def _(rng):
    yield from _binary_samples(rng)
    yield (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))), {"alpha": 2.5}
    yield (rng.integers(-5, 5, (3,)), rng.integers(-5, 5, (3,))), {}


@sub.sample_inputs
def _(rng):
    yield from _binary_samples(rng)
    yield (rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (2,))), {"alpha": -0.5}


@div.sample_inputs
def _(rng):
    yield (rng.uniform(-2, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4))), {}
    yield (rng.uniform(-2, 2, (2, 3)), rng.uniform(0.5, 2, (3,))), {}
    yield (rng.integers(-9, 9, (4,)), rng.integers(1, 4, (4,))), {}
    yield (rng.uniform(-5, 5, (4,)), rng.uniform(0.5, 2, (4,))), {"rounding_mode": "floor"}


@neg.sample_inputs
def _(rng):
    yield from _unary_samples(rng)


@log.sample_inputs
def _(rng):
    yield from _unary_samples(rng, 0.5, 3.0)


@relu.sample_inputs
def _(rng):
    yield (np.array([-1.5, -0.3, 0.2, 1.7]),), {}
    yield (rng.uniform(0.1, 1, (3, 3)) * rng.choice([-1, 1], (3, 3)),), {}
