"""Activation wrappers whose PyTorch signature differs from the registry op's: ``inplace=``, ``dim=None``.

``F.relu(x, inplace=True)`` calls the registry's ``relu_``; ``F.softmax(x)``
without ``dim`` picks PyTorch's legacy implicit dim and warns as PyTorch does.
"""

from __future__ import annotations

import warnings

from ...ops import api as _api
from ...tensor import Tensor

__all__ = [
    "relu", "relu_", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_", "hardtanh",
    "hardtanh_", "relu6", "silu", "mish", "hardsigmoid", "hardswish", "threshold", "threshold_", "rrelu",
    "softmin", "softmax", "log_softmax", "sigmoid", "tanh", "hardshrink", "prelu", "gumbel_softmax",
]


def _call(name: str, input: Tensor, inplace: bool, *args):
    return getattr(_api, name + "_" if inplace else name)(input, *args)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)``; ``inplace=True`` overwrites ``input``."""
    return _call("relu", input, inplace)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return _api.relu_(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    return _call("leaky_relu", input, inplace, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`."""
    return _api.leaky_relu_(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Exponential linear unit."""
    return _call("elu", input, inplace, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return _api.elu_(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled exponential linear unit."""
    return _call("selu", input, inplace)


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return _api.selu_(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Continuously differentiable exponential linear unit."""
    return _call("celu", input, inplace, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return _api.celu_(input, alpha)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]``."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _call("hardtanh", input, inplace, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _api.hardtanh_(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(input, 0), 6)``."""
    return _call("relu6", input, inplace)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)``."""
    return _call("silu", input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * tanh(softplus(input))``."""
    return _call("mish", input, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(input + 3) / 6``."""
    return _call("hardsigmoid", input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * relu6(input + 3) / 6``."""
    return _call("hardswish", input, inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``input`` where ``input > threshold``, else ``value``."""
    return _call("threshold", input, inplace, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return _api.threshold_(input, threshold, value)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``input`` where ``|input| > lambd``, 0 elsewhere."""
    return _api.hardshrink(input, lambd)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``input`` where positive, ``weight * input`` elsewhere; ``weight`` has 1 or ``C`` (dim 1) elements."""
    return _api.prelu(input, weight)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Softmax of ``(logits + g) / tau`` with Gumbel noise ``g``; ``hard`` returns one-hot samples whose gradient
    is the soft sample's (the straight-through estimator), as PyTorch composes it."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_api.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _api.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: in training a slope drawn uniformly from ``[lower, upper]`` for each non-positive
    element (the gradient uses the drawn slopes), in eval the slope ``(lower + upper) / 2``."""
    return _call("rrelu", input, inplace, lower, upper, training)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``; without ``dim``, PyTorch's implicit (deprecated) choice."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _api.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _api.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-input, dim)``."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _api.softmax(-input, dim, dtype)


def sigmoid(input: Tensor) -> Tensor:
    """The logistic function."""
    return _api.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent."""
    return _api.tanh(input)
