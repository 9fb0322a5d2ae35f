"""``Identity``, ``Linear`` and ``Bilinear`` layers, initialised as PyTorch's ``reset_parameters``."""

from __future__ import annotations

import math

import toolkit as api

from ...autograd import no_grad
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear"]


def _empty(shape, device, dtype) -> Tensor:
    return api.empty(shape, device=device, dtype=dtype)


class Identity(Module):
    """Returns its input; any constructor arguments are accepted and ignored."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``W`` of shape (out_features, in_features)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) on the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention: a plain Linear under PyTorch's name (checkpoints name
    ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``)."""


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last dim of its first input; it then becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """Linear's initialization, once the shapes are known."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """``in_features = input.shape[-1]``; materialize and initialize weight and bias."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``A`` of shape (out_features, in1_features, in2_features)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) on weight and bias."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
