"""DenseNet 121/161/169/201, module for module as ``torchvision.models.densenet``.

``features`` holds ``conv0``/``norm0``/``relu0``/``pool0``, then ``denseblock1..4`` (each a ``ModuleDict`` of
``denselayerN``) with ``transition1..3`` between them, then ``norm5``; state-dict keys are torchvision's.

The checkpoint files torchvision publishes for DenseNet predate its current module names
(``denselayer1.norm.1.weight`` for ``denselayer1.norm1.weight``); torchvision renames them when it loads its
weights, and ``DenseNet.load_state_dict`` does the same, so those files load as they are.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ... import nn
from ...nn import functional as F
from ...ops.api import cat, flatten
from ...tensor import Tensor
from ._api import register_model

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]

_OLD_KEY = re.compile(r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")


class _DenseLayer(nn.Module):
    """BN-ReLU-1x1 conv to ``bn_size * growth_rate`` channels, then BN-ReLU-3x3 conv to ``growth_rate``."""

    def __init__(self, num_input_features: int, growth_rate: int, bn_size: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs: list[Tensor]) -> Tensor:
        """The bottleneck: BN-ReLU-conv1 of all previous feature maps, concatenated along channels."""
        return self.conv1(self.relu1(self.norm1(cat(inputs, 1))))

    def forward(self, input: Tensor | list[Tensor]) -> Tensor:
        prev_features = [input] if isinstance(input, Tensor) else input
        bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    """``num_layers`` dense layers, each fed the concatenation of the block input and all earlier outputs."""

    _version = 2

    def __init__(self, num_layers: int, num_input_features: int, bn_size: int, growth_rate: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate, bn_size=bn_size,
                                drop_rate=drop_rate, memory_efficient=memory_efficient)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, init_features: Tensor) -> Tensor:
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return cat(features, 1)


class _Transition(nn.Sequential):
    """BN-ReLU-1x1 conv halving the channels, then a 2x2 average pool."""

    def __init__(self, num_input_features: int, num_output_features: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """Densely connected network: a stem, dense blocks of ``block_config`` layers joined by transitions, a
    final batch norm, ReLU, global average pooling and a linear classifier."""

    def __init__(self, growth_rate: int = 32, block_config: tuple[int, int, int, int] = (6, 12, 24, 16),
                 num_init_features: int = 64, bn_size: int = 4, drop_rate: float = 0, num_classes: int = 1000,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers=num_layers, num_input_features=num_features, bn_size=bn_size,
                                growth_rate=growth_rate, drop_rate=drop_rate, memory_efficient=memory_efficient)
            self.features.add_module(f"denseblock{i + 1}", block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = _Transition(num_input_features=num_features, num_output_features=num_features // 2)
                self.features.add_module(f"transition{i + 1}", trans)
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.features(x), inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1))
        return self.classifier(flatten(out, 1))

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False):
        """``Module.load_state_dict``, after renaming the old keys of torchvision's published checkpoints."""
        renamed = OrderedDict()
        for key, value in state_dict.items():
            match = _OLD_KEY.match(key)
            renamed[match.group(1) + match.group(2) if match else key] = value
        metadata = getattr(state_dict, "_metadata", None)
        if metadata is not None:
            renamed._metadata = metadata
        return super().load_state_dict(renamed, strict=strict, assign=assign)


def _densenet(growth_rate: int, block_config: tuple[int, int, int, int], num_init_features: int,
              **kwargs: Any) -> DenseNet:
    return DenseNet(growth_rate, block_config, num_init_features, **kwargs)


@register_model
def densenet121(**kwargs: Any) -> DenseNet:
    """DenseNet-121 (8.0M parameters)."""
    return _densenet(32, (6, 12, 24, 16), 64, **kwargs)


@register_model
def densenet161(**kwargs: Any) -> DenseNet:
    """DenseNet-161 (growth rate 48)."""
    return _densenet(48, (6, 12, 36, 24), 96, **kwargs)


@register_model
def densenet169(**kwargs: Any) -> DenseNet:
    """DenseNet-169."""
    return _densenet(32, (6, 12, 32, 32), 64, **kwargs)


@register_model
def densenet201(**kwargs: Any) -> DenseNet:
    """DenseNet-201."""
    return _densenet(32, (6, 12, 48, 32), 64, **kwargs)
