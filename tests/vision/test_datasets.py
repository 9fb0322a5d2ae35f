"""toolkit.vision.datasets: Digits from scikit-learn, MNIST from IDX files, ImageFolder from a tree of PNGs."""

from __future__ import annotations

import gzip
import os
import pickle

import numpy as np
import pytest
from PIL import Image
from sklearn.datasets import load_digits

import toolkit
from toolkit.vision import datasets
from toolkit.vision import transforms as T


# ------------------------------------------------------------------------------------------- Digits
@pytest.fixture(scope="module")
def sk_digits():
    return load_digits()


def test_digits_split_sizes_and_partition():
    train, test = datasets.Digits(), datasets.Digits(train=False)
    assert len(train) == 1500 and len(test) == 297
    assert set(train.indices).isdisjoint(test.indices)
    assert sorted(np.concatenate([train.indices, test.indices])) == list(range(1797))
    again = datasets.Digits()
    np.testing.assert_array_equal(again.indices, train.indices)
    other = datasets.Digits(split_seed=1)
    assert not np.array_equal(other.indices, train.indices)
    assert len(datasets.Digits(train_size=0.5)) == 898 and len(datasets.Digits(train_size=0.5, train=False)) == 899


def test_digits_8x8_values_match_sklearn(sk_digits):
    d = datasets.Digits(size=8, train=False)
    assert d.data.shape == (297, 8, 8) and d.data.dtype == toolkit.uint8
    expected = np.rint(sk_digits.images[d.indices] * 255 / 16).astype(np.uint8)
    np.testing.assert_array_equal(d.data.numpy(), expected)
    np.testing.assert_array_equal(d.targets.numpy(), sk_digits.target[d.indices])
    assert d.targets.dtype == toolkit.int64


def test_digits_28x28(sk_digits):
    d = datasets.Digits(size=28)
    assert d.data.shape == (1500, 28, 28)
    data = d.data.numpy()
    assert data.min() == 0 and data.max() == 255
    img, label = d[0]
    assert isinstance(img, Image.Image) and img.mode == "L" and img.size == (28, 28)
    assert isinstance(label, int) and label == int(sk_digits.target[d.indices[0]])
    # bilinear upsampling of the 8x8 image: Pillow's own bilinear resize agrees to within rounding
    small = Image.fromarray(np.rint(sk_digits.images[d.indices[0]] * 255 / 16).astype(np.uint8))
    pil = np.asarray(small.resize((28, 28), Image.Resampling.BILINEAR)).astype(int)
    assert np.abs(pil - np.asarray(img).astype(int)).max() <= 2


def test_digits_getitem_with_transforms():
    d = datasets.Digits(transform=T.ToTensor(), target_transform=lambda y: y + 100)
    x, y = d[5]
    assert x.shape == (1, 28, 28) and x.dtype == toolkit.float32
    assert 0.0 <= float(x.min()) and float(x.max()) <= 1.0
    assert 100 <= y < 110
    assert sorted(set(d.targets.tolist())) == list(range(10))
    assert d.classes[3] == "3 - three" and d.class_to_idx["9 - nine"] == 9


def test_digits_pickles_for_workers():
    d = datasets.Digits(size=8, transform=T.ToTensor())
    d2 = pickle.loads(pickle.dumps(d))
    np.testing.assert_array_equal(d2[7][0].numpy(), d[7][0].numpy())


def test_digits_bad_args():
    with pytest.raises(ValueError, match="size should be a positive int"):
        datasets.Digits(size=0)
    with pytest.raises(ValueError, match="train_size should be between 1 and 1796"):
        datasets.Digits(train_size=1797)
    with pytest.raises(ValueError, match=r"a float train_size should be in \(0, 1\)"):
        datasets.Digits(train_size=1.5)


