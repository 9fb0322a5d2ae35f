"""Activation layers: thin modules over ``toolkit.nn.functional``, with PyTorch's arguments and reprs."""

from __future__ import annotations

import warnings

from ...ops import api as _api
from ...tensor import Tensor
from .. import functional as F
from .. import init as _init
from ..parameter import Parameter
from .attention import MultiheadAttention
from .module import Module

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish", "Hardswish",
    "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink",
    "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax", "PReLU", "MultiheadAttention",
]


def _inplace_only(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """``input`` where ``input > threshold``, else ``value``."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class ReLU(Module):
    """``max(input, 0)``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_only(self.inplace)


class RReLU(Module):
    """Randomized leaky ReLU: per-element slopes drawn from ``[lower, upper]`` in training, ``(lower + upper) / 2`` in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(input, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_only(self.inplace)


class _Stateless(Module):
    """An activation without arguments."""

    _fn = ""

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input)


class Sigmoid(_Stateless):
    """The logistic function."""

    _fn = "sigmoid"


class Tanh(_Stateless):
    """The hyperbolic tangent."""

    _fn = "tanh"


class LogSigmoid(_Stateless):
    """``log(sigmoid(input))``."""

    _fn = "logsigmoid"


class Softsign(_Stateless):
    """``input / (1 + |input|)``."""

    _fn = "softsign"


class Tanhshrink(_Stateless):
    """``input - tanh(input)``."""

    _fn = "tanhshrink"


class _Inplace(Module):
    """An activation whose only argument is ``inplace``."""

    __constants__ = ["inplace"]
    _fn = ""
    _show_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_only(self.inplace) if self._show_inplace else ""


class Hardsigmoid(_Inplace):
    """``relu6(input + 3) / 6``."""

    _fn = "hardsigmoid"
    _show_inplace = False


class Hardswish(_Inplace):
    """``input * relu6(input + 3) / 6``."""

    _fn = "hardswish"
    _show_inplace = False


class SiLU(_Inplace):
    """``input * sigmoid(input)``."""

    _fn = "silu"


class Mish(_Inplace):
    """``input * tanh(softplus(input))``."""

    _fn = "mish"


class SELU(_Inplace):
    """Scaled exponential linear unit."""

    _fn = "selu"


class ELU(Module):
    """Exponential linear unit."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """Continuously differentiable exponential linear unit."""

    def forward(self, input: Tensor) -> Tensor:
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """Gated linear unit along ``dim``."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``input`` where ``|input| > lambd``, else 0."""

    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards 0 by ``lambd``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """``input`` where positive, ``negative_slope * input`` elsewhere."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class Softplus(Module):
    """``log(1 + exp(beta * input)) / beta``, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]
    _fn = ""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """``softmax(-input, dim)``."""

    _fn = "softmin"


class Softmax(_SoftmaxBase):
    """``exp(input) / exp(input).sum(dim)``."""

    _fn = "softmax"


class LogSoftmax(_SoftmaxBase):
    """``log(softmax(input, dim))``."""

    _fn = "log_softmax"


class Softmax2d(Module):
    """Softmax over the channel dim (-3) of 3-D or 4-D inputs."""

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learned slope, shared or one per channel."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_api.empty((num_parameters,), device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope set to ``init``."""
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
