"""Layer blocks the model builders share, as ``torchvision.ops.misc``."""

from __future__ import annotations

from collections.abc import Callable

from ... import nn

__all__ = ["Conv2dNormActivation"]


class Conv2dNormActivation(nn.Sequential):
    """``Conv2d``, then ``norm_layer`` (``BatchNorm2d`` by default), then ``activation_layer`` (``ReLU``).

    A ``Sequential`` so the state-dict keys are ``0.weight`` (conv), ``1.weight``/``1.running_mean`` (norm),
    as in torchvision. ``padding`` defaults to "same" for odd kernels; the conv has a bias only without a norm.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1,
                 padding: int | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU, dilation: int = 1,
                 inplace: bool | None = True, bias: bool | None = None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers: list[nn.Module] = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels
