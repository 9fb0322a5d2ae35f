"""toolkit.vision.datasets: CIFAR10/CIFAR100 from pickle batches written here in the published format, and
FakeData against torchvision's algorithm (seeded randn and randint per index, on torch's generator)."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import torch
from PIL import Image

import toolkit
from toolkit.vision import datasets
from toolkit.vision import transforms as T


def _write_pickle(path, obj, protocol=2):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


def _write_cifar10(root, n_per_batch=3, protocol=2, seed=0):
    rng = np.random.default_rng(seed)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    batches = {}
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        data = rng.integers(0, 256, (n_per_batch, 3072), dtype=np.uint8)
        labels = [int(v) for v in rng.integers(0, 10, n_per_batch)]
        _write_pickle(folder / name, {"batch_label": f"{name} of 6", "labels": labels, "data": data,
                                      "filenames": [f"img_{i}.png" for i in range(n_per_batch)]}, protocol)
        batches[name] = (data, labels)
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    _write_pickle(folder / "batches.meta", {"num_cases_per_batch": 10000, "label_names": names, "num_vis": 3072},
                  protocol)
    return batches


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_cifar10_reads_batches(tmp_path, protocol):
    batches = _write_cifar10(tmp_path, protocol=protocol)
    train = datasets.CIFAR10(tmp_path)
    test = datasets.CIFAR10(str(tmp_path), train=False, transform=T.ToTensor())
    assert len(train) == 15 and len(test) == 3
    assert train.data.shape == (15, 32, 32, 3) and train.data.dtype == np.uint8
    data, labels = batches["data_batch_2"]
    # torchvision: vstack, reshape(-1, 3, 32, 32), transpose to HWC
    np.testing.assert_array_equal(train.data[3:6], data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    assert train.targets[3:6] == labels and isinstance(train.targets, list)
    img, label = train[4]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (32, 32)
    np.testing.assert_array_equal(np.asarray(img)[:, :, 1], data[1, 1024:2048].reshape(32, 32))
    assert label == labels[1]
    x, y = test[0]
    np.testing.assert_allclose(x.numpy(), batches["test_batch"][0][0].reshape(3, 32, 32) / np.float32(255))
    assert y == batches["test_batch"][1][0]
    assert train.classes[3] == "cat" and train.class_to_idx["truck"] == 9
    assert "Split: Test" in repr(test)


def test_cifar100_reads_fine_labels(tmp_path):
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, (4, 3072), dtype=np.uint8)
    fine, coarse = [5, 99, 0, 42], [1, 19, 0, 7]
    _write_pickle(folder / "train", {"data": data, "fine_labels": fine, "coarse_labels": coarse,
                                     "filenames": ["a", "b", "c", "d"], "batch_label": "training batch 1 of 1"})
    _write_pickle(folder / "test", {"data": data[:2], "fine_labels": fine[:2], "coarse_labels": coarse[:2]})
    _write_pickle(folder / "meta", {"fine_label_names": [f"class{i}" for i in range(100)],
                                    "coarse_label_names": [f"super{i}" for i in range(20)]})
    d = datasets.CIFAR100(tmp_path, download=True)
    assert len(d) == 4 and d.targets == fine and d.classes[99] == "class99"
    assert len(datasets.CIFAR100(tmp_path, train=False)) == 2


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo should-not-run",))


def test_cifar_refuses_arbitrary_globals(tmp_path):
    _write_cifar10(tmp_path)
    _write_pickle(tmp_path / "cifar-10-batches-py" / "data_batch_3", {"data": _Boom(), "labels": []})
    with pytest.raises(pickle.UnpicklingError, match=r"data_batch_3: global 'posix.system' is not allowed"):
        datasets.CIFAR10(tmp_path)


def test_cifar_missing_and_malformed(tmp_path):
    with pytest.raises(RuntimeError, match=r"dataset not found: .*cifar-10-batches-py should hold data_batch_1.*"
                                           r"toolkit does not download"):
        datasets.CIFAR10(tmp_path)
    with pytest.raises(RuntimeError, match="toolkit does not download"):
        datasets.CIFAR10(tmp_path, download=True)
    _write_cifar10(tmp_path)
    assert len(datasets.CIFAR10(tmp_path, download=True)) == 15
    _write_pickle(tmp_path / "cifar-10-batches-py" / "test_batch", {"data": np.zeros((2, 100), np.uint8),
                                                                    "labels": [0, 1]})
    with pytest.raises(RuntimeError, match=r"test_batch: 'data' should be \(N, 3072\)"):
        datasets.CIFAR10(tmp_path, train=False)
    (tmp_path / "cifar-10-batches-py" / "test_batch").write_bytes(b"\x80\x02}q\x00")
    with pytest.raises(RuntimeError, match="test_batch: not a readable dataset pickle"):
        datasets.CIFAR10(tmp_path, train=False)


def _torchvision_fakedata(index, image_size, num_classes, random_offset):
    """torchvision.datasets.FakeData.__getitem__'s draws, then ToPILImage's float -> uint8 conversion."""
    state = torch.get_rng_state()
    torch.manual_seed(index + random_offset)
    img = torch.randn(*image_size)
    target = torch.randint(0, num_classes, size=(1,), dtype=torch.long)[0]
    torch.set_rng_state(state)
    return np.transpose(img.mul(255).byte().numpy(), (1, 2, 0)), target.item()


def test_fake_data_matches_torchvision_and_is_deterministic():
    d = datasets.FakeData(size=5, image_size=(3, 8, 6), num_classes=4, random_offset=11)
    assert len(d) == 5
    toolkit.manual_seed(123)
    before = toolkit.rand(3)
    toolkit.manual_seed(123)
    for i in range(5):
        img, label = d[i]
        expected_img, expected_label = _torchvision_fakedata(i, (3, 8, 6), 4, 11)
        assert isinstance(img, Image.Image) and img.mode == "RGB" and img.size == (6, 8)
        np.testing.assert_array_equal(np.asarray(img), expected_img)
        assert label == expected_label and isinstance(label, int)
    assert toolkit.equal(toolkit.rand(3), before)  # the global generator is untouched
    again = datasets.FakeData(size=5, image_size=(3, 8, 6), num_classes=4, random_offset=11)
    np.testing.assert_array_equal(np.asarray(again[2][0]), np.asarray(d[2][0]))
    with pytest.raises(IndexError, match="FakeData index out of range"):
        d[5]


def test_fake_data_gray_and_transforms():
    d = datasets.FakeData(size=2, image_size=(1, 5, 5), num_classes=3, transform=T.ToTensor(),
                          target_transform=lambda t: t + 10)
    x, y = d[1]
    expected_img, expected_label = _torchvision_fakedata(1, (1, 5, 5), 3, 0)
    assert x.shape == (1, 5, 5)
    np.testing.assert_allclose(x.numpy()[0], expected_img[:, :, 0] / np.float32(255))
    assert y == expected_label + 10
    assert repr(d).startswith("Dataset FakeData\n    Number of datapoints: 2\n")
