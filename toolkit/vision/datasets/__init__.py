"""Datasets in torchvision's shapes: ``Digits`` (scikit-learn's digits), ``MNIST`` (local IDX files), ``ImageFolder``."""

from .digits import Digits
from .folder import IMG_EXTENSIONS, DatasetFolder, ImageFolder, default_loader, pil_loader
from .mnist import MNIST, FashionMNIST
from .vision import StandardTransform, VisionDataset

__all__ = ["IMG_EXTENSIONS", "DatasetFolder", "Digits", "FashionMNIST", "ImageFolder", "MNIST", "StandardTransform",
           "VisionDataset", "default_loader", "pil_loader"]
