"""Convolution layers: Conv1d/2d/3d, ConvTranspose1d/2d/3d, initialised as PyTorch's.

``reset_parameters`` draws the weight with ``kaiming_uniform_(a=sqrt(5))`` and
the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), in PyTorch's order, so the
same seed gives the same initial weights.
"""

from __future__ import annotations

import math

from ...autograd import no_grad
from ...ops import api
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(v, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


def _empty(shape, device, dtype) -> Tensor:
    return api.empty(shape, device=device, dtype=dtype)


class _ConvNd(Module):
    """Shared state, checks, initialisation and repr of the convolution layers."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int, bias: bool,
                 padding_mode: str, device=None, dtype=None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            pads = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_empty(shape, device, dtype))
        if bias:
            self.bias = Parameter(_empty((out_channels,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) on the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def _padded(self, input: Tensor) -> Tensor:
        pad = getattr(F, "pad", None)
        if pad is None:
            raise NotImplementedError(f"padding_mode={self.padding_mode!r} needs toolkit.nn.functional.pad")
        return pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C_in, L) or (C_in, L) inputs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 1), _ntuple(stride, 1),
                         padding if isinstance(padding, str) else _ntuple(padding, 1), _ntuple(dilation, 1),
                         False, (0,), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv1d(self._padded(input), weight, bias, self.stride, (0,), self.dilation, self.groups)
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 2), _ntuple(stride, 2),
                         padding if isinstance(padding, str) else _ntuple(padding, 2), _ntuple(dilation, 2),
                         False, (0, 0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv2d(self._padded(input), weight, bias, self.stride, (0, 0), self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv3d(_ConvNd):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 3), _ntuple(stride, 3),
                         padding if isinstance(padding, str) else _ntuple(padding, 3), _ntuple(dilation, 3),
                         False, (0, 0, 0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        if self.padding_mode != "zeros":
            return F.conv3d(self._padded(input), weight, bias, self.stride, (0, 0, 0), self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, *args, **kwargs) -> None:
        if args[10] != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(*args, **kwargs)

    def _output_padding(self, input: Tensor, output_size: list[int] | None, nd: int, stride: list[int],
                        padding: list[int], kernel_size: list[int], dilation: list[int]) -> list[int]:
        """The output_padding that makes the result ``output_size`` (PyTorch's rule and error); the module's
        tuples come in as lists (as in PyTorch) so that a loop can index them in script code."""
        ret: list[int] = []
        if output_size is None:
            for p in self.output_padding:
                ret.append(p)
            return ret
        has_batch = input.dim() == nd + 2
        non_spatial = 2 if has_batch else 1
        if len(output_size) == non_spatial + nd:
            output_size = output_size[non_spatial:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have {nd} or "
                             f"{non_spatial + nd} elements (got {len(output_size)})")
        mins: list[int] = []
        maxs: list[int] = []
        for d in range(nd):
            size = ((input.size(d + non_spatial) - 1) * stride[d] - 2 * padding[d]
                    + dilation[d] * (kernel_size[d] - 1) + 1)
            mins.append(size)
            maxs.append(size + stride[d] - 1)
        for i in range(nd):
            if output_size[i] < mins[i] or output_size[i] > maxs[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {mins} "
                                 f"to {maxs} (for an input of {input.size()[non_spatial:]})")
        for d in range(nd):
            ret.append(output_size[d] - mins[d])
        return ret


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution (the gradient of Conv1d with respect to its input)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 1), _ntuple(stride, 1),
                         _ntuple(padding, 1), _ntuple(dilation, 1), True, _ntuple(output_padding, 1), groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size, 1, self.stride, self.padding, self.kernel_size,
                                  self.dilation)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution (the gradient of Conv2d with respect to its input)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 2), _ntuple(stride, 2),
                         _ntuple(padding, 2), _ntuple(dilation, 2), True, _ntuple(output_padding, 2), groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size, 2, self.stride, self.padding, self.kernel_size,
                                  self.dilation)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                  self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution (the gradient of Conv3d with respect to its input)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0,
                 groups: int = 1, bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None,
                 dtype=None) -> None:
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, 3), _ntuple(stride, 3),
                         _ntuple(padding, 3), _ntuple(dilation, 3), True, _ntuple(output_padding, 3), groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: list[int] | None = None) -> Tensor:
        op = self._output_padding(input, output_size, 3, self.stride, self.padding, self.kernel_size,
                                  self.dilation)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                  self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input (dim 1, or dim 0 unbatched); weight and bias then materialize."""

    _num_spatial_dims = 1

    def _lazy_init(self, out_channels: int, bias: bool, device, dtype) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        """The convolution's initialization, once the shapes are known."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        unbatched = self._num_spatial_dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args, **kwargs) -> None:
        """Materialize weight ((out, in/groups, *k), or (in, out/groups, *k) transposed) and bias."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                             *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                             *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()


def _lazy_conv(name: str, base: type, nd: int, transposed: bool) -> type:
    """``Lazy<base>``: ``base``'s constructor without ``in_channels``; it becomes ``base`` after one call."""
    if transposed:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, output_padding=0, groups: int = 1,
                     bias: bool = True, dilation=1, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                          padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)
            self._register_lazy_hooks()
    else:
        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                     bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
            base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self._lazy_init(out_channels, bias, device, dtype)
            self._register_lazy_hooks()
    doc = f"A {base.__name__} whose ``in_channels`` comes from its first input; it then becomes a {base.__name__}."
    cls = type(name, (_LazyConvXdMixin, base), {"__init__": __init__, "cls_to_become": base,
                                                 "_num_spatial_dims": nd, "__doc__": doc,
                                                 "__module__": __name__, "__qualname__": name})
    return cls


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, 1, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, 2, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, 3, True)
