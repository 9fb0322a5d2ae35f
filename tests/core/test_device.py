"""Device objects: parsing, equality and errors as in PyTorch."""

from __future__ import annotations

import pytest

import toolkit


def test_device_parsing_and_repr():
    assert repr(toolkit.device("cpu")) == "device(type='cpu')"
    d = toolkit.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert toolkit.device("cuda", 0) == toolkit.device("cuda:0")
    assert toolkit.device("cpu") == "cpu"
    assert toolkit.tensor([1.0]).device == toolkit.device("cpu")


def test_bad_device_strings():
    with pytest.raises(RuntimeError, match="Expected one of"):
        toolkit.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        toolkit.device("cuda:x")


def test_cuda_unavailable_without_gpu():
    if toolkit.cuda.is_available():
        pytest.skip("a GPU is present")
    assert toolkit.cuda.device_count() == 0
