"""``toolkit.vision.ops``: the layer blocks torchvision's models are built from (``Conv2dNormActivation``)."""

from .misc import Conv2dNormActivation

__all__ = ["Conv2dNormActivation"]
