"""``toolkit.vision``: datasets and transforms for images, in the shape of torchvision.

``transforms`` holds composable image transforms (``ToTensor``, ``Normalize``, ``Resize``, crops, flips);
``datasets`` holds ``Digits`` (scikit-learn's handwritten digits), ``MNIST`` (IDX files from a local folder)
and ``ImageFolder``.
"""

from . import datasets, transforms

__all__: list = ["datasets", "transforms"]
