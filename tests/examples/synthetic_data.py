"""Small data sets in the exact on-disk formats the PyTorch examples read, so they run with nothing downloaded.

Each writer takes the folder to write into and a seeded ``numpy.random.Generator``; sizes are the smallest the
programs accept (the graph examples split their nodes at fixed indices, so Cora needs more than 1,600 nodes).
"""

from __future__ import annotations

import os
import struct

import numpy as np
from PIL import Image

WORDS = ("the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
         "they you were her she there one all we their been has had more when will would who so no").split()


def write_idx(path: str, array: np.ndarray) -> None:
    """An IDX file (LeCun's format): magic ``0x0000TTNN`` with type 0x08 (uint8), big-endian int32 sizes, data."""
    array = np.ascontiguousarray(array, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x0800 | array.ndim))
        f.write(struct.pack(f">{array.ndim}I", *array.shape))
        f.write(array.tobytes())


def write_mnist(root: str, rng: np.random.Generator, n_train: int = 128, n_test: int = 64) -> None:
    """``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``: 28x28 digits, every class present."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = np.arange(n) % 10
        rng.shuffle(labels)
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        write_idx(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), images)
        write_idx(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), labels)


def write_jpeg(path: str, rng: np.random.Generator, size: tuple[int, int]) -> None:
    """A random RGB JPEG of ``size`` (width, height)."""
    pixels = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels, "RGB").save(path, "JPEG")


def write_image_folder(root: str, rng: np.random.Generator, classes: tuple[str, ...] = ("n01", "n02"),
                       per_class: int = 2, size: tuple[int, int] = (40, 32)) -> None:
    """An ImageFolder tree: ``root/<class>/<i>.jpg``."""
    for name in classes:
        os.makedirs(os.path.join(root, name), exist_ok=True)
        for i in range(per_class):
            write_jpeg(os.path.join(root, name, f"{i}.jpg"), rng, size)


def write_bsds300(root: str, rng: np.random.Generator, n_train: int = 4, n_test: int = 2) -> None:
    """``root/dataset/BSDS300/images/{train,test}/<id>.jpg``, as the Berkeley archive unpacks (481x321 or 321x481
    in the real set; any size of at least the 256-pixel crop works)."""
    for split, n in (("train", n_train), ("test", n_test)):
        folder = os.path.join(root, "dataset", "BSDS300", "images", split)
        os.makedirs(folder, exist_ok=True)
        for i in range(n):
            write_jpeg(os.path.join(folder, f"{16077 + i}.jpg"), rng, (260, 258))


def write_wikitext(folder: str, rng: np.random.Generator, lines: tuple[int, int, int] = (60, 20, 20)) -> None:
    """``folder/{train,valid,test}.txt``: lines of words, as the WikiText-2 tokens files."""
    os.makedirs(folder, exist_ok=True)
    for name, n in zip(("train", "valid", "test"), lines):
        with open(os.path.join(folder, f"{name}.txt"), "w", encoding="utf8") as f:
            for _ in range(n):
                f.write(" " + " ".join(rng.choice(WORDS, size=int(rng.integers(8, 20)))) + " \n")


def write_cora(folder: str, rng: np.random.Generator, nodes: int = 1700, features: int = 24, edges: int = 4000,
               classes: int = 7) -> None:
    """``folder/cora.content`` (``<paper id> <0/1 word features...> <class label>`` per line) and
    ``folder/cora.cites`` (``<cited paper id> <citing paper id>`` per line), with paper ids that are not
    positions, as in the real Cora."""
    os.makedirs(folder, exist_ok=True)
    ids = rng.choice(np.arange(10, 10 * nodes * 10), size=nodes, replace=False)
    words = rng.random((nodes, features)) < 0.2
    labels = [f"Class_{c}" for c in rng.integers(0, classes, size=nodes)]
    with open(os.path.join(folder, "cora.content"), "w") as f:
        for i in range(nodes):
            f.write("\t".join([str(ids[i]), *("1" if w else "0" for w in words[i]), labels[i]]) + "\n")
    pairs = rng.integers(0, nodes, size=(edges, 2))
    with open(os.path.join(folder, "cora.cites"), "w") as f:
        for a, b in pairs:
            f.write(f"{ids[a]}\t{ids[b]}\n")
