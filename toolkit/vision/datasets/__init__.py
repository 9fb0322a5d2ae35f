"""Datasets in torchvision's shapes: ``Digits`` (scikit-learn's digits), ``MNIST`` and ``FashionMNIST`` (local IDX
files), ``CIFAR10`` and ``CIFAR100`` (local pickle batches), ``FakeData``, ``ImageFolder``. Nothing is downloaded."""

from .cifar import CIFAR10, CIFAR100
from .digits import Digits
from .fakedata import FakeData
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from .mnist import MNIST, FashionMNIST
from .vision import StandardTransform, VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "IMG_EXTENSIONS", "DatasetFolder", "Digits", "FakeData", "FashionMNIST",
           "ImageFolder", "MNIST", "StandardTransform", "VisionDataset", "default_loader", "pil_loader"]
