"""``MNIST`` and ``FashionMNIST`` from the IDX files in ``root/<Name>/raw``, as torchvision reads them.

The IDX format (LeCun's "SN3 Pascal Vincent" files): a big-endian magic number ``0x0000TTNN`` (``TT`` the
element type, ``NN`` the number of dimensions), ``NN`` big-endian int32 sizes, then the data. Images are
``0x00000803`` (uint8, 3 dimensions), labels ``0x00000801``. Files may be gzip-compressed (``.gz``).
Nothing is downloaded: place the four files under ``root/MNIST/raw``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core.dtypes import uint8
from ...factories import from_numpy
from ...tensor import Tensor
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "read_image_file", "read_label_file", "read_sn3_pascalvincent_tensor"]

# IDX type code -> big-endian numpy dtype
_IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        import gzip  # lazy: gzip loads only when MNIST files are read

        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise RuntimeError(f"{path}: cannot decompress the gzip file ({e})") from None
    return data


def read_sn3_pascalvincent_tensor(path: str, strict: bool = True) -> Tensor:
    """Read an IDX file into a tensor, checking the magic number and that the data matches the header."""
    data = _read_bytes(path)
    if len(data) < 4:
        raise RuntimeError(f"{path}: file of {len(data)} bytes is too short to be an IDX file")
    magic = int.from_bytes(data[0:4], "big")
    nd, ty = magic % 256, magic // 256
    if magic >> 16 != 0 or ty not in _IDX_TYPES or not 1 <= nd <= 3:
        raise RuntimeError(
            f"{path}: bad magic number {magic:#010x}; an IDX file starts with 0x0000TTNN where TT is an element type "
            "(0x08 uint8 ... 0x0e float64) and NN the number of dimensions (1 to 3)"
        )
    header = 4 * (nd + 1)
    if len(data) < header:
        raise RuntimeError(f"{path}: truncated header: {nd} dimensions need {header} bytes, the file has {len(data)}")
    shape = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(nd)]
    dt = _IDX_TYPES[ty]
    expected = math.prod(shape) * dt.itemsize
    actual = len(data) - header
    if actual != expected and (strict or actual < expected):
        raise RuntimeError(
            f"{path}: the header declares shape {tuple(shape)} ({expected} bytes of {dt.name} data) but the file "
            f"holds {actual} bytes of data (truncated or corrupt file?)"
        )
    arr = np.frombuffer(data, dtype=dt, count=math.prod(shape), offset=header).astype(dt.newbyteorder("="))
    return from_numpy(arr.reshape(shape))


def _expect(path: str, x: Tensor, ndim: int, what: str) -> None:
    if x.dtype != uint8:
        raise TypeError(f"{path}: {what} should be of dtype uint8 (IDX type 0x08), got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{path}: {what} should have {ndim} dimension{'s' if ndim > 1 else ''}, got {x.ndim}")


def read_label_file(path: str) -> Tensor:
    """Labels (magic 0x00000801) as an int64 tensor."""
    x = read_sn3_pascalvincent_tensor(path, strict=True)
    _expect(path, x, 1, "a label file")
    return x.long()


def read_image_file(path: str) -> Tensor:
    """Images (magic 0x00000803) as a uint8 ``(N, H, W)`` tensor."""
    x = read_sn3_pascalvincent_tensor(path, strict=True)
    _expect(path, x, 3, "an image file")
    return x


class _GrayImages(VisionDataset):
    """A dataset of uint8 ``(N, H, W)`` images in ``data`` and int64 labels in ``targets``, sampled as
    ``(PIL image 'L', int label)`` before transforms (MNIST and the MNIST-shaped ``Digits``)."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]
    train: bool

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {_class: i for i, _class in enumerate(self.classes)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        from PIL import Image  # optional: PIL

        img = Image.fromarray(self.data.numpy()[index])
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class MNIST(_GrayImages):
    """The MNIST digits from ``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]``.

    Samples are ``(PIL image 'L', int label)`` before transforms, as in torchvision.
    """

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        self.data, self.targets = self._load_data()

    def _file_names(self) -> list[str]:
        prefix = "train" if self.train else "t10k"
        return [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]

    def _path(self, name: str) -> str | None:
        for candidate in (name, name + ".gz"):
            path = os.path.join(self.raw_folder, candidate)
            if os.path.isfile(path):
                return path
        return None

    def _find(self, name: str) -> str:
        path = self._path(name)
        if path is None:
            raise RuntimeError(
                f"{self.__class__.__name__}: dataset not found: {os.path.join(self.raw_folder, name)} (or {name}.gz) "
                f"does not exist. toolkit does not download datasets: place the IDX files "
                f"{', '.join(self._file_names())} (optionally gzipped, .gz) in {self.raw_folder}"
            )
        return path

    def _check_exists(self) -> bool:
        return all(self._path(name) is not None for name in self._file_names())

    def download(self) -> None:
        """Nothing to fetch when the files are in place (as torchvision, which then skips the download);
        otherwise a clear error saying where to put them, since toolkit does not download."""
        for name in self._file_names():
            self._find(name)

    def _load_data(self) -> tuple[Tensor, Tensor]:
        image_name, label_name = self._file_names()
        image_path, label_path = self._find(image_name), self._find(label_name)
        data = read_image_file(image_path)
        targets = read_label_file(label_path)
        if data.shape[0] != targets.shape[0]:
            raise RuntimeError(
                f"{self.__class__.__name__}: {image_path} holds {data.shape[0]} images but {label_path} holds "
                f"{targets.shape[0]} labels"
            )
        return data, targets

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "processed")


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, in MNIST's file format, from ``root/FashionMNIST/raw``."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
