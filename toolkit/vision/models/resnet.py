"""ResNet, ResNeXt and Wide ResNet, module for module as ``torchvision.models.resnet``.

Module names and parameter shapes are torchvision's (``conv1``, ``bn1``, ``layer1.0.downsample.0``, ``fc``),
so a torchvision state dict loads with ``strict=True``. Random initialization follows torchvision too:
Kaiming-normal convolutions (fan-out), unit/zero batch norms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import nn
from ...ops.api import flatten
from ...tensor import Tensor
from ._api import register_model

__all__ = ["BasicBlock", "Bottleneck", "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
           "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2"]


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding, no bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution, no bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection (ResNet-18/34)."""

    expansion: int = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided, grouped), 1x1 expand by 4, with a residual connection (ResNet-50 and up)."""

    expansion: int = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """A 7x7 stem, four stages of ``block`` (``layers[i]`` blocks each), global average pooling and ``fc``."""

    def __init__(self, block: type[BasicBlock | Bottleneck], layers: list[int], num_classes: int = 1000,
                 zero_init_residual: bool = False, groups: int = 1, width_per_group: int = 64,
                 replace_stride_with_dilation: list[bool] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # each residual branch starts as zero, so each block starts as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block: type[BasicBlock | Bottleneck], planes: int, blocks: int, stride: int = 1,
                    dilate: bool = False) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = flatten(self.avgpool(x), 1)
        return self.fc(x)


@register_model
def resnet18(**kwargs: Any) -> ResNet:
    """ResNet-18 (11.7M parameters)."""
    return ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)


@register_model
def resnet34(**kwargs: Any) -> ResNet:
    """ResNet-34 (21.8M parameters)."""
    return ResNet(BasicBlock, [3, 4, 6, 3], **kwargs)


@register_model
def resnet50(**kwargs: Any) -> ResNet:
    """ResNet-50 (25.6M parameters)."""
    return ResNet(Bottleneck, [3, 4, 6, 3], **kwargs)


@register_model
def resnet101(**kwargs: Any) -> ResNet:
    """ResNet-101 (44.5M parameters)."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **kwargs)


@register_model
def resnet152(**kwargs: Any) -> ResNet:
    """ResNet-152 (60.2M parameters)."""
    return ResNet(Bottleneck, [3, 8, 36, 3], **kwargs)


@register_model
def resnext50_32x4d(**kwargs: Any) -> ResNet:
    """ResNeXt-50 32x4d: ResNet-50 with 32 groups of width 4 in each bottleneck."""
    return ResNet(Bottleneck, [3, 4, 6, 3], **{"groups": 32, "width_per_group": 4, **kwargs})


@register_model
def resnext101_32x8d(**kwargs: Any) -> ResNet:
    """ResNeXt-101 32x8d."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **{"groups": 32, "width_per_group": 8, **kwargs})


@register_model
def resnext101_64x4d(**kwargs: Any) -> ResNet:
    """ResNeXt-101 64x4d."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **{"groups": 64, "width_per_group": 4, **kwargs})


@register_model
def wide_resnet50_2(**kwargs: Any) -> ResNet:
    """Wide ResNet-50-2: ResNet-50 with bottlenecks twice as wide."""
    return ResNet(Bottleneck, [3, 4, 6, 3], **{"width_per_group": 64 * 2, **kwargs})


@register_model
def wide_resnet101_2(**kwargs: Any) -> ResNet:
    """Wide ResNet-101-2."""
    return ResNet(Bottleneck, [3, 4, 23, 3], **{"width_per_group": 64 * 2, **kwargs})
