"""``Digits``: the 8x8 handwritten digits that scikit-learn ships (1,797 images, 10 classes), MNIST-shaped.

The images (values 0..16, from the UCI "Optical Recognition of Handwritten Digits" set) are offered at
8x8, or resized to 28x28 with bilinear interpolation so that MNIST models (the seed's ``Net``) take them
unchanged. Either way pixel values are scaled to 0..255 and stored as uint8, like MNIST, so ``ToTensor``
gives values in [0, 1].

The train/test split is deterministic: a permutation of the 1,797 indices drawn from
``numpy.random.default_rng(split_seed)``; the first ``train_size`` indices (1,500 by default) form the
training set and the remaining 297 the test set, each kept in the original order.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from ...factories import from_numpy
from ...tensor import Tensor
from ..transforms.functional import linear_weights
from .mnist import _GrayImages

__all__ = ["Digits"]

NUM_SAMPLES = 1797
_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _load(size: int) -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 images as uint8 ``(N, size, size)`` and labels as int64, loaded once per process."""
    hit = _cache.get(size)
    if hit is not None:
        return hit
    from sklearn.datasets import load_digits  # optional: scikit-learn

    bunch = load_digits()
    images = np.asarray(bunch.images, dtype=np.float64)  # (N, 8, 8), values 0..16
    labels = np.asarray(bunch.target, dtype=np.int64)
    if size != 8:
        wh = linear_weights(8, size, antialias=True)
        images = wh @ images @ wh.T
    data = np.clip(np.rint(images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
    _cache[size] = (data, labels)
    return data, labels


class Digits(_GrayImages):
    """scikit-learn's handwritten digits as an MNIST-like dataset of ``(PIL image 'L', int label)`` samples.

    Args:
        root: accepted for the torchvision dataset signature and unused (scikit-learn ships the data).
        train: the training split (``train_size`` images) or the test split (the rest).
        transform, target_transform: applied to the image and the label.
        download: accepted and unused; the data is always available.
        size: 8 for the original images, 28 for MNIST-sized ones (the default).
        train_size: number of training images (an int), or their fraction of the 1,797 (a float in (0, 1)).
        split_seed: seed of the permutation that assigns images to the splits.
    """

    def __init__(self, root: str | os.PathLike | None = None, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False, size: int = 28,
                 train_size: int | float = 1500, split_seed: int = 0) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)

        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"Digits: size should be a positive int (8 for the original images, 28 for MNIST's "
                             f"size), got {size!r}")
        if isinstance(train_size, float):
            if not 0.0 < train_size < 1.0:
                raise ValueError(f"Digits: a float train_size should be in (0, 1), got {train_size}")
            train_size = int(round(train_size * NUM_SAMPLES))
        if not isinstance(train_size, int) or not 0 < train_size < NUM_SAMPLES:
            raise ValueError(f"Digits: train_size should be between 1 and {NUM_SAMPLES - 1}, got {train_size!r}")
        self.train = train
        self.size = size
        self.train_size = train_size
        self.split_seed = split_seed
        data, labels = _load(size)
        perm = np.random.default_rng(split_seed).permutation(NUM_SAMPLES)
        index = np.sort(perm[:train_size] if train else perm[train_size:])
        self.indices = index
        self.data: Tensor = from_numpy(np.ascontiguousarray(data[index]))
        self.targets: Tensor = from_numpy(np.ascontiguousarray(labels[index]))

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}\nSize: {self.size}x{self.size}"
