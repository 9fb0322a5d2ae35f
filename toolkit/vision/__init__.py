"""``toolkit.vision``: models, datasets, transforms and utilities for images, in the shape of torchvision.

``models`` holds torchvision's classification architectures (ResNet, VGG, AlexNet, MobileNetV2, DenseNet,
SqueezeNet) with torchvision's state-dict keys; ``datasets`` holds ``MNIST``/``FashionMNIST`` (IDX files),
``CIFAR10``/``CIFAR100`` (pickle batches), ``FakeData``, ``ImageFolder`` and ``Digits`` (scikit-learn's
digits), all read from local files (nothing is downloaded); ``transforms`` holds composable image transforms;
``utils`` holds ``make_grid`` and ``save_image``.
"""

from . import datasets, models, ops, transforms, utils

__all__: list = ["datasets", "models", "ops", "transforms", "utils"]
