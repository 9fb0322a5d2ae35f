"""VGG 11/13/16/19, with and without batch norm, module for module as ``torchvision.models.vgg``.

``features`` is one ``Sequential`` of convolutions, (batch norms,) ReLUs and max pools built from a
configuration list, so the state-dict keys (``features.0.weight``, ``classifier.6.bias``) are torchvision's.
"""

from __future__ import annotations

from typing import Any

from ... import nn
from ...ops.api import flatten
from ...tensor import Tensor
from ._api import register_model

__all__ = ["VGG", "make_layers", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
           "vgg19_bn"]


class VGG(nn.Module):
    """``features``, a 7x7 adaptive average pool and a three-layer classifier with dropout."""

    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def make_layers(cfg: list[str | int], batch_norm: bool = False) -> nn.Sequential:
    """``features`` from a configuration: an int is a 3x3 convolution to that many channels, ``"M"`` a max pool."""
    layers: list[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            v = int(v)
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


cfgs: dict[str, list[str | int]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


def _vgg(cfg: str, batch_norm: bool, **kwargs: Any) -> VGG:
    return VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)


@register_model
def vgg11(**kwargs: Any) -> VGG:
    """VGG-11 (configuration "A")."""
    return _vgg("A", False, **kwargs)


@register_model
def vgg11_bn(**kwargs: Any) -> VGG:
    """VGG-11 with batch normalization."""
    return _vgg("A", True, **kwargs)


@register_model
def vgg13(**kwargs: Any) -> VGG:
    """VGG-13 (configuration "B")."""
    return _vgg("B", False, **kwargs)


@register_model
def vgg13_bn(**kwargs: Any) -> VGG:
    """VGG-13 with batch normalization."""
    return _vgg("B", True, **kwargs)


@register_model
def vgg16(**kwargs: Any) -> VGG:
    """VGG-16 (configuration "D", 138M parameters)."""
    return _vgg("D", False, **kwargs)


@register_model
def vgg16_bn(**kwargs: Any) -> VGG:
    """VGG-16 with batch normalization."""
    return _vgg("D", True, **kwargs)


@register_model
def vgg19(**kwargs: Any) -> VGG:
    """VGG-19 (configuration "E")."""
    return _vgg("E", False, **kwargs)


@register_model
def vgg19_bn(**kwargs: Any) -> VGG:
    """VGG-19 with batch normalization."""
    return _vgg("E", True, **kwargs)
