"""CIFAR-10 and CIFAR-100 from the python pickle batches, as torchvision reads them.

``root/cifar-10-batches-py`` holds ``data_batch_1`` ... ``data_batch_5``, ``test_batch`` and
``batches.meta``; ``root/cifar-100-python`` holds ``train``, ``test`` and ``meta``. Each batch is a pickled
dict: ``data`` a uint8 ``(N, 3072)`` array (1024 red, then green, then blue values, row-major), ``labels``
(CIFAR-10) or ``fine_labels`` (CIFAR-100) a list of ints. The pickles are read with an unpickler that only
rebuilds numpy arrays (``_safe_pickle``), never arbitrary objects. Nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._safe_pickle import load_numpy_pickle
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]


def _not_downloadable(cls_name: str, folder: str, files: list[str], source: str) -> RuntimeError:
    return RuntimeError(
        f"{cls_name}: dataset not found: {folder} should hold {', '.join(files)}. toolkit does not download "
        f"datasets: get the archive ({source}), extract it, and pass its parent folder as root"
    )


class CIFAR10(VisionDataset):
    """CIFAR-10: 50,000 training and 10,000 test 32x32 RGB images in 10 classes.

    ``data`` is a uint8 ``(N, 32, 32, 3)`` numpy array and ``targets`` a list of ints, as in torchvision;
    samples are ``(PIL image 'RGB', int label)`` before transforms.
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    train_list = [["data_batch_1", "c99cafc152244af753f735de768cd75f"],
                  ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
                  ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
                  ["data_batch_4", "634d18415352ddfa80567beed471001a"],
                  ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"]]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise self._missing()
        data, self.targets = [], []
        for file_name, _ in self.train_list if self.train else self.test_list:
            path = os.path.join(self._folder, file_name)
            entry = load_numpy_pickle(path)
            if not isinstance(entry, dict) or "data" not in entry:
                raise RuntimeError(f"{path}: expected a pickled dict with a 'data' array, got {type(entry).__name__}")
            key = "labels" if "labels" in entry else "fine_labels"
            if key not in entry:
                raise RuntimeError(f"{path}: the batch has no 'labels' or 'fine_labels'")
            batch = np.asarray(entry["data"], dtype=np.uint8)
            if batch.ndim != 2 or batch.shape[1] != 3 * 32 * 32 or batch.shape[0] != len(entry[key]):
                raise RuntimeError(f"{path}: 'data' should be (N, 3072) with N = {len(entry[key])} labels, "
                                   f"got shape {batch.shape}")
            data.append(batch)
            self.targets.extend(int(t) for t in entry[key])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))  # HWC, as PIL wants
        self._load_meta()

    @property
    def _folder(self) -> str:
        return os.path.join(self.root, self.base_folder)

    def _files(self) -> list[str]:
        return [name for name, _ in self.train_list + self.test_list] + [self.meta["filename"]]

    def _missing(self) -> RuntimeError:
        return _not_downloadable(type(self).__name__, self._folder, self._files(), self.url)

    def _load_meta(self) -> None:
        path = os.path.join(self._folder, self.meta["filename"])
        if not os.path.isfile(path):
            raise self._missing()
        data = load_numpy_pickle(path)
        self.classes = list(data[self.meta["key"]])
        self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        from PIL import Image  # optional: PIL

        img, target = Image.fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        """Whether every file is present (the files' checksums are not compared, so that copies re-pickled
        by other tools load too)."""
        return all(os.path.isfile(os.path.join(self._folder, name)) for name in self._files())

    def download(self) -> None:
        """Nothing to fetch when the files are in place (as torchvision, which then skips the download);
        otherwise a clear error, since toolkit does not download."""
        if not self._check_integrity():
            raise self._missing()

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: as CIFAR-10 with 100 fine classes (``fine_labels``), from ``root/cifar-100-python``."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