# ------------------------------------------------------------------------------------------- MNIST
def _idx(arr: np.ndarray, type_code: int = 0x08) -> bytes:
    header = bytes([0, 0, type_code, arr.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def _write_mnist(root, n_train=5, n_test=3, gz=False, name="MNIST"):
    raw = root / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    out = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        for kind, arr in (("images-idx3", images), ("labels-idx1", labels)):
            data = _idx(arr)
            path = raw / f"{prefix}-{kind}-ubyte"
            if gz:
                path = path.with_name(path.name + ".gz")
                data = gzip.compress(data)
            path.write_bytes(data)
        out[prefix] = (images, labels)
    return out


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_reads_idx_files(tmp_path, gz):
    written = _write_mnist(tmp_path, gz=gz)
    train = datasets.MNIST(str(tmp_path), train=True)
    test = datasets.MNIST(tmp_path, train=False, transform=T.ToTensor())
    assert len(train) == 5 and len(test) == 3
    np.testing.assert_array_equal(train.data.numpy(), written["train"][0])
    assert train.targets.dtype == toolkit.int64 and train.data.dtype == toolkit.uint8
    np.testing.assert_array_equal(test.targets.numpy(), written["t10k"][1])
    img, label = train[2]
    assert isinstance(img, Image.Image) and img.mode == "L"
    np.testing.assert_array_equal(np.asarray(img), written["train"][0][2])
    assert label == int(written["train"][1][2]) and isinstance(label, int)
    x, _ = test[0]
    np.testing.assert_allclose(x.numpy()[0], written["t10k"][0][0] / np.float32(255))
    assert train.raw_folder == os.path.join(str(tmp_path), "MNIST", "raw")
    assert train.class_to_idx["1 - one"] == 1
    assert repr(test) == (f"Dataset MNIST\n    Number of datapoints: 3\n    Root location: {tmp_path}\n    Split: Test\n"
                          "    StandardTransform\nTransform: ToTensor()")


def test_fashion_mnist_folder(tmp_path):
    _write_mnist(tmp_path, name="FashionMNIST")
    d = datasets.FashionMNIST(tmp_path)
    assert len(d) == 5 and d.classes[9] == "Ankle boot"


def test_mnist_bad_magic(tmp_path):
    _write_mnist(tmp_path)
    path = tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte"
    data = bytearray(path.read_bytes())
    data[0:4] = b"\x12\x34\x08\x03"
    path.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match=r"train-images-idx3-ubyte: bad magic number 0x12340803"):
        datasets.MNIST(tmp_path)


def test_mnist_wrong_kind_of_file(tmp_path):
    _write_mnist(tmp_path)
    raw = tmp_path / "MNIST" / "raw"
    (raw / "train-images-idx3-ubyte").write_bytes(_idx(np.zeros(4, np.uint8)))
    with pytest.raises(ValueError, match="an image file should have 3 dimensions, got 1"):
        datasets.MNIST(tmp_path)
    (raw / "train-images-idx3-ubyte").write_bytes(_idx(np.zeros((2, 2, 2), np.int16), 0x0B))
    with pytest.raises(TypeError, match="should be of dtype uint8"):
        datasets.MNIST(tmp_path)


def test_mnist_truncated_and_mismatched(tmp_path):
    _write_mnist(tmp_path)
    raw = tmp_path / "MNIST" / "raw"
    full = (raw / "train-images-idx3-ubyte").read_bytes()
    (raw / "train-images-idx3-ubyte").write_bytes(full[:-10])
    with pytest.raises(RuntimeError, match=r"declares shape \(5, 28, 28\) \(3920 bytes of uint8 data\) but the file "
                                           r"holds 3910 bytes"):
        datasets.MNIST(tmp_path)
    (raw / "train-images-idx3-ubyte").write_bytes(full[:6])
    with pytest.raises(RuntimeError, match="truncated header"):
        datasets.MNIST(tmp_path)
    (raw / "train-images-idx3-ubyte").write_bytes(full)
    (raw / "train-labels-idx1-ubyte").write_bytes(_idx(np.zeros(4, np.uint8)))
    with pytest.raises(RuntimeError, match="holds 5 images but .* holds 4 labels"):
        datasets.MNIST(tmp_path)


def test_mnist_missing_files_and_download(tmp_path):
    with pytest.raises(RuntimeError, match="dataset not found: .*train-images-idx3-ubyte"):
        datasets.MNIST(tmp_path)
    with pytest.raises(RuntimeError, match=r"does not download datasets: place the IDX files .* in .*MNIST.raw"):
        datasets.MNIST(tmp_path, download=True)
    # with the files in place, download=True loads them, as torchvision does when they are already there
    written = _write_mnist(tmp_path, gz=True)
    d = datasets.MNIST(tmp_path, download=True, train=False)
    np.testing.assert_array_equal(d.data.numpy(), written["t10k"][0])
    _write_mnist(tmp_path, name="FashionMNIST")
    assert len(datasets.FashionMNIST(tmp_path, download=True)) == 5


def test_read_idx_other_types(tmp_path):
    from toolkit.vision.datasets.mnist import read_sn3_pascalvincent_tensor

    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    p = tmp_path / "x.idx"
    p.write_bytes(_idx(a, 0x0C))
    t = read_sn3_pascalvincent_tensor(str(p))
    assert t.dtype == toolkit.int32
    np.testing.assert_array_equal(t.numpy(), a)
    f = np.linspace(0, 1, 5)
    p.write_bytes(_idx(f, 0x0E))
    np.testing.assert_array_equal(read_sn3_pascalvincent_tensor(str(p)).numpy(), f)


# ------------------------------------------------------------------------------------------- ImageFolder
def _png(path, value, size=(4, 3), mode="RGB"):
    path.parent.mkdir(parents=True, exist_ok=True)
    shape = (size[1], size[0], 3) if mode == "RGB" else (size[1], size[0])
    Image.fromarray(np.full(shape, value, np.uint8)).save(path)


def test_image_folder(tmp_path):
    _png(tmp_path / "dog" / "b.png", 10)
    _png(tmp_path / "dog" / "a.png", 20, mode="L")
    _png(tmp_path / "cat" / "z.PNG", 30)
    _png(tmp_path / "cat" / "nested" / "y.png", 40)
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    ds = datasets.ImageFolder(tmp_path, transform=T.ToTensor())
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    rel = [(os.path.relpath(p, tmp_path), c) for p, c in ds.samples]
    assert rel == [(os.path.join("cat", "z.PNG"), 0), (os.path.join("cat", "nested", "y.png"), 0),
                   (os.path.join("dog", "a.png"), 1), (os.path.join("dog", "b.png"), 1)]
    assert ds.targets == [0, 0, 1, 1] and ds.imgs is ds.samples and len(ds) == 4
    x, y = ds[2]
    assert x.shape == (3, 3, 4) and y == 1  # grayscale converted to RGB by the default loader
    np.testing.assert_allclose(x.numpy(), np.full((3, 3, 4), 20 / np.float32(255)))
    raw = datasets.ImageFolder(tmp_path)
    assert isinstance(raw[0][0], Image.Image) and raw[0][0].mode == "RGB"


def test_image_folder_is_valid_file_and_loader(tmp_path):
    _png(tmp_path / "a" / "keep.png", 1)
    _png(tmp_path / "a" / "skip.png", 2)
    _png(tmp_path / "b" / "keep.png", 3)
    ds = datasets.ImageFolder(tmp_path, is_valid_file=lambda p: "keep" in p, loader=lambda p: os.path.basename(p))
    assert [s for s, _ in ds] == ["keep.png", "keep.png"]
    assert ds.targets == [0, 1]


def test_image_folder_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder in"):
        datasets.ImageFolder(tmp_path)
    (tmp_path / "empty").mkdir()
    _png(tmp_path / "full" / "x.png", 1)
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes empty. Supported extensions are: "
                                                ".jpg, .jpeg, .png"):
        datasets.ImageFolder(tmp_path)
    ds = datasets.ImageFolder(tmp_path, allow_empty=True)
    assert ds.classes == ["empty", "full"] and ds.targets == [1]
    with pytest.raises(ValueError, match="Both extensions and is_valid_file cannot be None or not None"):
        datasets.DatasetFolder(tmp_path, loader=str)
